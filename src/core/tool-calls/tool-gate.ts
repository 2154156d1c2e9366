/**
 * The one approval decision for a tool call: allow, ask or deny, and why. A chat's tool call
 * (tool-call.ts) is judged here, and so is a call that comes from no chat turn (`patchbay tools
 * check`, a future MCP client calling patchbay's tools), by the same rules in the same order:
 *
 *   1. the agent: `plan` (and a read-only subagent) never runs a tool that changes things;
 *   2. the user's "reject for this chat" is final;
 *   3. the config's `toolCall.approval` rules (approval.ts), with a subagent's own laid over them:
 *      deny is final;
 *   4. a path outside the roots (the containment folders) asks, whatever the rules allow;
 *   5. a protected path (protected-calls.ts) asks every time, whatever the rules allow;
 *   6. what the rules would ask about runs when the user approved the tool for this chat, when
 *      trust mode is on, or when the call runs in the OS sandbox and `sandbox.autoAllow` is on;
 *      a call asking to leave the sandbox (`"sandbox": false`) asks every time, after step 3;
 *   7. preToolCall hooks (hooks/tool-hooks.ts) see that verdict: they may reject, ask, or rewrite
 *      the arguments (which are then judged again, and the stricter verdict of the two stands;
 *      a hook never loosens the rules).
 *
 * `ToolGate.decide` judges a call from no chat turn: before these steps it refuses what a chat is
 * never offered (an unknown tool, one in `disabledTools`), as a chat refuses a call to it.
 *
 * The roots are an input: who calls decides which folders a call is contained in (a chat's own
 * folders, the workspace's).
 */
import type { ApprovalConfig } from '../../config/schema.js';
import type { Agent } from '../../shapes/agent.js';
import type { SandboxPlan } from '../../util/sandbox.js';
import type { Tool } from '../../shapes/tool.js';
import { llmName } from '../../shapes/tool-names.js';
import { isInsideWorkspace, resolvePath } from '../../util/paths.js';
import { explainApproval } from './approval.js';
import type { ApprovalAnswer } from './approvals.js';
import type { RejectReason } from '../events.js';
import type { HookStop } from '../hooks/effects.js';
import type { Hooks } from '../hooks/hooks.js';
import { preToolCall, type ToolHooksEnv } from '../hooks/tool-hooks.js';
import { toolRoots } from './inside-workspace.js';
import { protectedTarget } from './protected-calls.js';
import { subagentApproval, type SubagentDef } from '../subagents/definitions.js';

/** The user's "for this chat" answers, each kept under the tool's LLM name (`<server>__<tool>`). */
export interface SessionAnswers {
  /** Approved for the rest of the chat: what would ask runs. */
  approved: Set<string>;
  /** Rejected for the rest of the chat: refused without asking, whatever else allows it. */
  rejected?: Set<string>;
}

/** What a call is judged with. */
export interface GateContext {
  /** The folders the call is contained in (already with `insideWorkspace` and a tool's own folders). */
  roots: string[];
  /** Where relative paths resolve; the first root when not given. */
  cwd?: string;
  /** `code` when not given. */
  agent?: Agent;
  /** The rules: the config's `toolCall.approval`, with a subagent's own laid over them. */
  approval: ApprovalConfig;
  /** Trust mode; a function is read at each decision (a change applies to the calls still to come). */
  trust?: boolean | (() => boolean);
  session?: SessionAnswers;
  /** The name session answers are kept under: the call's LLM name (`<server>__<tool>` when not given). */
  key?: string;
  /** preToolCall hooks and the chat they run for; none run without. */
  hooks?: ToolHooksEnv;
  toolCallId?: string;
  signal?: AbortSignal;
  /** Where patchbay's own folders are (protected paths); the process's when not given. */
  env?: NodeJS.ProcessEnv;
  /** Whether the call's commands run in the OS sandbox (a `sandboxed` tool's); unset: they do not. */
  sandbox?: () => Promise<SandboxPlan>;
}

export type GateVerdict = ({ kind: 'allow' | 'ask' } | { kind: 'deny'; /** What the LLM reads. */ why: string; rejectReason: Extract<RejectReason, 'denied' | 'hook'> }) & {
  /** Why, for a person (`patchbay tools check`). */
  reason: string;
  /** The arguments the call runs with (a preToolCall hook may have rewritten them). */
  args: Record<string, unknown>;
  /** A path the call touches is outside the roots, or could not be resolved (it then asks). */
  outside: boolean;
  /** Why the call asks every time (a protected path), when it does. */
  protected?: string;
  /** A preToolCall hook's `continue: false`: the turn ends after this call. */
  stop?: HookStop;
};

/** The verdict on one call: the rules, then the preToolCall hooks (see the top of this file). */
export async function gateCall(tool: Tool, args: Record<string, unknown>, ctx: GateContext): Promise<GateVerdict> {
  const first = await judge(tool, args, ctx);
  const signal = ctx.signal ?? new AbortController().signal;
  const v = await preToolCall(ctx.hooks, tool, ctx.toolCallId ?? 'tool-gate', args, first.kind, signal);
  if (!v) return first;
  const stop = v.stop ? { stop: v.stop } : {};
  if (v.deny !== undefined) {
    return { ...first, kind: 'deny', why: v.deny, rejectReason: 'hook', reason: `a preToolCall hook rejected it: ${v.deny}`, args: v.args ?? args, ...stop };
  }
  let verdict = first;
  if (v.args) {
    // ECA judges only the model's arguments; here the rewritten ones are judged too, so a hook's
    // rewrite never runs unasked what the rules would ask about or deny. What the new arguments
    // touch (outside, protected) is what the call runs with.
    const again = await judge(tool, v.args, ctx);
    const kept = severity[again.kind] > severity[first.kind] ? again : first;
    verdict = { ...kept, args: v.args, outside: again.outside, protected: again.protected };
  }
  if (v.ask && verdict.kind === 'allow') verdict = { ...verdict, kind: 'ask', reason: `a preToolCall hook asks (${verdict.reason})` };
  return { ...verdict, ...stop };
}

const severity = { allow: 0, ask: 1, deny: 2 } as const;

/** The rules alone, without hooks (steps 1–6 at the top of this file). */
export async function judge(tool: Tool, args: Record<string, unknown>, ctx: GateContext): Promise<GateVerdict> {
  const key = ctx.key ?? llmName(tool);
  const base = { args, outside: false };
  const deny = (why: string, reason: string): GateVerdict => ({ ...base, kind: 'deny', why, rejectReason: 'denied', reason });
  if ((ctx.agent ?? 'code') === 'plan' && (tool.mutates || tool.mutatesCall?.(args))) {
    return deny(`The plan agent cannot run "${tool.name}": it only reads and plans. Describe the change instead.`, 'the plan agent only reads, and this call changes things');
  }
  if (ctx.session?.rejected?.has(key)) {
    return deny(
      `The user rejected "${tool.name}" for the rest of this chat; it did not run. Do not call it again: continue without it, or ask the user what they want instead.`,
      'the user rejected it for the rest of this chat',
    );
  }
  const rules = explainApproval(tool, args, ctx.approval);
  if (rules.decision === 'deny') return deny(`Running "${tool.name}" is denied by the user's configuration.`, rules.because);
  const plan = tool.sandboxed && ctx.sandbox ? await ctx.sandbox() : undefined;
  // Out of the sandbox only with the user's say, each time: neither rules, trust nor a session approval cover it.
  if (plan && plan.kind !== 'off' && args.sandbox === false) {
    const why = 'it asks to run outside the OS sandbox ("sandbox": false)';
    return { ...base, kind: 'ask', protected: why, reason: `it asks every time: ${why}` };
  }
  const outside = await outsidePath(tool, args, ctx.roots, ctx.cwd);
  if (outside !== undefined) {
    return { ...base, kind: 'ask', outside: true, reason: outside === '' ? 'its paths could not be resolved, so it asks' : `"${outside}" is outside the workspace folders, so it asks every time` };
  }
  // Otherwise the model could widen its own approvals. Neither the rules nor a session approval cover it.
  const why = await protectedTarget(tool, args, ctx.roots, ctx.env, ctx.cwd).catch(() => 'its paths could not be checked');
  if (why) return { ...base, kind: 'ask', protected: why, reason: `it asks every time: ${why}` };
  if (rules.decision === 'ask' && ctx.session?.approved.has(key)) return { ...base, kind: 'allow', reason: `the user approved it for the rest of this chat (else: ${rules.because})` };
  const trusted = typeof ctx.trust === 'function' ? ctx.trust() : ctx.trust;
  if (rules.decision === 'ask' && trusted) return { ...base, kind: 'allow', reason: `trust mode runs it (else it would ask: ${rules.because})` };
  if (rules.decision === 'ask' && plan?.kind === 'sandboxed' && plan.autoAllow)
    return { ...base, kind: 'allow', reason: `it runs in the OS sandbox (sandbox.autoAllow; else it would ask: ${rules.because})` };
  return { ...base, kind: rules.decision, reason: rules.because };
}

/** True when a path the call touches resolves outside `roots`, or cannot be resolved. */
export async function touchesOutside(tool: Tool, args: Record<string, unknown>, roots: string[], cwd?: string): Promise<boolean> {
  return (await outsidePath(tool, args, roots, cwd)) !== undefined;
}

/** The first path the call touches outside `roots` (`''`: its paths could not be resolved), or undefined. */
async function outsidePath(tool: Tool, args: Record<string, unknown>, roots: string[], cwd?: string): Promise<string | undefined> {
  if (!tool.paths) return undefined;
  try {
    for (const raw of tool.paths(args)) {
      if (typeof raw !== 'string' || !raw) continue;
      if (!(await isInsideWorkspace(resolvePath(raw, cwd !== undefined ? [cwd] : roots), roots))) return raw;
    }
    return undefined;
  } catch {
    return '';
  }
}

/**
 * Keeps a "for this chat" answer: an approval lets later calls of the tool run unasked; the user's
 * own "reject always" refuses them (and undoes an approval given before).
 */
export function rememberAnswer(session: SessionAnswers, key: string, answer: ApprovalAnswer): void {
  if (!answer.saveForSession) return;
  if (answer.approved) {
    session.approved.add(key);
  } else if (answer.reason === 'user') {
    session.rejected?.add(key);
    session.approved.delete(key);
  }
}

/** What a workspace lends the gate to judge a call that comes from no chat turn. */
export interface GateSource {
  /** A tool by its LLM name (`<server>__<tool>`). */
  tool(name: string): Tool | undefined;
  /** The config's `toolCall.approval`, read at each decision. */
  approval(): ApprovalConfig;
  /** `disabledTools`: names (bare or `<server>__<tool>`) a chat is never offered, so a call to one is refused. */
  disabled?(): readonly string[];
  /** The subagents, for a request naming one as its agent. */
  subagents?(): readonly SubagentDef[];
  /** Folders a tool may use as if inside the workspace (durable memory's), after the roots. */
  toolFolders?(tool: Tool): string[];
  hooks?: Hooks;
  /** The home folder `~` means in `insideWorkspace`. */
  homeDir?: string;
  env?: NodeJS.ProcessEnv;
  /** How commands of these folders run (the OS sandbox, runtime/sandbox.ts). */
  sandbox?(roots: readonly string[]): Promise<SandboxPlan>;
}

/** A call from outside any chat turn. */
export interface GateRequest {
  /** The tool's name: `<server>__<tool>`, or a native tool's bare name (`shell_command`). */
  tool: string;
  /** The tool's server, when `tool` is a bare name; `patchbay` (the native tools) when neither says. */
  server?: string;
  args: Record<string, unknown>;
  /** The workspace folders the call is contained in; `insideWorkspace` and a tool's own folders are added. */
  roots: string[];
  cwd?: string;
  /** `code`, `plan`, or a subagent's name (its rules, and `plan` when it only reads). */
  agent?: string;
  trust?: boolean;
  session?: SessionAnswers;
  /** The chat the hooks are told about; the call is outside any chat when not given. */
  chatId?: string;
  toolCallId?: string;
  signal?: AbortSignal;
}

/** A verdict for a request, or why it could not be judged (an unknown tool or agent: denied). */
export class ToolGate {
  constructor(private readonly source: GateSource) {}

  async decide(req: GateRequest): Promise<GateVerdict & { tool?: Tool }> {
    const name = req.tool.includes('__') ? req.tool : `${req.server ?? 'patchbay'}__${req.tool}`;
    const tool = this.source.tool(name);
    const args = req.args;
    const refuse = (why: string) => ({ kind: 'deny' as const, why, rejectReason: 'denied' as const, reason: why, args, outside: false });
    if (!tool) return refuse(`Unknown tool "${name}".`);
    const disabled = this.source.disabled?.() ?? [];
    if (disabled.includes(tool.name) || disabled.includes(name)) return { ...refuse(`"${name}" is disabled (disabledTools): a chat is not offered it, and a call to it is refused.`), tool };
    const agent = this.agent(req.agent);
    if (typeof agent === 'string') return { ...refuse(agent), tool };
    const config = this.source.approval();
    const roots = [...toolRoots(req.roots, config.insideWorkspace, this.source.homeDir), ...(this.source.toolFolders?.(tool) ?? [])];
    const hooks = this.source.hooks;
    const verdict = await gateCall(tool, args, {
      roots,
      ...(req.cwd !== undefined ? { cwd: req.cwd } : {}),
      agent: agent.agent,
      approval: subagentApproval(config, agent.def),
      ...(req.trust !== undefined ? { trust: req.trust } : {}),
      ...(req.session ? { session: req.session } : {}),
      ...(hooks ? { hooks: { hooks, chat: { chatId: req.chatId ?? 'tool-gate', agent: agent.def?.name ?? agent.agent } } } : {}),
      ...(req.toolCallId !== undefined ? { toolCallId: req.toolCallId } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      ...(this.source.env ? { env: this.source.env } : {}),
      ...(this.source.sandbox ? { sandbox: () => this.source.sandbox!(req.roots) } : {}),
    });
    return { ...verdict, tool };
  }

  /** The primary agent and subagent definition a request names, or why it names none. */
  private agent(name: string | undefined): { agent: Agent; def?: SubagentDef } | string {
    if (name === undefined || name === 'code' || name === 'plan') return { agent: name ?? 'code' };
    const def = this.source.subagents?.().find((d) => d.name === name);
    if (!def) return `Unknown agent "${name}": use code, plan or a subagent's name.`;
    return { agent: def.readOnly ? 'plan' : 'code', def };
  }
}

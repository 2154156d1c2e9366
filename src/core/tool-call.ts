/**
 * One tool call's life, as an explicit state machine:
 *
 *   preparing ─► deciding ─► waitingApproval ─► running ─► called
 *                   │               │
 *                   └──────────────►┴─────────► rejected
 *
 * Every transition is checked, persisted and shown to the editor. A failing tool is a
 * result the LLM reads (`error: true`); nothing here throws past `run()`.
 */
import type { ApprovalConfig } from '../config/schema.js';
import type { RejectReason } from '../protocol/eca/content.js';
import { decideApproval } from './approval.js';
import type { ChatEvents } from './events.js';
import type { StoredMessage } from './messages.js';
import type { ChatPersistence, ToolCallRecord } from './persistence.js';
import type { FileChangeDetails, Tool, ToolContext, ToolResult } from '../shapes/tool.js';
import { isInsideWorkspace, resolvePath } from '../util/paths.js';
import { protectedTarget } from './protected-calls.js';
import { protectedPath } from './protected-paths.js';
import { errorMessage, logger } from '../util/log.js';

const log = logger('tool-call');

export type ToolCallState =
  | { kind: 'preparing' }
  | { kind: 'deciding' }
  | { kind: 'waitingApproval' }
  | { kind: 'running'; startedAt: number }
  | { kind: 'called'; result: ToolResult; totalTimeMs: number }
  | { kind: 'rejected'; reason: RejectReason; why: string };

const allowed: Record<ToolCallState['kind'], ToolCallState['kind'][]> = {
  preparing: ['deciding', 'rejected'],
  deciding: ['waitingApproval', 'running', 'rejected'],
  waitingApproval: ['running', 'rejected'],
  running: ['called'],
  called: [],
  rejected: [],
};

export type ApprovalAnswer = { approved: true; saveForSession?: boolean } | { approved: false; reason: RejectReason };

export interface ToolCallEnv {
  chatId: string;
  agent: 'code' | 'plan';
  approval: ApprovalConfig;
  /** Tools (LLM names) the user approved for the rest of this chat. */
  sessionApproved: Set<string>;
  store: ChatPersistence;
  events: ChatEvents;
  /**
   * Commits the call's tool message to the chat (memory and store), with its final state row in
   * the same transaction. Called before the editor
   * hears the outcome, so what the editor showed survives the process being killed right after.
   */
  remember(message: StoredMessage, toolCall?: ToolCallRecord): void;
  ctx: ToolContext;
  /** Resolves when the user answers; settled with `userPromptStop` when the turn is stopped. */
  askUser(toolCallId: string): Promise<ApprovalAnswer>;
}

export class ToolCall {
  state: ToolCallState = { kind: 'preparing' };
  private details: FileChangeDetails | undefined;
  /** Why this call asks whatever the config says (a protected path), shown in its summary. */
  private mustAsk: string | undefined;
  /** Set when approval found a path outside the workspace (the user is then asked about it). */
  private judgedOutside = false;

  constructor(
    readonly id: string,
    readonly llmName: string,
    readonly tool: Tool | undefined,
    readonly args: Record<string, unknown>,
    private readonly env: ToolCallEnv,
  ) {}

  private transition(next: ToolCallState, persist = true): void {
    if (!allowed[this.state.kind].includes(next.kind)) throw new Error(`tool call ${this.id}: illegal ${this.state.kind} → ${next.kind}`);
    this.state = next;
    if (persist) this.persist();
  }

  private persist(): void {
    const rec = this.record();
    if (rec) this.env.store.saveToolCall(rec);
  }

  /** The stored row for the current state (none for a call to an unknown tool). */
  private record(): ToolCallRecord | undefined {
    const next = this.state;
    if (!this.tool) return undefined;
    return {
      chatId: this.env.chatId,
      id: this.id,
      name: this.tool.name,
      server: this.tool.server,
      args: this.args,
      state: next.kind === 'deciding' ? 'preparing' : next.kind,
      error: next.kind === 'called' ? next.result.error : undefined,
    };
  }

  private base() {
    const t = this.tool;
    return {
      origin: t?.origin ?? 'native',
      id: this.id,
      name: t?.name ?? this.llmName,
      server: t?.server ?? 'unknown',
      arguments: this.args,
      ...(t?.summary || this.mustAsk ? { summary: this.summary() } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }

  /** Runs the call to its end and returns the message the LLM will read. */
  async run(): Promise<StoredMessage> {
    const { events, chatId } = this.env;
    const tool = this.tool;
    if (!tool) {
      this.transition({ kind: 'rejected', reason: 'userConfigDeny', why: `Unknown tool "${this.llmName}". Use one of the tools you were given.` }, false);
      return this.finish();
    }
    // Not stored: deciding lasts microseconds; the row is written once the call waits or runs.
    this.transition({ kind: 'deciding' }, false);
    const decision = await this.decide(tool);
    if (decision.kind === 'deny') {
      this.transition({ kind: 'rejected', reason: 'userConfigDeny', why: decision.why }, false);
      return this.finish();
    }
    if (tool.preview && !this.env.ctx.signal.aborted) {
      this.details = await tool.preview(this.args, this.env.ctx).catch(() => undefined);
    }
    const announced = { type: 'toolCallRun' as const, ...this.base(), manualApproval: decision.kind === 'ask' };
    if (decision.kind === 'ask') {
      events.content(chatId, 'assistant', announced);
      this.transition({ kind: 'waitingApproval' });
      const answer = await this.env.askUser(this.id);
      if (!answer.approved) {
        this.transition({ kind: 'rejected', reason: answer.reason, why: rejectionText(answer.reason) }, false);
        return this.finish();
      }
      if (answer.saveForSession) this.env.sessionApproved.add(this.llmName);
    }
    if (this.env.ctx.signal.aborted) {
      if (decision.kind !== 'ask') events.content(chatId, 'assistant', announced);
      this.transition({ kind: 'rejected', reason: 'userPromptStop', why: rejectionText('userPromptStop') }, false);
      return this.finish();
    }
    const startedAt = Date.now();
    this.transition({ kind: 'running', startedAt });
    // A call that needs no approval is announced and started in one write to the editor.
    const start = () => {
      if (decision.kind !== 'ask') events.content(chatId, 'assistant', announced);
      events.content(chatId, 'assistant', { type: 'toolCallRunning', ...this.base() });
    };
    if (events.together) events.together(start);
    else start();
    // Unless the user was asked about, and approved, paths outside the workspace, the tool
    // checks that what it really opens is inside (a symlink may have flipped since approval).
    const confined = !(decision.kind === 'ask' && this.judgedOutside);
    // Judged not protected: a write that really lands on a protected path (a symlink changed
    // since) is refused. Asked about one and approved: the user said yes to it.
    const roots = this.env.ctx.roots;
    const guardProtected = this.mustAsk ? undefined : (real: string) => protectedPath(real, roots);
    const ctx: ToolContext = { ...this.env.ctx, confined, guardProtected };
    let result: ToolResult;
    try {
      result = await tool.call(this.args, ctx);
    } catch (e) {
      log.warn(`tool ${this.llmName} threw: ${errorMessage(e)}`);
      result = { error: true, outputs: [{ type: 'text', text: `Tool failed: ${errorMessage(e)}` }] };
    }
    if (result.details) this.details = result.details;
    this.transition({ kind: 'called', result, totalTimeMs: Date.now() - startedAt }, false);
    return this.finish();
  }

  private async decide(tool: Tool): Promise<{ kind: 'allow' | 'ask' } | { kind: 'deny'; why: string }> {
    const { agent, approval, sessionApproved, ctx } = this.env;
    if (agent === 'plan' && tool.mutates) {
      return { kind: 'deny', why: `The plan agent cannot run "${tool.name}": it only reads and plans. Describe the change instead.` };
    }
    const decision = decideApproval(tool, this.args, approval);
    if (decision === 'deny') return { kind: 'deny', why: `Running "${tool.name}" is denied by the user's configuration.` };
    // Outside the workspace always asks: neither config nor a session approval covers it.
    if (await this.touchesOutside(tool, ctx.roots)) return { kind: 'ask' };
    // Protected paths (patchbay's and other tools' config, git hooks) always ask: otherwise
    // the model could widen its own approvals. Neither config nor a session approval covers it.
    this.mustAsk = await protectedTarget(tool, this.args, ctx.roots).catch(() => 'its paths could not be checked');
    if (this.mustAsk) return { kind: 'ask' };
    if (decision === 'ask' && sessionApproved.has(this.llmName)) return { kind: 'allow' };
    return { kind: decision };
  }

  private summary(): string | undefined {
    const t = this.tool;
    const base = t?.summary ? safe(() => t.summary!(this.args)) : undefined;
    if (!this.mustAsk) return base;
    return `${base ?? this.llmName} — asks every time: ${this.mustAsk}`;
  }

  /**
   * True when any path the call touches resolves outside the workspace (or cannot be resolved).
   * Remembered: only a call judged outside when the user was asked runs unconfined.
   */
  private async touchesOutside(tool: Tool, roots: string[]): Promise<boolean> {
    if (!tool.paths) return false;
    try {
      for (const raw of tool.paths(this.args)) {
        if (typeof raw !== 'string' || !raw) continue;
        if (!(await isInsideWorkspace(resolvePath(raw, roots), roots))) return (this.judgedOutside = true);
      }
      return false;
    } catch {
      return (this.judgedOutside = true);
    }
  }

  /** Commits the outcome (the tool message and the final state row, in one transaction), then tells the editor. */
  private finish(): StoredMessage {
    const { events, chatId } = this.env;
    const s = this.state;
    const base = this.base();
    if (s.kind !== 'called' && s.kind !== 'rejected') throw new Error(`tool call ${this.id} finished in state ${s.kind}`);
    const stored = { role: 'tool' as const, toolCallId: this.id, name: base.name, server: base.server, origin: base.origin, args: this.args };
    if (s.kind === 'called') {
      const { error, outputs } = s.result;
      const message: StoredMessage = { ...stored, outcome: 'called', error, outputs, llmText: llmText(s.result), details: this.details, totalTimeMs: s.totalTimeMs };
      this.env.remember(message, this.record());
      events.content(chatId, 'assistant', { type: 'toolCalled', ...base, error, outputs, totalTimeMs: s.totalTimeMs });
      return message;
    }
    const message: StoredMessage = { ...stored, outcome: 'rejected', error: true, outputs: [], llmText: s.why, reason: s.reason, totalTimeMs: 0 };
    this.env.remember(message, this.record());
    events.content(chatId, 'assistant', { type: 'toolCallRejected', ...base, reason: s.reason });
    return message;
  }
}

function rejectionText(reason: RejectReason): string {
  return reason === 'userPromptStop'
    ? 'The user stopped the prompt; this tool call did not run.'
    : 'The user rejected this tool call; it did not run. Ask what they want instead, or continue without it.';
}

function llmText(r: ToolResult): string {
  const text = r.outputs.map((o) => (o.type === 'text' ? o.text : `[${o.type} ${o.mimeType}, ${o.data.length} base64 chars]`)).join('\n');
  return text || (r.error ? 'The tool failed without output.' : 'The tool succeeded without output.');
}

function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/**
 * One tool call's life, as an explicit state machine:
 *
 *   preparing ─► deciding ─► waitingApproval ─► running ─► called
 *                   │               │              │          ▲
 *                   └──────────────►┴─► rejected   └► stopping┘
 *
 * `stopping`: the turn was stopped and the tool ignored its abort signal for STOP_GRACE_MS. The
 * turn goes on without it (a placeholder result is stored so the history stays valid); when the
 * tool does return, its result replaces the placeholder and nothing else happens.
 *
 * Every transition is checked, persisted and shown to the editor. A failing tool is a
 * result the LLM reads (`error: true`); nothing here throws past `run()`.
 */
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ApprovalConfig } from '../../config/schema.js';
import type { ApprovalAnswer } from './approvals.js';
import type { ChatEvents, RejectReason, ToolCallEvent } from '../events.js';
import type { StoredMessage } from '../chat/messages.js';
import type { ChatPersistence, ToolCallRecord } from '../persistence.js';
import type { FileCheckpoint, Tool, ToolContext, ToolDetails, ToolResult } from '../../shapes/tool.js';
import { protectedPath } from './protected-paths.js';
import { gateCall, rememberAnswer, touchesOutside } from './tool-gate.js';
import { checkToolImages } from './tool-images.js';
import { errorMessage, logger } from '../../util/log.js';
import type { Agent } from '../../shapes/agent.js';
import type { HookStop } from '../hooks/effects.js';
import { postToolCall, type ToolHooksEnv } from '../hooks/tool-hooks.js';

const log = logger('tool-call');
/** How long a stopped turn waits for a tool that ignores its abort signal before going on without it. */
export const STOP_GRACE_MS = 2_000;

export type ToolCallState =
  | { kind: 'preparing' }
  | { kind: 'deciding' }
  | { kind: 'waitingApproval' }
  | { kind: 'running'; startedAt: number }
  | { kind: 'stopping'; startedAt: number }
  | { kind: 'called'; result: ToolResult; totalTimeMs: number }
  | { kind: 'rejected'; reason: RejectReason; why: string };

const allowed: Record<ToolCallState['kind'], ToolCallState['kind'][]> = {
  preparing: ['deciding', 'rejected'],
  deciding: ['waitingApproval', 'running', 'rejected'],
  waitingApproval: ['running', 'rejected'],
  running: ['called', 'stopping'],
  stopping: ['called'],
  called: [],
  rejected: [],
};

export type { ApprovalAnswer };

export interface ToolCallEnv {
  chatId: string;
  agent: Agent;
  approval: ApprovalConfig;
  /** Tools (LLM names) the user approved for the rest of this chat. */
  sessionApproved: Set<string>;
  /** Tools (LLM names) the user rejected for the rest of this chat: refused without asking. */
  sessionRejected?: Set<string>;
  store: ChatPersistence;
  events: ChatEvents;
  /**
   * Commits the call's tool message to the chat (memory and store), with its final state row in
   * the same transaction. Called before the editor
   * hears the outcome, so what the editor showed survives the process being killed right after.
   * May return how to replace that message later (a stopped tool's late result replaces its placeholder).
   */
  remember(message: StoredMessage, toolCall?: ToolCallRecord): ((message: StoredMessage, toolCall?: ToolCallRecord) => void) | void;
  ctx: ToolContext;
  /** The position of the stored assistant message that asked for this call (its checkpoints name it). */
  messageSeq: number;
  /** Resolves when the user answers; settled with `stopped` when the turn is stopped. */
  askUser(toolCallId: string): Promise<ApprovalAnswer>;
  /** Trust mode, read at each decision (a change applies to the calls still to come in this turn). */
  trusted?: () => boolean;
  /** The front end shows a change's diff before approval: compute it (the tool's `preview`). */
  showDiffs?: boolean;
  /** Overrides STOP_GRACE_MS (tests). */
  stopGraceMs?: number;
  /**
   * The workspace folders of now (they change while a call waits for approval): read when the
   * call starts running; `ctx.roots` are those of when it was made.
   */
  roots?: () => string[];
  /** preToolCall / postToolCall hooks (core/hooks/), run for this chat. */
  hooks?: ToolHooksEnv;
}

export class ToolCall {
  /** A hook's `continue: false`: the turn ends after this call (../turn/turn.ts). */
  hookStop: HookStop | undefined;
  state: ToolCallState = { kind: 'preparing' };
  private details: ToolDetails | undefined;
  /** Why this call asks whatever the config says (a protected path), shown in its summary. */
  private mustAsk: string | undefined;
  /** Set when approval found a path outside the workspace (the user is then asked about it). */
  private judgedOutside = false;

  constructor(
    readonly id: string,
    readonly llmName: string,
    readonly tool: Tool | undefined,
    /** Replaced (not changed in place) when a preToolCall hook updates the input. */
    public args: Record<string, unknown>,
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
      state: next.kind === 'deciding' ? 'preparing' : next.kind === 'stopping' ? 'running' : next.kind,
      error: next.kind === 'called' ? next.result.error : undefined,
    };
  }

  private base() {
    const t = this.tool;
    const summary = t?.summary || this.mustAsk ? this.summary() : undefined;
    return {
      type: 'toolCall' as const,
      origin: t?.origin ?? 'native',
      id: this.id,
      name: t?.name ?? this.llmName,
      server: t?.server ?? 'unknown',
      arguments: this.args,
      ...(summary !== undefined ? { summary } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }

  private emit(e: ToolCallEvent): void {
    this.env.events.event(this.env.chatId, e);
  }

  /** Runs the call to its end and returns the message the LLM will read. */
  async run(): Promise<StoredMessage> {
    const { events } = this.env;
    const tool = this.tool;
    if (!tool) {
      this.transition({ kind: 'rejected', reason: 'denied', why: `Unknown tool "${this.llmName}". Use one of the tools you were given.` }, false);
      return this.finish().message;
    }
    // Not stored: deciding lasts microseconds; the row is written once the call waits or runs.
    this.transition({ kind: 'deciding' }, false);
    let decision = await this.decide(tool);
    if (decision.kind === 'deny') {
      this.transition({ kind: 'rejected', reason: decision.reason ?? 'denied', why: decision.why }, false);
      return this.finish().message;
    }
    if (tool.detailsBefore) this.details = safe(() => tool.detailsBefore!(this.args, { chatId: this.env.chatId, toolCallId: this.id }));
    if (tool.preview && this.env.showDiffs !== false && !this.env.ctx.signal.aborted) {
      // With the call's id: a preview may ask the editor for the file's text (its unsaved buffer).
      this.details = await tool.preview(this.args, { ...this.env.ctx, toolCallId: this.id }).catch(() => undefined);
    }
    let announced: ToolCallEvent = { ...this.base(), state: 'announced', needsApproval: decision.kind === 'ask' };
    if (decision.kind === 'ask') {
      const answer = await this.ask(announced, false);
      if (answer) return answer;
    }
    // A folder may have been removed while the call waited: its paths are judged again with the
    // folders of now, and a call now outside them is asked about (again, if it was asked before).
    const roots = this.env.roots?.() ?? this.env.ctx.roots;
    if (!sameRoots(roots, this.env.ctx.roots) && !this.judgedOutside && !this.env.ctx.signal.aborted && (await this.touchesOutside(tool, roots))) {
      const asked = decision.kind === 'ask';
      decision = { kind: 'ask' };
      announced = { ...this.base(), state: 'announced', needsApproval: true };
      const answer = await this.ask(announced, asked);
      if (answer) return answer;
    }
    if (this.env.ctx.signal.aborted) {
      if (decision.kind !== 'ask') this.emit(announced);
      this.transition({ kind: 'rejected', reason: 'stopped', why: rejectionText('stopped') }, false);
      return this.finish().message;
    }
    const startedAt = Date.now();
    this.transition({ kind: 'running', startedAt });
    // A call that needs no approval is announced and started in one write to the editor.
    const start = () => {
      if (decision.kind !== 'ask') this.emit(announced);
      this.emit({ ...this.base(), state: 'running' });
    };
    if (events.together) events.together(start);
    else start();
    // Unless the user was asked about, and approved, paths outside the workspace, the tool
    // checks that what it really opens is inside (a symlink may have flipped since approval).
    const confined = !(decision.kind === 'ask' && this.judgedOutside);
    // Judged not protected: a write that really lands on a protected path (a symlink changed
    // since) is refused. Asked about one and approved: the user said yes to it.
    const guardProtected = this.mustAsk ? undefined : (real: string) => protectedPath(real, roots);
    const setDetails = (d: ToolDetails) => {
      // Only while it runs: a late report after the call ended would reopen it in the editor.
      if (this.state.kind !== 'running') return;
      this.details = d;
      this.emit({ ...this.base(), state: 'running' });
    };
    const ctx: ToolContext = { ...this.env.ctx, roots, toolCallId: this.id, confined, guardProtected, recordChange: (c) => this.recordChange(c), setDetails };
    const call = (async (): Promise<ToolResult> => {
      try {
        return checkToolImages(await tool.call(this.args, ctx));
      } catch (e) {
        log.warn(`tool ${this.llmName} threw: ${errorMessage(e)}`);
        return { error: true, outputs: [{ type: 'text', text: `Tool failed: ${errorMessage(e)}` }] };
      }
    })();
    const result = await outlast(call, ctx.signal, this.env.stopGraceMs ?? STOP_GRACE_MS);
    if (result === 'stopping') {
      this.transition({ kind: 'stopping', startedAt }, false);
      const message = this.finish();
      // The late result lands after the turn ended: the chat may be gone or the store closed
      // (shutdown) by then, which is logged, never an unhandled rejection.
      // postToolCall hooks see it first: a redaction must apply to a late result too (the next
      // prompt sends what is stored); a hook's stop has no turn left to end.
      void call
        .then((late) => this.postHooks(tool, late))
        .then((late) => this.called(late, startedAt, message))
        .catch((e: unknown) => log.warn(`tool ${this.llmName}: its late result could not be kept: ${errorMessage(e)}`));
      return message.message;
    }
    return this.called(await this.postHooks(tool, result), startedAt).message;
  }

  /** postToolCall (core/hooks/tool-hooks.ts): the result replaced or added to, or the turn stopped. */
  private async postHooks(tool: Tool, result: ToolResult): Promise<ToolResult> {
    const after = await postToolCall(this.env.hooks, tool, this.id, this.args, result);
    this.hookStop ??= after.stop;
    return after.result;
  }

  /**
   * Asks the user (`again`: the call already waits in `waitingApproval`); the rejected call's
   * message when the answer is no, undefined when approved.
   */
  private async ask(announced: ToolCallEvent, again: boolean): Promise<StoredMessage | undefined> {
    // Asked before it is announced: an answer given while the announcement is handled counts.
    const asked = this.env.askUser(this.id);
    this.emit(announced);
    if (!again) this.transition({ kind: 'waitingApproval' });
    const answer = await asked;
    if (!answer.approved) {
      rememberAnswer(this.session(), this.llmName, answer);
      this.transition({ kind: 'rejected', reason: answer.reason, why: rejectionText(answer.reason) }, false);
      return this.finish().message;
    }
    rememberAnswer(this.session(), this.llmName, answer);
    return undefined;
  }

  /** A file change the tool made, kept for `chat/rollback`; the change stands even when it cannot be kept. */
  private recordChange(change: FileCheckpoint): void {
    try {
      this.env.store.addFileCheckpoint(this.env.chatId, { id: this.id, messageSeq: this.env.messageSeq }, { ...change, folder: realFolder(change.path) });
    } catch (e) {
      log.warn(`tool ${this.llmName}: the checkpoint of ${change.path} could not be stored: ${errorMessage(e)}`);
    }
  }

  /**
   * The tool returned: committed and told. After a stop it replaces the placeholder `finish`
   * stored for it (`stopped`), and nothing else runs.
   */
  private called(result: ToolResult, startedAt: number, stopped?: Finished): Finished {
    if (result.details) this.details = result.details;
    this.transition({ kind: 'called', result, totalTimeMs: Date.now() - startedAt }, false);
    if (!stopped) return this.finish();
    const message = this.calledMessage();
    if (stopped.replace) stopped.replace(message, this.record());
    else this.persist();
    this.emit(this.doneEvent());
    return { message };
  }

  /** The one approval decision (tool-gate.ts): the rules, containment, protected paths, session answers, trust mode, preToolCall hooks. */
  private async decide(tool: Tool): Promise<Decision> {
    const { agent, approval, ctx, trusted, hooks } = this.env;
    const v = await gateCall(tool, this.args, {
      roots: ctx.roots,
      agent,
      approval,
      session: this.session(),
      key: this.llmName,
      ...(trusted ? { trust: trusted } : {}),
      ...(hooks ? { hooks } : {}),
      toolCallId: this.id,
      signal: ctx.signal,
      ...(ctx.sandbox ? { sandbox: ctx.sandbox } : {}),
    });
    if (v.args !== this.args) this.args = v.args;
    if (v.stop) this.hookStop = v.stop;
    this.mustAsk = v.protected;
    this.judgedOutside = v.outside;
    return v.kind === 'deny' ? { kind: 'deny', why: v.why, reason: v.rejectReason } : { kind: v.kind };
  }

  private session() {
    return { approved: this.env.sessionApproved, ...(this.env.sessionRejected ? { rejected: this.env.sessionRejected } : {}) };
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
    return (await touchesOutside(tool, this.args, roots)) && (this.judgedOutside = true);
  }

  private stored() {
    const base = this.base();
    return { role: 'tool' as const, toolCallId: this.id, name: base.name, server: base.server, origin: base.origin, args: this.args, ...(base.summary !== undefined ? { summary: base.summary } : {}) };
  }

  private calledMessage(): StoredMessage {
    const s = this.state;
    if (s.kind !== 'called') throw new Error(`tool call ${this.id} is ${s.kind}, not called`);
    const { error, outputs } = s.result;
    return { ...this.stored(), outcome: 'called', error, outputs, llmText: llmText(s.result), details: this.details, totalTimeMs: s.totalTimeMs };
  }

  private doneEvent(): ToolCallEvent {
    const s = this.state;
    if (s.kind !== 'called') throw new Error(`tool call ${this.id} is ${s.kind}, not called`);
    return { ...this.base(), state: 'done', error: s.result.error, outputs: s.result.outputs, totalTimeMs: s.totalTimeMs };
  }

  /** Commits the outcome (the tool message and the final state row, in one transaction), then tells the editor. */
  private finish(): Finished {
    const s = this.state;
    if (s.kind === 'called') {
      const message = this.calledMessage();
      this.env.remember(message, this.record());
      this.emit(this.doneEvent());
      return { message };
    }
    if (s.kind === 'stopping') {
      // A placeholder the LLM reads until (unless) the tool returns: the history stays valid.
      const text = 'The user stopped the prompt while this tool ran; it had not returned.';
      const message: StoredMessage = { ...this.stored(), outcome: 'called', error: true, outputs: [{ type: 'text', text }], llmText: text, totalTimeMs: Date.now() - s.startedAt };
      const replace = this.env.remember(message, this.record()) ?? undefined;
      this.emit({ ...this.base(), state: 'stopping' });
      return { message, replace };
    }
    if (s.kind !== 'rejected') throw new Error(`tool call ${this.id} finished in state ${s.kind}`);
    // With the change it would have made (the diff the user was shown), so a replay shows it again.
    const message: StoredMessage = {
      ...this.stored(),
      outcome: 'rejected',
      error: true,
      outputs: [],
      llmText: s.why,
      reason: s.reason,
      totalTimeMs: 0,
      ...(this.details ? { details: this.details } : {}),
    };
    this.env.remember(message, this.record());
    this.emit({ ...this.base(), state: 'rejected', reason: s.reason });
    return { message };
  }
}

type Decision = { kind: 'allow' | 'ask' } | { kind: 'deny'; why: string; reason?: RejectReason };

interface Finished {
  message: StoredMessage;
  replace?: (message: StoredMessage, toolCall?: ToolCallRecord) => void;
}

/**
 * The tool's result, or 'stopping' once `signal` has been aborted for `graceMs` and the tool has
 * still not returned (it ignores its signal).
 */
function outlast(call: Promise<ToolResult>, signal: AbortSignal, graceMs: number): Promise<ToolResult | 'stopping'> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => (timer = setTimeout(() => resolve('stopping'), graceMs).unref());
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    void call.then((r) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(r);
    });
  });
}

function sameRoots(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((r, i) => r === b[i]);
}

function rejectionText(reason: RejectReason): string {
  return reason === 'stopped' ? 'The user stopped the prompt; this tool call did not run.' : 'The user rejected this tool call; it did not run. Ask what they want instead, or continue without it.';
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

/** The real path of `path`'s folder, or undefined when it cannot be resolved (then not checked at rollback). */
function realFolder(path: string): string | undefined {
  try {
    return realpathSync(dirname(path));
  } catch {
    return undefined;
  }
}

/**
 * In-flight tool calls of one connection (spec "Tool call terminal semantics"): every
 * `tool.call` gets exactly one `tool.result` from here — the handler's value, its error, or
 * `CANCELLED` when the gateway sends `tool.cancel` first. Whatever the handler settles with
 * after that is dropped. When the connection goes, handlers are aborted and nothing is sent
 * (the gateway has already failed those calls with DISCONNECTED and does not replay them).
 */
import { TOOL_ERROR_CODES, type ToolCallMessage, type ToolCancelMessage, type ToolResultMessage } from '../protocol/gateway/index.js';
import { ToolError } from './errors.js';
import type { ProviderTool, ToolCallContext } from './types.js';

export interface CallTableHost {
  /** The current handler for `tool`, if the provider declares it. */
  tool(name: string): ProviderTool | undefined;
  send(msg: ToolResultMessage): void;
  push: ToolCallContext['push'];
}

const SPEC_CODES: ReadonlySet<string> = new Set(TOOL_ERROR_CODES);

/** A handler's rejection as `{error, errorCode}`. */
export function errorResult(id: string, e: unknown): ToolResultMessage {
  const error = e instanceof Error ? e.message || e.name : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  // ToolError picks any code; other errors only a spec one, so `ENOENT` & co. read as INTERNAL.
  const errorCode = e instanceof ToolError ? e.code : typeof code === 'string' && SPEC_CODES.has(code) ? code : 'INTERNAL';
  return { type: 'tool.result', id, error: error || 'Tool failed', errorCode };
}

/**
 * One running call. The AbortController is made on first use of `ctx.signal`: most handlers
 * never look, and making one costs about as much as the rest of a call's bookkeeping.
 */
interface Running {
  ac?: AbortController;
  /** Set when aborted before the handler asked for its signal. */
  reason?: unknown;
}

export class CallTable {
  private readonly inflight = new Map<string, Running>();

  constructor(private readonly host: CallTableHost) {}

  get size(): number {
    return this.inflight.size;
  }

  start(msg: ToolCallMessage): void {
    const { id } = msg;
    if (this.inflight.has(id)) return; // a repeated id: the first call owns the one answer
    const tool = this.host.tool(msg.tool);
    if (!tool) {
      this.host.send({ type: 'tool.result', id, error: `Unknown tool "${msg.tool}"`, errorCode: 'NOT_FOUND' });
      return;
    }
    const run: Running = {};
    this.inflight.set(id, run);
    const ctx: ToolCallContext = {
      get signal(): AbortSignal {
        run.ac ??= new AbortController();
        if (run.reason !== undefined && !run.ac.signal.aborted) run.ac.abort(run.reason);
        return run.ac.signal;
      },
      callId: id,
      sessionId: msg.sessionId,
      push: this.host.push,
    };
    let out: unknown;
    try {
      out = tool.handler(msg.args, ctx);
    } catch (e) {
      this.settle(id, run, errorResult(id, e));
      return;
    }
    if (typeof (out as PromiseLike<unknown> | null)?.then === 'function') {
      Promise.resolve(out).then(
        (v) => this.settle(id, run, { type: 'tool.result', id, data: v === undefined ? '' : v }),
        (e: unknown) => this.settle(id, run, errorResult(id, e)),
      );
    } else {
      this.settle(id, run, { type: 'tool.result', id, data: out === undefined ? '' : out });
    }
  }

  /** `tool.cancel`: abort the handler and answer CANCELLED — also for a call already answered, as the spec requires. */
  cancel(msg: ToolCancelMessage): void {
    const run = this.inflight.get(msg.id);
    this.inflight.delete(msg.id);
    try {
      if (run) abort(run, new ToolError(`Cancelled${msg.reason ? ` (${msg.reason})` : ''}`, 'CANCELLED'));
    } finally {
      this.host.send({ type: 'tool.result', id: msg.id, error: 'Cancelled', errorCode: 'CANCELLED' });
    }
  }

  /** The connection is gone (or `close()`): abort every handler, answer nothing. */
  abortAll(reason: string): void {
    const all = [...this.inflight.values()];
    this.inflight.clear();
    for (const run of all) abort(run, new ToolError(reason, 'DISCONNECTED'));
  }

  private settle(id: string, run: Running, msg: ToolResultMessage): void {
    if (this.inflight.get(id) !== run) return; // cancelled or disconnected meanwhile: already answered
    this.inflight.delete(id);
    this.host.send(msg);
  }
}

function abort(run: Running, reason: unknown): void {
  run.reason = reason;
  run.ac?.abort(reason);
}

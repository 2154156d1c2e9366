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

type ResultOut = ToolResultMessage;

export interface CallTableHost {
  /** The current handler for `tool`, if the provider declares it. */
  tool(name: string): ProviderTool | undefined;
  send(msg: ResultOut): void;
  push: ToolCallContext['push'];
}

const SPEC_CODES: ReadonlySet<string> = new Set(TOOL_ERROR_CODES);

/** A handler's rejection as `{error, errorCode}`. */
export function errorResult(id: string, e: unknown): ResultOut {
  const error = e instanceof Error ? e.message || e.name : String(e);
  const code = (e as { code?: unknown } | null)?.code;
  // ToolError picks any code; other errors only a spec one, so `ENOENT` & co. read as INTERNAL.
  const errorCode = e instanceof ToolError ? e.code : typeof code === 'string' && SPEC_CODES.has(code) ? code : 'INTERNAL';
  return { type: 'tool.result', id, error: error || 'Tool failed', errorCode };
}

export class CallTable {
  private readonly inflight = new Map<string, AbortController>();

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
    const ac = new AbortController();
    this.inflight.set(id, ac);
    const ctx: ToolCallContext = { signal: ac.signal, callId: id, sessionId: msg.sessionId, push: this.host.push };
    let out: unknown;
    try {
      out = tool.handler(msg.args, ctx);
    } catch (e) {
      this.settle(id, ac, errorResult(id, e));
      return;
    }
    if (typeof (out as PromiseLike<unknown> | null)?.then === 'function') {
      Promise.resolve(out).then(
        (v) => this.settle(id, ac, { type: 'tool.result', id, data: v === undefined ? '' : v }),
        (e: unknown) => this.settle(id, ac, errorResult(id, e)),
      );
    } else {
      this.settle(id, ac, { type: 'tool.result', id, data: out === undefined ? '' : out });
    }
  }

  /** `tool.cancel`: abort the handler and answer CANCELLED — also for a call already answered, as the spec requires. */
  cancel(msg: ToolCancelMessage): void {
    const ac = this.inflight.get(msg.id);
    this.inflight.delete(msg.id);
    try {
      ac?.abort(new ToolError(`Cancelled${msg.reason ? ` (${msg.reason})` : ''}`, 'CANCELLED'));
    } finally {
      this.host.send({ type: 'tool.result', id: msg.id, error: 'Cancelled', errorCode: 'CANCELLED' });
    }
  }

  /** The connection is gone (or `close()`): abort every handler, answer nothing. */
  abortAll(reason: string): void {
    const all = [...this.inflight.values()];
    this.inflight.clear();
    for (const ac of all) ac.abort(new ToolError(reason, 'DISCONNECTED'));
  }

  private settle(id: string, ac: AbortController, msg: ResultOut): void {
    if (this.inflight.get(id) !== ac) return; // cancelled or disconnected meanwhile: already answered
    this.inflight.delete(id);
    this.host.send(msg);
  }
}

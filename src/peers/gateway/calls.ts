/**
 * In-flight `tool.call`s of one connection and their terminal semantics
 * (specs/tap-provider-gateway.md "Tool call terminal semantics"): every call has exactly one
 * outcome, the first one wins, and every call settles — by result, cancel, timeout or disconnect.
 */
import { textResult, type ToolResult } from '../../core/tool.js';
import type { CancelReason, ToolResultMessage } from '../../protocol/gateway/index.js';

interface Pending {
  tool: string;
  resolve: (r: ToolResult) => void;
  timer: NodeJS.Timeout;
  signal: AbortSignal;
  onAbort: () => void;
}

export interface StartCall {
  id: string;
  tool: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Sends `tool.cancel`; the call is already settled (CANCELLED) when this runs. */
  cancel: (reason: CancelReason) => void;
}

/** Ids of settled calls kept to tell a late duplicate from a result nobody asked for. */
const SETTLED_MEMORY = 10_000;

/** `tool.result` → the ToolResult the model reads (spec `tool.result`). */
export function toToolResult(msg: ToolResultMessage): ToolResult {
  if (msg.error !== undefined) return textResult(msg.errorCode ? `${msg.errorCode}: ${msg.error}` : msg.error, true);
  const data = msg.data;
  return textResult(typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data)));
}

export function failure(code: string, message: string): ToolResult {
  return textResult(`${code}: ${message}`, true);
}

export class PendingCalls {
  private readonly pending = new Map<string, Pending>();
  /**
   * Two generations instead of one capped Set: evicting the oldest entry of a big Set one at a
   * time gets slower as it ages (bench/gateway.ts); dropping a whole old generation is O(1).
   */
  private settled = new Set<string>();
  private settledBefore = new Set<string>();

  get size(): number {
    return this.pending.size;
  }

  /** The only pending call's id, when there is exactly one (terminal rule 4). */
  single(): string | undefined {
    return this.pending.size === 1 ? this.pending.keys().next().value : undefined;
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** A call that has finished (result, cancel, timeout, failure): later results are ignored. */
  wasSettled(id: string): boolean {
    return this.settled.has(id) || this.settledBefore.has(id);
  }

  /** Registers the call; `send` must already have gone out or go out right after. */
  start(c: StartCall): Promise<ToolResult> {
    return new Promise<ToolResult>((resolve) => {
      const cancel = (reason: CancelReason, text: string): void => {
        if (!this.finish(c.id, failure('CANCELLED', text))) return;
        c.cancel(reason);
      };
      const onAbort = (): void => cancel('cancelled', `tool call "${c.tool}" was cancelled`);
      const timer = setTimeout(() => cancel('timeout', `tool call "${c.tool}" timed out after ${c.timeoutMs} ms`), c.timeoutMs);
      timer.unref?.();
      this.pending.set(c.id, { tool: c.tool, resolve, timer, signal: c.signal, onAbort });
      c.signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Settles a call; false when it had already settled (first terminal outcome wins). */
  finish(id: string, result: ToolResult): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    clearTimeout(p.timer);
    p.signal.removeEventListener('abort', p.onAbort);
    this.settled.add(id);
    if (this.settled.size >= SETTLED_MEMORY) {
      this.settledBefore = this.settled;
      this.settled = new Set();
    }
    p.resolve(result);
    return true;
  }

  /** Terminal rule 3: every pending call fails with `result`. */
  failAll(result: ToolResult): void {
    for (const id of [...this.pending.keys()]) this.finish(id, result);
  }
}

/**
 * In-flight tool calls to one peer (a gateway provider's connection, an MCP session) and their
 * terminal semantics (specs/tap-provider-gateway.md "Tool call terminal semantics"): every call
 * has exactly one outcome, the first one wins, and every call settles — by result, cancel,
 * timeout or disconnect.
 */
import type { ToolResult } from './tool.js';

/** Why a call ended without its result: the user's signal, or its deadline. */
export type EndReason = 'cancelled' | 'timeout';

interface Pending<T> {
  tool: string;
  data?: T;
  resolve: (r: ToolResult) => void;
  /** `performance.now()` past which the call times out (a monotonic clock: wall-clock jumps do not matter). */
  deadline: number;
  timeoutMs: number;
  signal: AbortSignal;
  cancel: StartCall<T>['cancel'];
  /** Open holds (hold()): the deadline is off while any is. */
  holds: number;
}

export interface StartCall<T = undefined> {
  id: string;
  /** The tool's name, for the texts of `ended` and `failAll`. */
  tool: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Tells the peer (the call is already settled with `ended`'s result when this runs). */
  cancel: (reason: EndReason) => void;
  /** The caller's own per-call data, for `data(id)` while the call is pending. */
  data?: T;
}

export interface PendingCallsOptions<T> {
  /** The result of a call that was cancelled or timed out (no side effects: `cancel` acts). */
  ended(tool: string, reason: EndReason, timeoutMs: number, data: T | undefined): ToolResult;
}

/** Ids of settled calls kept to tell a late duplicate from a result nobody asked for. */
const SETTLED_MEMORY = 10_000;

const MAX_DELAY_MS = 2 ** 31 - 1;

export class PendingCalls<T = undefined> {
  private readonly pending = new Map<string, Pending<T>>();
  /**
   * Two generations instead of one capped Set: evicting the oldest entry of a big Set one at a
   * time gets slower as it ages (bench/gateway.ts); dropping a whole old generation is O(1).
   */
  private settled = new Set<string>();
  private settledBefore = new Set<string>();

  constructor(private readonly opts: PendingCallsOptions<T>) {}

  get size(): number {
    return this.pending.size;
  }

  /** The only pending call's id, when there is exactly one (gateway terminal rule 4). */
  single(): string | undefined {
    return this.pending.size === 1 ? this.pending.keys().next().value : undefined;
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** The data a pending call was started with; undefined once it settled. */
  data(id: string): T | undefined {
    return this.pending.get(id)?.data;
  }

  /** A call that has finished (result, cancel, timeout, failure): later results are ignored. */
  wasSettled(id: string): boolean {
    return this.settled.has(id) || this.settledBefore.has(id);
  }

  /**
   * Registers the call; the request must already have gone out or go out right after.
   *
   * Per call there is no timer and no abort listener (each cost as much as the rest of a call's
   * bookkeeping, bench/gateway.ts): one timer runs to the earliest deadline, and each signal
   * (a chat turn's, shared by its calls) gets one listener that cancels its pending calls.
   */
  start(c: StartCall<T>): Promise<ToolResult> {
    return new Promise<ToolResult>((resolve) => {
      const deadline = performance.now() + c.timeoutMs;
      this.pending.set(c.id, { tool: c.tool, data: c.data, resolve, deadline, timeoutMs: c.timeoutMs, signal: c.signal, cancel: c.cancel, holds: 0 });
      this.watch(c.signal);
      if (this.timer === undefined || deadline < this.timerAt) this.armTimer(deadline);
    });
  }

  /**
   * Stops a call's clock while the peer waits on a person (an MCP server asking the user mid-call):
   * a person may take longer than a server's timeout allows. The returned function (once) lets it
   * run again with its whole timeout.
   */
  hold(id: string): () => void {
    const p = this.pending.get(id);
    if (!p) return () => {};
    p.holds++;
    p.deadline = Infinity;
    let released = false;
    return () => {
      if (released || this.pending.get(id) !== p) return;
      released = true;
      if (--p.holds > 0) return;
      p.deadline = performance.now() + p.timeoutMs;
      if (this.timer === undefined || p.deadline < this.timerAt) this.armTimer(p.deadline);
    };
  }

  /** Settles a call; false when it had already settled (first terminal outcome wins). */
  finish(id: string, result: ToolResult): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    this.pending.delete(id);
    this.settled.add(id);
    if (this.settled.size >= SETTLED_MEMORY) {
      this.settledBefore = this.settled;
      this.settled = new Set();
    }
    // The timer stays: it finds nothing due when it fires (re-arming per call is what this avoids).
    p.resolve(result);
    return true;
  }

  /** Every pending call fails with `result` (a disconnect: gateway terminal rule 3). */
  failAll(result: ToolResult | ((tool: string, data: T | undefined) => ToolResult)): void {
    for (const [id, p] of [...this.pending]) this.finish(id, typeof result === 'function' ? result(p.tool, p.data) : result);
  }

  /** The call settles with `ended`'s result, then the peer is told (first terminal outcome wins). */
  private cancel(id: string, reason: EndReason): void {
    const p = this.pending.get(id);
    if (!p) return;
    if (this.finish(id, this.opts.ended(p.tool, reason, p.timeoutMs, p.data))) p.cancel(reason);
  }

  /** cancel() for one of many: a cancel that throws must not cost the other calls their ending. */
  private cancelSafely(id: string, reason: EndReason): void {
    try {
      this.cancel(id, reason);
    } catch {
      /* the call has settled (finish ran before cancel); only telling the peer failed */
    }
  }

  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private readonly watched = new WeakSet<AbortSignal>();

  private watch(signal: AbortSignal): void {
    if (this.watched.has(signal)) return;
    this.watched.add(signal);
    signal.addEventListener(
      'abort',
      () => {
        for (const [id, p] of [...this.pending]) if (p.signal === signal) this.cancelSafely(id, 'cancelled');
      },
      { once: true },
    );
  }

  private armTimer(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    // setTimeout takes at most 2^31-1 ms (a longer delay fires at once): wake up then and look again.
    this.timer = setTimeout(() => this.onTimer(), Math.min(MAX_DELAY_MS, Math.max(0, at - performance.now())));
    this.timer.unref?.();
  }

  /** Times out every call past its deadline, then waits for the next one. */
  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [id, p] of [...this.pending]) {
      if (p.deadline > now) next = Math.min(next, p.deadline);
      else this.cancelSafely(id, 'timeout');
    }
    if (next < Infinity && this.pending.size) this.armTimer(next);
  }
}

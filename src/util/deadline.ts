/**
 * Deadlines, as explicit timers. Never `AbortSignal.any([s, AbortSignal.timeout(ms)])`: on Node 20
 * the combined signal holds its sources weakly, so once the timeout signal is garbage collected
 * it never fires (a 3 s timeout was still waiting at 8 s). A timer here is held by the event loop
 * until it fires or is cleared, and the caller clears it when the work settles, so a long-lived
 * parent signal does not collect one listener per call either. The lint forbids
 * `AbortSignal.timeout` in src/ (eslint.config.js).
 */

/** A signal that aborts after `ms`, or as soon as one of its parents aborts (with that parent's reason). */
export interface Deadline {
  readonly signal: AbortSignal;
  /** True once the time ran out (not when a parent aborted first). */
  readonly expired: boolean;
  /** Stops the timer and lets go of the parents; call it once the work has settled. Idempotent. */
  clear(): void;
}

/**
 * A deadline of `ms` under `parents` (undefined ones are skipped). It aborts with a `TimeoutError`
 * DOMException, as `AbortSignal.timeout` does. The timer never keeps the process alive on its own:
 * the work it limits (a socket, a pending request on stdin) does that.
 */
export function deadline(ms: number, ...parents: Array<AbortSignal | undefined>): Deadline {
  const c = new AbortController();
  let expired = false;
  const unhook: Array<() => void> = [];
  const clear = (): void => {
    clearTimeout(timer);
    for (const f of unhook.splice(0)) f();
  };
  const timer = setTimeout(() => {
    expired = true;
    clear();
    c.abort(new DOMException(`The operation timed out after ${ms} ms`, 'TimeoutError'));
  }, ms);
  timer.unref?.();
  for (const p of parents) {
    if (!p) continue;
    if (p.aborted) {
      clear();
      c.abort(p.reason);
      break;
    }
    const onAbort = (): void => {
      clear();
      c.abort(p.reason);
    };
    p.addEventListener('abort', onAbort, { once: true });
    unhook.push(() => p.removeEventListener('abort', onAbort));
  }
  return {
    signal: c.signal,
    get expired() {
      return expired;
    },
    clear,
  };
}

/** `work` under a deadline of `ms` (see `deadline`), cleared when the work settles either way. */
export async function underDeadline<T>(ms: number, parents: Array<AbortSignal | undefined>, work: (signal: AbortSignal, d: Deadline) => Promise<T>): Promise<T> {
  const d = deadline(ms, ...parents);
  try {
    return await work(d.signal, d);
  } finally {
    d.clear();
  }
}

/**
 * Waiting on another party with a limit: `within` settles when `work` settles or after `ms`,
 * whichever comes first, and calls `late` in the second case. The work itself goes on (a
 * notification already on the wire cannot be called back); only the wait for it ends.
 */
export function within(work: Promise<unknown>, ms: number, late: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      late();
      resolve();
    }, ms);
    // Never keeps the process alive on its own.
    timer.unref?.();
    const end = () => {
      clearTimeout(timer);
      resolve();
    };
    work.then(end, end);
  });
}

/**
 * `fallback`, or the milliseconds a positive whole number in the environment variable `name`
 * says: how a test shortens a deadline that is 30 s for a user.
 */
export function msFromEnv(name: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || !/^\d{1,9}$/.test(raw.trim())) return fallback;
  const ms = Number(raw.trim());
  return ms > 0 ? ms : fallback;
}

/** `ms` for a person: `250 ms`, `30 s`, `60 min`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

/** An error that says a deadline passed: named `TimeoutError`, as the reason of a timed-out signal is. */
export function timeoutError(message: string): Error {
  const e = new Error(message);
  e.name = 'TimeoutError';
  return e;
}

/** Whether `e` says a deadline passed (timeoutError, or a timed-out signal's reason). */
export function isTimeout(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === 'TimeoutError';
}

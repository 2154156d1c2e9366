/** Reconnect delays: exponential, capped, jittered so many providers do not reconnect in lockstep. */

export interface BackoffOptions {
  /** First delay, ms. Default 250. */
  initialMs?: number;
  /** Cap, ms. Default 10 000. */
  maxMs?: number;
  /** Growth per attempt. Default 2. */
  factor?: number;
  /** 0..1: the share of each delay that is random. Default 0.5 (delay in [d/2, d]). */
  jitter?: number;
  /** Attempts in a row without getting bound before giving up. Default unlimited. */
  maxAttempts?: number;
}

export type ResolvedBackoff = Required<BackoffOptions>;

export function resolveBackoff(o: BackoffOptions = {}): ResolvedBackoff {
  return {
    initialMs: o.initialMs ?? 250,
    maxMs: o.maxMs ?? 10_000,
    factor: o.factor ?? 2,
    jitter: Math.min(1, Math.max(0, o.jitter ?? 0.5)),
    maxAttempts: o.maxAttempts ?? Number.POSITIVE_INFINITY,
  };
}

/** The delay before reconnect attempt `attempt` (0-based). */
export function backoffDelay(b: ResolvedBackoff, attempt: number, random: () => number = Math.random): number {
  const d = Math.min(b.maxMs, b.initialMs * b.factor ** attempt);
  return Math.round(d * (1 - b.jitter) + d * b.jitter * random());
}

/**
 * When to refresh an OAuth login. Bounded both ways: never sooner than MIN_GAP_MS after the last
 * attempt (a server issuing 30-second tokens must not get a token request per millisecond), never
 * past setTimeout's ceiling; jittered so that windows sharing a login do not all fire at once.
 */

/** Refresh this long before the access token expires (ECA's renew margin is of the same order). */
export const REFRESH_MARGIN_S = 60;
/** The least time between two refresh attempts of one login by one process. */
export const MIN_GAP_MS = 30_000;
/** setTimeout's ceiling (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Up to this much is added at random to a scheduled refresh. */
const JITTER_MS = 5_000;
/** Retries after temporary failures: 30 s, 1 min, 2 min… up to 30 min. */
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 30 * 60_000;

/**
 * Milliseconds until the next refresh of a token expiring at `expiresAt` (epoch s). `issuedLifetimeS`
 * is how long the server said a just-issued token lives: one that lives no longer than the margin
 * is refreshed halfway through (at least MIN_GAP_MS on), not at once.
 */
export function refreshDelayMs(o: { expiresAt: number; nowMs: number; lastAttemptMs?: number; issuedLifetimeS?: number; random?: number }): number {
  const leftMs = o.expiresAt * 1000 - o.nowMs;
  let ms = leftMs - REFRESH_MARGIN_S * 1000;
  if (o.issuedLifetimeS !== undefined && o.issuedLifetimeS <= REFRESH_MARGIN_S) ms = Math.max(MIN_GAP_MS, leftMs / 2);
  if (o.lastAttemptMs !== undefined) ms = Math.max(ms, o.lastAttemptMs + MIN_GAP_MS - o.nowMs);
  ms = Math.max(0, ms);
  // Jitter only what is scheduled ahead: a token due now is refreshed now.
  if (ms > 0) ms += (o.random ?? Math.random()) * JITTER_MS;
  return Math.min(MAX_TIMER_MS, ms);
}

/** The wait before retry number `streak` (1-based) after temporary failures. */
export function backoffMs(streak: number, random = Math.random()): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, streak - 1)) + random * JITTER_MS;
}

/** Whether a token is due for a refresh now (inside the margin or expired), and one may be tried. */
export function refreshDue(o: { expiresAt: number; nowMs: number; lastAttemptMs?: number }): boolean {
  if (o.expiresAt * 1000 - o.nowMs > REFRESH_MARGIN_S * 1000) return false;
  return o.lastAttemptMs === undefined || o.nowMs - o.lastAttemptMs >= MIN_GAP_MS;
}

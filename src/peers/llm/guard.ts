/**
 * Wraps one model turn with the connection invariants the agent loop relies on:
 * - retries (exponential backoff + jitter, honouring `retry-after`) only before the
 *   first event was yielded — after that a retry would duplicate output;
 * - stall detection: no event for `stallMs` aborts the HTTP request and fails;
 * - cancellation: aborting `req.signal` ends the stream at once with an `AbortError`,
 *   even while the underlying stream is stuck, and really cancels the request.
 */
import { abortError, isAbortError } from './errors.js';
import { type LlmClient, LlmError, type LlmEvent, type LlmRequest } from '../../shapes/llm.js';

export interface RetryOptions {
  /** Retries after the first attempt (0 = no retry). */
  maxRetries: number;
  /** Milliseconds without an event before the stream counts as stalled. */
  stallMs: number;
  onRetry(attempt: number, delayMs: number, err: LlmError): void;
  /** First backoff delay; doubles each retry. Default 1000 ms. */
  baseDelayMs?: number;
  /** Upper bound of any delay, `retry-after` included. Default 60 s. */
  maxDelayMs?: number;
}

const DEFAULT_BASE_DELAY = 1000;
const DEFAULT_MAX_DELAY = 60_000;

export function backoffDelay(attempt: number, err: LlmError, base: number, max: number): number {
  if (err.retryAfterMs !== undefined) return Math.min(Math.max(0, err.retryAfterMs), max);
  const exp = base * 2 ** (attempt - 1);
  // Full jitter on the upper half: spreads clients out without collapsing to zero.
  return Math.min(max, Math.round(exp / 2 + Math.random() * (exp / 2)));
}

export async function* streamWithRetry(client: LlmClient, req: LlmRequest, opts: RetryOptions): AsyncGenerator<LlmEvent> {
  const base = opts.baseDelayMs ?? DEFAULT_BASE_DELAY;
  const max = opts.maxDelayMs ?? DEFAULT_MAX_DELAY;
  for (let attempt = 0; ; attempt++) {
    if (req.signal.aborted) throw abortError(req.signal.reason);
    let yielded = false;
    try {
      for await (const ev of guardedAttempt(client, req, opts.stallMs)) {
        yielded = true;
        yield ev;
      }
      return;
    } catch (e) {
      if (req.signal.aborted || isAbortError(e)) throw abortError(req.signal.reason);
      if (!(e instanceof LlmError) || !e.retryable || yielded || attempt >= opts.maxRetries) throw e;
      const delay = backoffDelay(attempt + 1, e, base, max);
      opts.onRetry(attempt + 1, delay, e);
      await sleep(delay, req.signal);
    }
  }
}

/** One attempt: the client's stream raced against a stall timer and the caller's signal. */
async function* guardedAttempt(client: LlmClient, req: LlmRequest, stallMs: number): AsyncGenerator<LlmEvent> {
  const ctl = new AbortController();
  const onAbort = (): void => ctl.abort(req.signal.reason);
  req.signal.addEventListener('abort', onAbort, { once: true });

  // A single promise that rejects on stall or abort, raced against every `next()`.
  let last = Date.now();
  /** True while we wait on the client; time the consumer spends on an event is not a stall. */
  let waiting = false;
  let timer: NodeJS.Timeout | undefined;
  let fail!: (e: Error) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {});
  const checkStall = (): void => {
    const idle = Date.now() - last;
    if (!waiting) timer = setTimeout(checkStall, stallMs);
    else if (idle >= stallMs) {
      const err = new LlmError(`LLM stream stalled: no data for ${formatSeconds(stallMs)}s`, undefined, true);
      fail(err);
      ctl.abort(err);
    } else timer = setTimeout(checkStall, stallMs - idle);
  };
  timer = setTimeout(checkStall, stallMs);
  const onCallerAbort = (): void => fail(abortError(req.signal.reason));
  req.signal.addEventListener('abort', onCallerAbort, { once: true });

  const it = client.stream({ ...req, signal: ctl.signal })[Symbol.asyncIterator]();
  let finished = false;
  try {
    for (;;) {
      const next = it.next();
      next.catch(() => {});
      waiting = true;
      const r = await Promise.race([next, failed]);
      waiting = false;
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
      last = Date.now();
    }
  } finally {
    clearTimeout(timer);
    req.signal.removeEventListener('abort', onAbort);
    req.signal.removeEventListener('abort', onCallerAbort);
    if (!finished) {
      ctl.abort();
      // Not awaited: a generator stuck in `next()` only settles once the abort reaches it.
      it.return?.().catch(() => {});
    }
  }
}

function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? String(s) : s.toFixed(1);
}

/** Resolves after `ms`; rejects with an AbortError as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return signal.aborted ? Promise.reject(abortError(signal.reason)) : Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(t);
      reject(abortError(signal.reason));
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

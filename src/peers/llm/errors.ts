/**
 * One place that turns whatever a provider SDK or `fetch` throws into an `LlmError`
 * (or lets an abort through untouched). Messages carry the HTTP status and the
 * provider's own message, never the API key.
 */
import { redact } from '../../util/log.js';
import { scrubUrls } from '../../util/url.js';
import { connectionFailure, displayUrl } from './net-errors.js';
import { LlmError, type LlmErrorKind } from '../../shapes/llm.js';

/** Statuses worth retrying: timeouts, conflicts, rate limits, server errors, Anthropic's 529. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Error types (Anthropic `error.type`, OpenAI `error.code`) that mean "try again later". */
const retryableTypes = new Set(['overloaded_error', 'rate_limit_error', 'api_error', 'server_error', 'rate_limit_exceeded']);

export function abortError(reason?: unknown): Error {
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

export function isAbortError(e: unknown): boolean {
  return e instanceof Error && (e.name === 'AbortError' || e.name === 'APIUserAbortError' || e.constructor.name === 'APIUserAbortError');
}

interface HeaderBag {
  get(name: string): string | null;
}

/** `retry-after-ms` (OpenAI, Anthropic) wins over `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(headers: HeaderBag | undefined | null): number | undefined {
  if (!headers || typeof headers.get !== 'function') return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return undefined;
  if (Number.isFinite(Number(ra))) return Math.max(0, Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * How providers word "the request does not fit the context window": Anthropic ("prompt is too
 * long: N tokens > M maximum"), OpenAI (`context_length_exceeded`, "maximum context length"),
 * vLLM and other OpenAI-compatible servers ("maximum context length"), llama.cpp ("exceeds the
 * available context size"), Ollama ("input length exceeds the context length"), Gemini ("exceeds
 * the maximum number of tokens").
 */
const CONTEXT_OVERFLOW = [
  /prompt is too long/i,
  /context[_ ]length[_ ]exceeded/i,
  /maximum context length/i,
  /exceeds? (?:the )?(?:available |maximum |max |model'?s? )?context/i,
  /exceeds? the maximum number of (?:input )?tokens/i,
  /input (?:length )?is too long/i,
  /too many (?:input )?tokens/i,
  /context (?:window|size) (?:exceeded|is too small|overflow)/i,
];

/**
 * The kind of a provider failure the chat can act on. A 429 that mentions tokens is a rate limit,
 * never an overflow; local servers answer an overflow with 400 or 500, so those are read by message.
 */
export function errorKind(status: number | undefined, message: string): LlmErrorKind | undefined {
  if (status === 413) return 'contextOverflow';
  if (status === 401 || status === 403 || status === 429) return undefined;
  return CONTEXT_OVERFLOW.some((re) => re.test(message)) ? 'contextOverflow' : undefined;
}

/** `err` with its kind found from its status and message; an overflow is never worth a plain retry. */
export function classified(err: LlmError): LlmError {
  if (err.kind) return err;
  const kind = errorKind(err.status, err.message);
  return kind ? new LlmError(err.message, err.status, false, err.retryAfterMs, kind) : err;
}

/** A message safe to show: no key, no known secret, and URLs without user info or query values (fetch quotes URLs whole). */
export function scrub(message: string, key: string | undefined): string {
  let m = scrubUrls(message);
  if (key && key.length >= 4) m = m.split(key).join('[redacted]');
  return redact(m);
}

/** An HTTP error built from a raw response (for adapters that use `fetch` directly). */
export function httpError(provider: string, status: number, headers: HeaderBag, bodyText: string, key?: string): LlmError {
  let msg = bodyText.trim();
  try {
    const j = JSON.parse(bodyText) as { error?: unknown; message?: unknown };
    const e = j.error;
    if (typeof e === 'string') msg = e;
    else if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') msg = (e as { message: string }).message;
    else if (typeof j.message === 'string') msg = j.message;
  } catch {
    // not JSON: keep the text
  }
  if (msg.length > 500) msg = `${msg.slice(0, 500)}…`;
  return classified(new LlmError(scrub(`${provider} request failed (HTTP ${status})${msg ? `: ${msg}` : ''}`, key), status, isRetryableStatus(status), retryAfterMs(headers)));
}

interface SdkApiErrorLike {
  status?: number;
  headers?: HeaderBag;
  message: string;
  type?: string | null;
  code?: string | null;
  error?: unknown;
}

/**
 * Maps an error thrown by the OpenAI / Anthropic SDKs (duck-typed: both are Stainless
 * SDKs with the same `APIError` shape) or by `fetch` to an `LlmError`. Aborts are
 * returned unchanged so callers can rethrow them as-is. `url` (the provider's base URL)
 * is named when the server could not be reached.
 */
export function toLlmError(err: unknown, provider: string, key?: string, url?: string): Error {
  // Adapters throw stream errors as LlmError themselves; they are classified here, where they pass.
  if (err instanceof LlmError) return classified(err);
  if (isAbortError(err)) return abortError(err);
  if (!(err instanceof Error)) return new LlmError(scrub(`${provider} request failed: ${String(err)}`, key), undefined, false);
  const e = err as Error & SdkApiErrorLike;
  const status = typeof e.status === 'number' ? e.status : undefined;
  const type = errorType(e);
  const msg = providerMessage(e, status);
  if (status !== undefined) {
    return classified(
      new LlmError(
        scrub(`${provider} request failed (HTTP ${status}): ${msg}`, key),
        status,
        isRetryableStatus(status) || (type !== undefined && retryableTypes.has(type)),
        retryAfterMs(e.headers),
        // OpenAI names it by code whatever the message says.
        e.code === 'context_length_exceeded' ? 'contextOverflow' : undefined,
      ),
    );
  }
  const conn = connectionFailure(e);
  if (conn) {
    const where = url ? displayUrl(url) : `the ${provider} server`;
    // Not retryable: a refused port or an unknown host fails the same way a second later.
    if (!conn.retryable) return new LlmError(scrub(`Could not reach ${where} (${conn.cause}). ${conn.hint}`, key), undefined, false);
    return new LlmError(scrub(`Lost the connection to ${where} (${conn.cause})`, key), undefined, true);
  }
  if (e.name === 'APIConnectionError' || e.name === 'APIConnectionTimeoutError' || e.constructor.name.startsWith('APIConnection') || isNetworkError(e)) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    const where = url ? ` ${displayUrl(url)}` : '';
    return new LlmError(scrub(`${provider}: cannot reach the server${where} (${e.message}${cause})`, key), undefined, true);
  }
  // An error reported inside the stream (Anthropic `event: error`, OpenAI `{error}` chunks).
  const retryable = type !== undefined && retryableTypes.has(type);
  return classified(new LlmError(scrub(`${provider} stream error${type ? ` (${type})` : ''}: ${msg}`, key), type === 'overloaded_error' ? 529 : undefined, retryable));
}

function errorType(e: SdkApiErrorLike): string | undefined {
  if (typeof e.type === 'string') return e.type;
  if (typeof e.code === 'string') return e.code;
  const inner = e.error as { type?: unknown; error?: { type?: unknown } } | undefined;
  if (inner && typeof inner.error?.type === 'string') return inner.error.type;
  if (inner && typeof inner.type === 'string') return inner.type;
  return undefined;
}

function providerMessage(e: SdkApiErrorLike, status: number | undefined): string {
  const inner = e.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  if (inner && typeof inner.error?.message === 'string') return inner.error.message;
  if (inner && typeof inner.message === 'string') return inner.message;
  let m = e.message;
  if (status !== undefined && m.startsWith(`${status} `)) m = m.slice(String(status).length + 1);
  return m;
}

function isNetworkError(e: Error): boolean {
  if (e.name === 'TypeError' && /fetch failed|network/i.test(e.message)) return true;
  const code = (e as { code?: unknown }).code ?? (e.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EPIPE|EAI_AGAIN|UND_ERR_)/.test(code);
}

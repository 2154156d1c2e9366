/**
 * What a failed connection means for the user: `fetch` (undici) and the SDKs built on it hide
 * the system error a few `cause`s deep (APIConnectionError → TypeError "fetch failed" →
 * Error { code: 'ECONNREFUSED' }, or an AggregateError when several addresses were tried).
 *
 * A refused connection, an unknown host or a bad certificate will not fix itself within a
 * retry's backoff: those fail at once, naming the URL and the cause. A reset or timed-out
 * connection may well work on the next attempt: those stay retryable.
 */

export interface ConnectionFailure {
  /** The system or undici error code, e.g. `ECONNREFUSED`. */
  code: string;
  /** The cause in a few words: "connection refused". */
  cause: string;
  /** What the user can check. */
  hint: string;
  retryable: boolean;
}

const CHECK_URL = "Check the provider's url (`providers.<id>.url` in the config, or its *_API_URL variable) and that the server is running.";
const CHECK_DNS = 'Check the host name in the url and your network connection.';
const CHECK_TLS = "Check the server's TLS certificate (a private CA can be added with NODE_EXTRA_CA_CERTS).";

const FAILFAST: Record<string, { cause: string; hint: string }> = {
  ECONNREFUSED: { cause: 'connection refused', hint: CHECK_URL },
  ENOTFOUND: { cause: 'host not found', hint: CHECK_DNS },
  EAI_NONAME: { cause: 'host not found', hint: CHECK_DNS },
  EAI_AGAIN: { cause: 'DNS lookup failed; is the network down?', hint: CHECK_DNS },
  EAI_FAIL: { cause: 'DNS lookup failed', hint: CHECK_DNS },
  EHOSTUNREACH: { cause: 'host unreachable', hint: CHECK_DNS },
  ENETUNREACH: { cause: 'network unreachable', hint: CHECK_DNS },
  EPROTO: { cause: 'TLS handshake failed; is it an http:// server?', hint: CHECK_URL },
};

const RETRYABLE: Record<string, string> = {
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response in time',
  UND_ERR_BODY_TIMEOUT: 'the response stopped',
};

/** TLS verification codes from OpenSSL (Node passes them through as `code`). */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|HOSTNAME_MISMATCH$)/;

/** The connection failure behind `err`, or undefined when it is not one. */
export function connectionFailure(err: unknown): ConnectionFailure | undefined {
  if (hasMessage(err, 'bad port', 0)) {
    // fetch refuses the ports of the Fetch standard's "bad port" list (1, 9, 22, 6000…) without connecting.
    return {
      code: 'BAD_PORT',
      cause: 'fetch refuses to connect to this port',
      hint: 'Use another port: fetch blocks a list of well-known ports (https://fetch.spec.whatwg.org/#port-blocking).',
      retryable: false,
    };
  }
  const code = findCode(err, 0);
  if (!code) return undefined;
  const fast = FAILFAST[code];
  if (fast) return { code, ...fast, retryable: false };
  if (TLS_CODE.test(code)) return { code, cause: `certificate problem (${code})`, hint: CHECK_TLS, retryable: false };
  const again = RETRYABLE[code];
  if (again) return { code, cause: again, hint: '', retryable: true };
  return undefined;
}

function hasMessage(e: unknown, message: string, depth: number): boolean {
  if (!(e instanceof Error) || depth > 6) return false;
  return e.message === message || hasMessage(e.cause, message, depth + 1);
}

/** The first error code down the `cause` chain (and into an AggregateError's errors). */
function findCode(e: unknown, depth: number): string | undefined {
  if (!e || typeof e !== 'object' || depth > 6) return undefined;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && (code in FAILFAST || code in RETRYABLE || TLS_CODE.test(code))) return code;
  const fromCause = findCode((e as { cause?: unknown }).cause, depth + 1);
  if (fromCause) return fromCause;
  const errors = (e as { errors?: unknown }).errors;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const c = findCode(inner, depth + 1);
      if (c) return c;
    }
  }
  return typeof code === 'string' && /^E[A-Z_]+$/.test(code) ? code : undefined;
}

export { displayUrl } from '../../util/url.js';

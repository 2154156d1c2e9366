/**
 * An OAuth 2.0 public client, for provider logins and MCP authorization alike: PKCE (RFC 7636,
 * S256 only), the token endpoint (RFC 6749 §4.1.3 code exchange, §6 refresh) and the device
 * authorization grant (RFC 8628). No client secret: patchbay is a public client. Every token that
 * comes back is handed to the log's redaction before anyone can log it.
 *
 * Errors say what the authorization server did wrong in words a person can act on, and never
 * carry the response body (it may hold a token).
 */
import { createHash, randomBytes } from 'node:crypto';
import { deadline, durationText, msFromEnv } from './deadline.js';
import { rememberSecret } from './log.js';

/** How long one call to an authorization server may take (PATCHBAY_OAUTH_TIMEOUT_MS in tests). */
const HTTP_TIMEOUT_MS = 30_000;
/** A token response is a few hundred bytes; more than this is not one. */
const MAX_BODY_BYTES = 256 * 1024;
/** An error description longer than this is cut: it goes into a message to the user. */
const MAX_DESCRIPTION = 200;
/**
 * Device polling interval bounds (seconds): a server's 0.001 would poll every millisecond, its
 * 1e9 would overflow setTimeout (which then fires after 1 ms).
 */
export const MIN_POLL_INTERVAL_S = 1;
export const MAX_POLL_INTERVAL_S = 60;
/** RFC 8628 §3.5: `slow_down` adds 5 seconds. */
const SLOW_DOWN_S = 5;

/**
 * Whether a URL may be used for a login: `https:`, or `http:` only to this machine. Anything else
 * (`http://evil.example`, `file:`, `javascript:`, `data:`) ends up in the editor's browse-url or
 * receives a refresh token, so it is refused.
 */
export function isSafeLoginUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol === 'https:') return true;
  return u.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(u.hostname);
}

export const SAFE_LOGIN_URL_RULE = 'must be https:// (or http:// to 127.0.0.1, localhost or [::1])';

/**
 * OAuth error codes after which retrying the same refresh cannot help (RFC 6749 §5.2): the grant
 * or the client is gone or not allowed; the user has to log in again.
 */
const PERMANENT_CODES = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client', 'invalid_scope', 'unsupported_grant_type']);
/** RFC 6749 §4.1.2.1 codes a token endpoint may send too, meaning "later". */
const TEMPORARY_CODES = new Set(['server_error', 'temporarily_unavailable']);

/**
 * A failure worth retrying later: the server could not be reached, timed out, failed (5xx) or said
 * it is busy. Everything else (a refused grant or client, an unusable answer) fails the same way
 * again, so it is not retried.
 */
export function isTemporaryOAuthFailure(e: unknown): boolean {
  if (!(e instanceof OAuthError)) return false;
  if (e.code !== undefined) return !PERMANENT_CODES.has(e.code) && (TEMPORARY_CODES.has(e.code) || (e.status ?? 0) >= 500);
  return e.network || (e.status ?? 0) >= 500;
}

export function isPermanentOAuthFailure(e: unknown): boolean {
  return e instanceof OAuthError && e.code !== undefined && PERMANENT_CODES.has(e.code);
}

export interface Pkce {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** RFC 7636 §4.1: 32 random bytes as base64url is a 43-character verifier (a given one: for tests). */
export function pkce(verifier = randomBytes(32).toString('base64url')): Pkce {
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url'), method: 'S256' };
}

/** An unguessable `state` (RFC 6749 §10.12): ties a redirect to the request we made. */
export function randomState(): string {
  return randomBytes(24).toString('base64url');
}

export interface Tokens {
  accessToken: string;
  refreshToken?: string;
  /** Epoch seconds, when the server said how long the token lives. */
  expiresAt?: number;
  scope?: string;
}

/** An authorization server answered with an OAuth error (`error` code) or with something unusable. */
export class OAuthError extends Error {
  constructor(
    message: string,
    /** The RFC 6749 §5.2 / RFC 8628 §3.5 error code, when the server sent one. */
    readonly code?: string,
    /** The HTTP status of the answer, when there was one. */
    readonly status?: number,
    /** The server could not be reached or did not answer in time. */
    readonly network = false,
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

export interface AuthorizeUrlParams {
  authorizationUrl: string;
  clientId: string;
  redirectUri: string;
  state: string;
  pkce: Pkce;
  scopes?: readonly string[];
  /** Extra query parameters (RFC 8707 `resource`, a provider's own). */
  extra?: Record<string, string>;
}

/** The URL the user opens (RFC 6749 §4.1.1 with PKCE). */
export function authorizeUrl(p: AuthorizeUrlParams): string {
  const url = new URL(p.authorizationUrl);
  const q = url.searchParams;
  q.set('response_type', 'code');
  q.set('client_id', p.clientId);
  q.set('redirect_uri', p.redirectUri);
  q.set('state', p.state);
  q.set('code_challenge', p.pkce.challenge);
  q.set('code_challenge_method', p.pkce.method);
  if (p.scopes?.length) q.set('scope', p.scopes.join(' '));
  for (const [k, v] of Object.entries(p.extra ?? {})) q.set(k, v);
  return url.toString();
}

export interface TokenRequestOptions {
  tokenUrl: string;
  clientId: string;
  /** A pre-registered confidential client's secret, sent as `client_secret` (RFC 6749 §2.3.1, client_secret_post). */
  clientSecret?: string;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/** RFC 6749 §4.1.3: the code from the redirect, with the PKCE verifier, for tokens. */
export function exchangeCode(o: TokenRequestOptions & { code: string; redirectUri: string; verifier: string; extra?: Record<string, string> }): Promise<Tokens> {
  return tokenRequest(o, { grant_type: 'authorization_code', code: o.code, redirect_uri: o.redirectUri, code_verifier: o.verifier, ...o.extra });
}

/** RFC 6749 §6. A server that sends no new refresh token keeps the old one valid (§6, last paragraph). */
export async function refreshTokens(o: TokenRequestOptions & { refreshToken: string; extra?: Record<string, string> }): Promise<Tokens> {
  const t = await tokenRequest(o, { grant_type: 'refresh_token', refresh_token: o.refreshToken, ...o.extra });
  return { ...t, refreshToken: t.refreshToken ?? o.refreshToken };
}

async function tokenRequest(o: TokenRequestOptions, form: Record<string, string>): Promise<Tokens> {
  const body = await post(o.tokenUrl, { ...form, client_id: o.clientId, ...(o.clientSecret ? { client_secret: rememberSecret(o.clientSecret) } : {}) }, o, 'token endpoint');
  return tokensFrom(body);
}

function tokensFrom(body: Record<string, unknown>): Tokens {
  const access = body.access_token;
  if (typeof access !== 'string' || !access) throw new OAuthError('The token endpoint answered without an access_token');
  const type = body.token_type;
  // RFC 6749 §7.1: we only know how to send bearer tokens.
  if (typeof type === 'string' && type.toLowerCase() !== 'bearer') throw new OAuthError(`The token endpoint sent a "${type.slice(0, 40)}" token; only bearer tokens are supported`);
  const t: Tokens = { accessToken: rememberSecret(access) };
  if (typeof body.refresh_token === 'string' && body.refresh_token) t.refreshToken = rememberSecret(body.refresh_token);
  const expiresIn = Number(body.expires_in);
  if (body.expires_in !== undefined && Number.isFinite(expiresIn) && expiresIn > 0) t.expiresAt = Math.floor(Date.now() / 1000 + expiresIn);
  if (typeof body.scope === 'string') t.scope = body.scope;
  return t;
}

/**
 * A form POST to an authorization server, answered with a JSON object (RFC 6749 §5.1, §5.2).
 * An OAuth error body becomes an OAuthError with its code; anything else unusable says what it was.
 */
async function post(url: string, form: Record<string, string>, o: { signal?: AbortSignal; fetch?: typeof fetch }, what: string): Promise<Record<string, unknown>> {
  const ms = msFromEnv('PATCHBAY_OAUTH_TIMEOUT_MS', HTTP_TIMEOUT_MS);
  // One deadline for the whole answer, body included: a server may send headers and then nothing.
  const d = deadline(ms, o.signal);
  const failed = (e: unknown, otherwise: () => unknown): unknown => {
    if (o.signal?.aborted) return o.signal.reason;
    if (d.expired) return new OAuthError(`The ${what} (${new URL(url).origin}) did not answer within ${durationText(ms)}`, undefined, undefined, true);
    return otherwise();
  };
  try {
    let res: Response;
    try {
      res = await (o.fetch ?? fetch)(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams(form).toString(),
        signal: d.signal,
        redirect: 'error',
      });
    } catch (e) {
      throw failed(e, () => new OAuthError(`Cannot reach the ${what} (${new URL(url).origin}): ${e instanceof Error ? e.message : String(e)}`, undefined, undefined, true));
    }
    let text: string;
    try {
      text = await boundedText(res, what);
    } catch (e) {
      throw failed(e, () => e);
    }
    return answerOf(text, res.status, res.ok, what);
  } finally {
    d.clear();
  }
}

/** A token or device endpoint's answer: a JSON object, or an OAuthError saying what it was instead. */
function answerOf(text: string, status: number, ok: boolean, what: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new OAuthError(`The ${what} answered HTTP ${status} with something that is not JSON`, undefined, status);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError(`The ${what} answered HTTP ${status} with JSON that is not an object`, undefined, status);
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'string') {
    const desc = typeof b.error_description === 'string' ? `: ${b.error_description.slice(0, MAX_DESCRIPTION)}` : '';
    throw new OAuthError(`The ${what} refused: ${b.error.slice(0, 60)}${desc}`, b.error, status);
  }
  if (!ok) throw new OAuthError(`The ${what} answered HTTP ${status}`, undefined, status);
  return b;
}

/** The body as text, refused past MAX_BODY_BYTES (a server that streams forever must not fill our memory). */
async function boundedText(res: Response, what: string): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      throw new OAuthError(`The ${what} answered with more than ${MAX_BODY_BYTES / 1024} KiB: not a token response`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  /** Epoch milliseconds after which the device code is dead. */
  expiresAtMs: number;
  /** Seconds between polls (RFC 8628 §3.2: 5 when the server says nothing). */
  interval: number;
}

/** RFC 8628 §3.1–3.2: asks for a device code and the code the user types. */
export async function startDeviceAuthorization(o: {
  deviceAuthorizationUrl: string;
  clientId: string;
  scopes?: readonly string[];
  signal?: AbortSignal;
  fetch?: typeof fetch;
}): Promise<DeviceAuthorization> {
  const form: Record<string, string> = { client_id: o.clientId };
  if (o.scopes?.length) form.scope = o.scopes.join(' ');
  const b = await post(o.deviceAuthorizationUrl, form, o, 'device authorization endpoint');
  const str = (k: string) => (typeof b[k] === 'string' && b[k] ? (b[k] as string) : undefined);
  const deviceCode = str('device_code');
  const userCode = str('user_code');
  const verificationUri = str('verification_uri') ?? str('verification_url');
  if (!deviceCode || !userCode || !verificationUri) throw new OAuthError('The device authorization endpoint answered without device_code, user_code or verification_uri');
  // Both reach the editor's browse-url: a server must not make it open file:, javascript: or a stranger's http page.
  for (const k of ['verification_uri', 'verification_uri_complete'] as const) {
    const v = k === 'verification_uri' ? verificationUri : str(k);
    if (v !== undefined && !isSafeLoginUrl(v)) throw new OAuthError(`The device authorization endpoint sent a ${k} that is not allowed (it ${SAFE_LOGIN_URL_RULE})`);
  }
  rememberSecret(deviceCode);
  const expiresIn = Number(b.expires_in);
  const interval = Number(b.interval);
  return {
    deviceCode,
    userCode,
    verificationUri,
    ...(str('verification_uri_complete') ? { verificationUriComplete: str('verification_uri_complete') } : {}),
    expiresAtMs: Date.now() + (Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 900) * 1000,
    interval: Number.isFinite(interval) && interval > 0 ? clampInterval(interval) : 5,
  };
}

/**
 * RFC 8628 §3.4–3.5: polls the token endpoint every `interval` seconds until the user approves
 * (tokens), denies (`access_denied`), the code expires (`expired_token` or our own clock), or the
 * signal aborts. `slow_down` adds 5 seconds to the interval for good.
 */
export async function pollDeviceToken(o: TokenRequestOptions & { device: DeviceAuthorization }): Promise<Tokens> {
  let interval = clampInterval(o.device.interval);
  let failures = 0;
  for (;;) {
    // A server that cannot be reached (or fails, 5xx) is waited for with backoff; the code's expiry still ends it.
    await sleep(Math.min(interval * 2 ** failures, MAX_POLL_INTERVAL_S) * 1000, o.signal);
    if (Date.now() >= o.device.expiresAtMs) throw new OAuthError('The device code expired before the login was approved', 'expired_token');
    try {
      return await tokenRequest(o, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: o.device.deviceCode });
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e;
      if (e.code === undefined && isTemporaryOAuthFailure(e)) {
        failures++;
        continue;
      }
      failures = 0;
      if (e.code === 'authorization_pending') continue;
      if (e.code === 'slow_down') {
        interval = clampInterval(interval + SLOW_DOWN_S);
        continue;
      }
      if (e.code === 'access_denied') throw new OAuthError('The login was denied at the authorization server', e.code);
      if (e.code === 'expired_token') throw new OAuthError('The device code expired before the login was approved', e.code);
      throw e;
    }
  }
}

function clampInterval(s: number): number {
  return Math.min(MAX_POLL_INTERVAL_S, Math.max(MIN_POLL_INTERVAL_S, s));
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The fetch under a remote MCP connection that may sign in with OAuth. The SDK sends the
 * transport's `requestInit` headers (config `headers`: API keys and the like) with *every* request
 * its auth() makes, discovery, registration and token requests included, wherever the server's
 * metadata points. Those headers are meant for the MCP server only: they are stripped from any
 * request to another origin.
 *
 * A 401 from the MCP server means "sign in with OAuth" only when it carries a Bearer challenge
 * (MCP authorization, "Authorization Server Discovery"; RFC 6750 §3); any other 401 (a wrong API
 * key) is a failure to show as it is, as ECA does (`src/eca/features/tools/mcp.clj`), not a
 * sign-in to offer.
 */
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { redact } from '../../util/log.js';

/** The MCP server answered 401 without a Bearer challenge: its credentials (headers) are wrong. */
export class NotOAuthUnauthorized extends Error {
  constructor(status: number, text: string) {
    super(`HTTP ${status} Unauthorized${text ? ` (${text})` : ''} with no OAuth (Bearer) challenge: check the server's headers or API key`);
    this.name = 'NotOAuthUnauthorized';
  }
}

export interface GuardedFetchOptions {
  /** The MCP server's URL: configured headers go to its origin only. */
  url: URL;
  /** Configured header names (case-insensitive). */
  headers: readonly string[];
  /** Each response to a request for the MCP URL itself (not discovery or token requests). */
  onMcpResponse?(res: Response): void;
  /**
   * The MCP server asked for a (new) token: awaited before the SDK's auth() sees the 401. An
   * access token returned (another patchbay refreshed meanwhile; ours was adopted) is tried once
   * first: refreshing again would spend a rotating refresh token for nothing.
   */
  onChallenge?(): Promise<string | undefined>;
  /** The retry with the adopted token got through: the refresh lock can go. */
  onRecovered?(): void;
  base?: FetchLike;
}

/**
 * Longest part of a refusal's body quoted into the error (shown to the editor, doctor, the log and
 * maybe the model): enough for "invalid api key", short enough not to carry a page of echoed input.
 */
const MAX_BODY_TEXT = 80;

export function guardedFetch(o: GuardedFetchOptions): FetchLike {
  const base = o.base ?? fetch;
  const names = o.headers.map((h) => h.toLowerCase());
  return async (input, init) => {
    const target = new URL(input instanceof Request ? input.url : input.toString());
    let sent = init;
    if (target.origin !== o.url.origin && names.length && init?.headers) {
      const headers = new Headers(init.headers);
      for (const n of names) headers.delete(n);
      sent = { ...init, headers };
    }
    const res = await base(input, sent);
    if (!isMcpUrl(target, o.url)) return res;
    o.onMcpResponse?.(res);
    if (res.status === 401 && !hasBearerChallenge(res)) {
      const body = (await res.text().catch(() => '')).replace(/\s+/g, ' ').trim();
      throw new NotOAuthUnauthorized(res.status, snippet(body, sent?.headers));
    }
    if (res.status !== 401) return res;
    const adopted = await o.onChallenge?.();
    // A Request's body is spent; the SDK sends (URL, init) with a string body, which can go again.
    if (!adopted || input instanceof Request) return res;
    const headers = new Headers(sent?.headers);
    headers.set('authorization', `Bearer ${adopted}`);
    const again = await base(input, { ...sent, headers });
    o.onMcpResponse?.(again);
    if (again.status !== 401) o.onRecovered?.();
    return again;
  };
}

/** A short piece of a refusal's body with the headers we sent (a server may echo our key) and known secrets redacted. */
function snippet(body: string, sent: RequestInit['headers']): string {
  let s = body;
  if (sent) new Headers(sent).forEach((v) => v.length >= 4 && (s = s.split(v).join('[redacted]')));
  s = redact(s);
  return s.length > MAX_BODY_TEXT ? `${s.slice(0, MAX_BODY_TEXT)}…` : s;
}

/** The MCP endpoint itself (not discovery, registration or token requests, nor other paths). */
function isMcpUrl(target: URL, mcp: URL): boolean {
  return target.origin === mcp.origin && target.pathname === mcp.pathname;
}

export function hasBearerChallenge(res: Response): boolean {
  const h = res.headers.get('www-authenticate');
  return !!h && /(^|,)\s*bearer(\s|$|,)/i.test(h);
}

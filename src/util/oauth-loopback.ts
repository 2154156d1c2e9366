/**
 * The redirect end of an OAuth authorization-code login on this machine (RFC 8252 §7.3): an
 * ephemeral HTTP listener on 127.0.0.1 (never a fixed port: two logins, or two patchbays, must
 * not collide) that takes exactly one callback, the one carrying our `state`, and then closes.
 * A callback with another `state` is answered 400 and otherwise ignored: any web page can send
 * the browser here, and must not be able to cancel the user's login.
 * It also closes on a deadline and when the caller's signal aborts (a newer login, a logout):
 * nothing is left listening whatever happens.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHostHeader } from './loopback.js';
import { OAuthError } from './oauth.js';

export interface LoopbackRedirect {
  /** `http://127.0.0.1:<port><path>`: what goes into the authorization request. */
  redirectUri: string;
  /** The authorization code, once the browser comes back; rejects on error, timeout or abort. */
  code: Promise<string>;
  /** Stops listening (idempotent); a pending `code` rejects. */
  close(): void;
}

export interface LoopbackOptions {
  /** The `state` sent in the authorization request. */
  state: string;
  /** How long the user has to finish in the browser. */
  timeoutMs: number;
  path?: string;
  /** A fixed port (a client registered with one redirect URI); default: any free one. */
  port?: number;
  signal?: AbortSignal;
}

export async function listenForRedirect(o: LoopbackOptions): Promise<LoopbackRedirect> {
  const path = o.path ?? '/callback';
  let settle!: { resolve: (code: string) => void; reject: (e: unknown) => void };
  const code = new Promise<string>((resolve, reject) => (settle = { resolve, reject }));
  // The caller may only look at it later: an early rejection must not be "unhandled".
  code.catch(() => {});
  let done = false;
  let port = 0;

  const server = createServer((req, res) => {
    // DNS rebinding: a web page must not be able to reach this listener by a name of its own.
    if (!isLoopbackHostHeader(req.headers.host, port)) return page(res, 400, 'Bad Host header.');
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== path || done) return page(res, 404, 'Not found.');
    finish(res, url.searchParams);
  });

  const finish = (res: ServerResponse, q: URLSearchParams): void => {
    const error = q.get('error');
    if (q.get('state') !== o.state) return page(res, 400, 'This login link does not match the login patchbay started; patchbay keeps waiting for that one.');
    if (error) {
      const desc = q.get('error_description');
      page(res, 400, `The login failed: ${escapeHtml(error.slice(0, 60))}.`);
      return end(new OAuthError(`The authorization server refused: ${error.slice(0, 60)}${desc ? `: ${desc.slice(0, 200)}` : ''}`, error));
    }
    const c = q.get('code');
    if (!c) {
      page(res, 400, 'The redirect carried no authorization code.');
      return end(new OAuthError('The authorization redirect carried no code'));
    }
    page(res, 200, 'Login complete: you can close this tab and go back to your editor.');
    end(undefined, c);
  };

  const timer = setTimeout(() => end(new OAuthError(`The login timed out after ${Math.round(o.timeoutMs / 1000)} s without the browser coming back`, 'timeout')), o.timeoutMs);
  timer.unref();
  const onAbort = (): void => end(o.signal?.reason ?? new Error('The login was cancelled'));

  function end(err: unknown, value?: string): void {
    if (done) return;
    done = true;
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
    // The answer to the browser is already written: close lets it flush, then drops idle sockets.
    server.close();
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 1_000).unref();
    if (value !== undefined) settle.resolve(value);
    else settle.reject(err);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  if (o.signal?.aborted) onAbort();
  else o.signal?.addEventListener('abort', onAbort, { once: true });
  return { redirectUri: `http://127.0.0.1:${port}${path}`, code, close: () => end(new Error('The login was cancelled')) };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `text` is ours, or escaped by the caller. */
function page(res: ServerResponse, status: number, text: string): void {
  const body = `<!doctype html><meta charset="utf-8"><title>patchbay login</title><p>${text}</p>\n`;
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
  res.end(body);
}

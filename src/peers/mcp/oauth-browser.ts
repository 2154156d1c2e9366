/**
 * The user's part of an MCP sign-in (`mcp/connectServer`), as ECA does it
 * (`src/eca/features/tools/mcp.clj` `connect-server!`, `src/eca/oauth.clj`): a loopback listener
 * for the redirect (RFC 8252 §7.3) at ECA's path `/auth/callback` on 127.0.0.1 (port `oauthPort`
 * or any free one), or exactly at a configured `redirectUri`; and the authorization URL opened in
 * the browser (`$BROWSER` when set, else `open` / `xdg-open` / `rundll32`), and logged in case no
 * browser can be opened here.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorMessage, type Logger } from '../../util/log.js';
import { isLoopbackHostHeader } from '../../util/loopback.js';
import type { OAuthUser } from './oauth-provider.js';
import { isSafeLoginUrl } from '../../util/oauth.js';

/** ECA's redirect path (`src/eca/oauth.clj`), so a client registered for ECA's redirect fits. */
export const CALLBACK_PATH = '/auth/callback';
/** Error texts from the authorization server are quoted into logs and `tool/serverUpdated`: kept short. */
const MAX_ERROR_TEXT = 200;

export interface BrowserUserOptions {
  /** 0: any free port. */
  port: number;
  /** The exact loopback redirect URI to listen at (config `redirectUri`, checked by config.ts); overrides `port`. */
  redirectUri?: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** How long the user has to come back. */
  timeoutMs: number;
  /** Told the authorization URL (the editor may show it). */
  opened?(url: string, browserStarted: boolean): void;
}

export interface BrowserUser extends OAuthUser {
  /** Stops listening; a pending `code()` is rejected. */
  close(): Promise<void>;
  /** Opens the page of the sign-in still waiting for the user again (a second connect); false if none waits. */
  reopen(): boolean;
}

export async function browserUser(o: BrowserUserOptions): Promise<BrowserUser> {
  let waiting: { state: string; resolve(code: string): void; reject(e: Error): void } | undefined;
  let pending: Promise<string> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastHref: string | undefined;
  const settle = (fn: (w: NonNullable<typeof waiting>) => void) => {
    const w = waiting;
    waiting = undefined;
    clearTimeout(timer);
    if (w) fn(w);
  };

  const fixed = o.redirectUri ? new URL(o.redirectUri) : undefined;
  const path = fixed?.pathname ?? CALLBACK_PATH;
  // localhost is served on 127.0.0.1, where browsers also look for it.
  const host = fixed?.hostname === '[::1]' ? '::1' : '127.0.0.1';
  let port = 0;
  const server: Server = createServer((req, res) => {
    // DNS rebinding: a web page must not reach this listener under a name of its own.
    if (!isLoopbackHostHeader(req.headers.host, port)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad Host header');
      return;
    }
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://127.0.0.1');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('Bad request');
      return;
    }
    if (req.method !== 'GET' || url.pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    const q = url.searchParams;
    // A stray or forged redirect (wrong state) must not end the sign-in the user is doing.
    if (!waiting || q.get('state') !== waiting.state) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('This sign-in is not the one patchbay is waiting for.');
      return;
    }
    const code = q.get('code');
    const error = q.get('error');
    if (code) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page('Signed in', 'You can close this tab and return to your editor.'));
      settle((w) => w.resolve(code));
      return;
    }
    const why = short(`${error ?? 'no code'}${q.get('error_description') ? `: ${q.get('error_description')}` : ''}`);
    res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(page('Sign-in failed', why));
    settle((w) => w.reject(new Error(`the authorization server answered ${why}`)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(fixed ? Number(fixed.port) : o.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    redirectUrl: fixed ? fixed.href : `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    authorize(url, state) {
      const href = url.toString();
      if (!browsableUrl(href))
        return Promise.reject(new Error(`the authorization server's sign-in page is not a web page (${short(url.protocol)} URL): only https, or http to this machine, is opened`));
      settle((w) => w.reject(new Error('a newer sign-in started')));
      pending = new Promise<string>((resolve, reject) => (waiting = { state, resolve, reject }));
      // Whoever awaits code() sees the rejection; this keeps an unawaited one from crashing.
      pending.catch(() => {});
      timer = setTimeout(() => settle((w) => w.reject(new Error(`no sign-in within ${Math.round(o.timeoutMs / 1000)} s`))), o.timeoutMs);
      timer.unref();
      lastHref = href;
      void openBrowser(href, o.env, o.log).then((started) => o.opened?.(href, started));
      return Promise.resolve();
    },
    code() {
      return pending ?? Promise.reject(new Error('no sign-in was started'));
    },
    reopen() {
      if (!waiting || !lastHref) return false;
      const href = lastHref;
      void openBrowser(href, o.env, o.log).then((started) => o.opened?.(href, started));
      return true;
    },
    close() {
      settle((w) => w.reject(new Error('sign-in cancelled')));
      return new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * Only a web page may be opened: the URL comes from the authorization server's metadata, and a
 * `file:`, `smb:`, `search-ms:` or app-scheme URL handed to the system opener runs or reveals
 * things on this machine. Plain http only to this machine (a local authorization server).
 */
export function browsableUrl(url: string): boolean {
  // The same rule as a provider login's URLs (util/oauth.ts).
  return isSafeLoginUrl(url);
}

/**
 * The command line that opens `url` in the browser. Never through a shell: on Windows `cmd /c
 * start` would split the URL at each `&` and run the rest as commands, so the URL goes to the
 * shell's URL handler (`rundll32 url.dll,FileProtocolHandler`) as one argument.
 */
export function browserCommand(url: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string[] {
  const custom = env.BROWSER?.trim();
  if (custom) return [...custom.split(/\s+/), url];
  if (platform === 'darwin') return ['open', url];
  if (platform === 'win32') return ['rundll32', 'url.dll,FileProtocolHandler', url];
  return ['xdg-open', url];
}

/**
 * Starts the user's browser on `url` (a browsableUrl); resolves false when no opener could be
 * started (ENOENT comes as an 'error' event, after spawn() returned).
 */
function openBrowser(url: string, env: NodeJS.ProcessEnv, log: Logger): Promise<boolean> {
  const [cmd, ...args] = browserCommand(url, env, process.platform);
  const failed = (e: unknown): boolean => {
    log.warn(`could not open a browser (${cmd}): ${errorMessage(e)}; open the sign-in URL yourself`);
    return false;
  };
  try {
    const child = spawn(cmd, args, { detached: true, stdio: 'ignore', env, windowsHide: true });
    child.unref();
    return new Promise((resolve) => {
      child.once('spawn', () => resolve(true));
      child.once('error', (e) => resolve(failed(e)));
    });
  } catch (e) {
    return Promise.resolve(failed(e));
  }
}

function short(s: string): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > MAX_ERROR_TEXT ? `${line.slice(0, MAX_ERROR_TEXT)}…` : line;
}

function page(title: string, text: string): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><meta charset="utf-8"><title>${esc(title)}</title><h1>${esc(title)}</h1><p>${esc(text)}</p>`;
}

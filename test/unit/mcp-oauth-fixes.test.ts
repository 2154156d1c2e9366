/**
 * What a review of MCP OAuth found, each against the real protected server of
 * test/fixtures/mcp-oauth.mjs (and its scripted browser, test/fixtures/oauth-browser.mjs):
 * configured headers stay with the MCP server, a 401 without a Bearer challenge is a failure,
 * one sign-in per server that a stop ends, the SSE transport signs in, the redirect listener,
 * and two patchbays sharing one secret store.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSecretStore } from '../../src/util/secrets.js';
import { ctx, fixture, tempDir, text, useHosts, waitFor } from '../support/mcp-helpers.js';
import { approvingUser, useProtectedServers } from '../support/mcp-oauth.js';

const dirs: string[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const host = useHosts();

function scratch(): string {
  const d = tempDir();
  dirs.push(d);
  return d;
}

const protectedServer = useProtectedServers();

const get = async <T>(base: string, path: string): Promise<T> => (await (await fetch(`${base}${path}`)).json()) as T;

/** The scripted browser as $BROWSER, logging each URL it is given. */
function browserEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv & { OAUTH_BROWSER_LOG: string } {
  return { ...process.env, BROWSER: `${process.execPath} ${fixture('oauth-browser.mjs')}`, OAUTH_BROWSER_LOG: join(dir, 'browser.log'), ...extra };
}

const opened = (log: string): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);

describe('MCP OAuth: configured headers and 401s', () => {
  it('a configured API key goes to the MCP server, never to the metadata and authorization server on another origin', async () => {
    const f = await protectedServer('--metadata-elsewhere');
    const t = host(
      { secure: { url: f.url, headers: { 'X-Api-Key': 'sekrit' } } },
      { secrets: new FileSecretStore(join(scratch(), 's.json')), oauthUser: () => approvingUser(), restart: { maxRestarts: 0 } },
    );
    await t.host.start('secure');
    expect(t.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });
    const requests = await get<Array<{ origin: string; path: string; apiKey: string | null }>>(f.base, '/_requests');
    const elsewhere = requests.filter((r) => r.origin === 'other');
    // Discovery, registration and the token request all went to the other origin...
    expect(elsewhere.map((r) => r.path)).toEqual(expect.arrayContaining(['/.well-known/oauth-protected-resource/mcp', '/register', '/token']));
    // ...without the key, which the MCP server itself got.
    expect(elsewhere.filter((r) => r.apiKey !== null)).toEqual([]);
    expect(requests.filter((r) => r.origin === 'main' && r.path === '/mcp').every((r) => r.apiKey === 'sekrit')).toBe(true);
  });

  it('a 401 with no Bearer challenge (a wrong API key) is a failure showing the 401, not requires-auth', async () => {
    const f = await protectedServer('--plain-401');
    const t = host({ secure: { url: f.url, headers: { 'X-Api-Key': 'wrong' } } }, { secrets: new FileSecretStore(join(scratch(), 's.json')), restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    const info = t.host.servers()[0];
    expect(info.status).toBe('failed');
    expect(info.lastError).toMatch(/HTTP 401 Unauthorized .*missing API key.* no OAuth \(Bearer\) challenge/);
    expect(t.statuses('secure')).not.toContain('requires-auth');
    // Nothing was discovered or registered for a server that does not speak OAuth.
    expect((await get<Array<{ what: string }>>(f.base, '/_log')).map((e) => e.what)).not.toContain('register');
  });
});

describe('MCP OAuth: one sign-in at a time, ended by a stop', () => {
  it('connect again while the user is at the authorization page: the same page opens again, and approving it signs in', async () => {
    const f = await protectedServer();
    const dir = scratch();
    const env = browserEnv(dir, { OAUTH_BROWSER_STALL: '1' });
    const t = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(join(dir, 's.json')), env, restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    expect(t.host.servers()[0].status).toBe('requires-auth');
    const first = t.host.signIn('secure');
    await waitFor(() => opened(env.OAUTH_BROWSER_LOG).length === 1, 'the sign-in page opened');
    // The user closed the tab and connects again; this time they approve.
    delete env.OAUTH_BROWSER_STALL;
    const second = t.host.signIn('secure');
    await Promise.all([first, second]);
    expect(t.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });
    const pages = opened(env.OAUTH_BROWSER_LOG);
    expect(pages).toHaveLength(2);
    expect(pages[1]).toBe(pages[0]);
    expect(text(await t.tools.get('secure__whoami')!.call({}, ctx()))).toBe('signed in with scope mcp');
  });

  it('a stop during a scope step-up sign-in ends it at once and closes the redirect listener', async () => {
    const f = await protectedServer();
    const dir = scratch();
    const env = browserEnv(dir);
    const t = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(join(dir, 's.json')), env, restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    await t.host.signIn('secure');
    // The admin tool wants more scope: with nobody there, the server waits for a sign-in.
    expect((await t.tools.get('secure__admin')!.call({}, ctx())).error).toBe(true);
    await waitFor(() => t.host.servers()[0].status === 'requires-auth', 'requires-auth after the step-up');

    // This time the user never comes back from the authorization page.
    env.OAUTH_BROWSER_STALL = '1';
    const signingIn = t.host.signIn('secure');
    await waitFor(() => opened(env.OAUTH_BROWSER_LOG).length === 2, 'the step-up page opened');
    const redirect = new URL(new URL(opened(env.OAUTH_BROWSER_LOG)[1]).searchParams.get('redirect_uri')!);
    await t.host.stop('secure');
    await signingIn;
    expect(t.host.servers()[0].status).toBe('stopped');
    await expect(fetch(redirect)).rejects.toThrow();
  });

  it('an oauthPort that is taken: failed, with lastError saying why', async () => {
    const f = await protectedServer();
    const busy = createServer();
    servers.push(busy);
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const port = (busy.address() as { port: number }).port;
    const dir = scratch();
    const t = host({ secure: { url: f.url, oauthPort: port } }, { secrets: new FileSecretStore(join(dir, 's.json')), env: browserEnv(dir), restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    expect(t.host.servers()[0].status).toBe('requires-auth');
    await t.host.signIn('secure');
    const info = t.host.servers()[0];
    expect(info.status).toBe('failed');
    expect(info.lastError).toMatch(new RegExp(`cannot listen for the sign-in redirect on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    expect(t.statuses('secure').at(-1)).toBe('failed');
  });

  it('redirectUri: the sign-in registers and listens at exactly that URI', async () => {
    const f = await protectedServer();
    const free = createServer();
    await new Promise<void>((r) => free.listen(0, '127.0.0.1', r));
    const port = (free.address() as { port: number }).port;
    await new Promise((r) => free.close(r));
    const redirectUri = `http://localhost:${port}/oauth/mcp-back`;
    const dir = scratch();
    const t = host({ secure: { url: f.url, redirectUri } }, { secrets: new FileSecretStore(join(dir, 's.json')), env: browserEnv(dir), restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    await t.host.signIn('secure');
    expect(t.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });
    const log = await get<Array<{ what: string; redirect_uris?: string[] }>>(f.base, '/_log');
    expect(log.find((e) => e.what === 'register')?.redirect_uris).toEqual([redirectUri]);
  });
});

describe('MCP OAuth over the SSE transport', () => {
  it('type "sse": the browser sign-in completes and the server runs over SSE', async () => {
    const f = await protectedServer('--sse');
    const dir = scratch();
    const env = browserEnv(dir);
    const t = host({ secure: { url: f.url, type: 'sse' } }, { secrets: new FileSecretStore(join(dir, 's.json')), env, restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    expect(t.host.servers()[0].status).toBe('requires-auth');
    await t.host.signIn('secure');
    expect(t.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });
    expect((await get<Array<{ what: string }>>(f.base, '/_log')).map((e) => e.what)).toContain('sse-open');
    expect(text(await t.tools.get('secure__whoami')!.call({}, ctx()))).toBe('signed in with scope mcp');
    expect(opened(env.OAUTH_BROWSER_LOG)).toHaveLength(1);
  });
});

describe('two patchbays sharing one secret store', () => {
  it("a logout in one is not undone by the other's refresh", async () => {
    const f = await protectedServer();
    const dir = scratch();
    const file = join(dir, 's.json');
    // A signs in through the browser: after its logout nobody signs it in again.
    const a = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(file), env: browserEnv(dir), restart: { maxRestarts: 0 } });
    await a.host.start('secure');
    await a.host.signIn('secure');
    const b = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(file), restart: { maxRestarts: 0 } });
    await b.host.start('secure');
    expect(b.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });

    await a.host.logout('secure');
    // The access tokens expire; B still holds a refresh token issued before the logout.
    await fetch(`${f.base}/_revoke`, { method: 'POST' });
    const r = await b.tools.get('secure__whoami')!.call({}, ctx());
    expect(r.error).toBe(true);
    await waitFor(() => b.host.servers()[0].status === 'requires-auth', 'B requires-auth after the logout');
    const stored = JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['mcp/secure/tokens'] as string) as Record<string, unknown>;
    expect(stored.loggedOut).toEqual(expect.any(Number));
    expect(stored.value).toBeUndefined();
    expect((await get<Array<{ what: string; grant?: string }>>(f.base, '/_log')).filter((e) => e.grant === 'refresh_token')).toEqual([]);
  });

  it("rotating refresh tokens: the one that refreshed second adopts the other's tokens instead of deleting them", async () => {
    const f = await protectedServer('--rotate');
    const file = join(scratch(), 's.json');
    const a = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(file), oauthUser: () => approvingUser(), restart: { maxRestarts: 0 } });
    await a.host.start('secure');
    const b = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(file), restart: { maxRestarts: 0 } });
    await b.host.start('secure');

    await fetch(`${f.base}/_revoke`, { method: 'POST' });
    // A refreshes first: the refresh token B read is spent.
    expect(text(await a.tools.get('secure__whoami')!.call({}, ctx()))).toBe('signed in with scope mcp');
    expect(text(await b.tools.get('secure__whoami')!.call({}, ctx()))).toBe('signed in with scope mcp');
    expect(b.host.servers()[0].status).toBe('running');
    const stored = JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['mcp/secure/tokens'] as string) as { value?: { access_token: string } };
    expect(stored.value?.access_token).toMatch(/^at-/);
    // And A still gets in with what is stored.
    expect(text(await a.tools.get('secure__whoami')!.call({}, ctx()))).toBe('signed in with scope mcp');
  });

  it('rotating refresh tokens, both refreshing at once: the lock lets one refresh, the other adopts; both keep working', async () => {
    const f = await protectedServer('--rotate', '--slow-refresh');
    const file = join(scratch(), 's.json');
    const a = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(file), oauthUser: () => approvingUser(), restart: { maxRestarts: 0 } });
    await a.host.start('secure');
    const b = host({ secure: { url: f.url } }, { secrets: new FileSecretStore(file), restart: { maxRestarts: 0 } });
    await b.host.start('secure');
    const refreshes = async () => (await get<Array<{ what: string; grant?: string }>>(f.base, '/_log')).filter((e) => e.what === 'token' && e.grant === 'refresh_token').length;
    for (let round = 0; round < 3; round++) {
      const before = await refreshes();
      await fetch(`${f.base}/_revoke`, { method: 'POST' });
      const [ra, rb] = await Promise.all([a.tools.get('secure__whoami')!.call({}, ctx()), b.tools.get('secure__whoami')!.call({}, ctx())]);
      expect([text(ra), text(rb)]).toEqual(['signed in with scope mcp', 'signed in with scope mcp']);
      // One refresh per revocation: the other process adopted its tokens instead of refreshing too.
      expect((await refreshes()) - before).toBe(1);
    }
    expect(b.host.servers()[0].status).toBe('running');
    expect(a.host.servers()[0].status).toBe('running');
    // No lock file is left behind.
    expect(existsSync(`${file}.mcp-secure.lock`)).toBe(false);
  });
});

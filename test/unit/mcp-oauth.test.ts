/**
 * The MCP host's OAuth client against test/fixtures/mcp-oauth.mjs (a real protected MCP server
 * and authorization server on loopback), with a scripted user as the conformance driver has one:
 * what is stored where, what a removed server forgets, and what happens with nobody to sign in.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpOAuthProvider } from '../../src/peers/mcp/oauth-provider.js';
import { clientCredentialsClient } from '../../src/peers/mcp/oauth-machine.js';
import { FileSecretStore } from '../../src/util/secrets.js';
import { logger } from '../../src/util/log.js';
import { ctx, fixture, tempDir, text, useHosts, waitFor } from '../support/mcp-helpers.js';
import { approvingUser, useProtectedServers } from '../support/mcp-oauth.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const host = useHosts();
const protectedServer = useProtectedServers();

/** A file secret store in a temp dir removed after the test. */
function fileStore(): FileSecretStore {
  const dir = tempDir();
  dirs.push(dir);
  return new FileSecretStore(join(dir, 'secrets.json'));
}

describe('MCP OAuth in the host', () => {
  it('signs in with a user at hand, calls tools with the token, and forgetServerCredentials deletes every stored credential', async () => {
    const { url } = await protectedServer();
    const store = fileStore();
    const user = approvingUser('http://127.0.0.1:1/callback');
    const t = host({ secure: { url } }, { secrets: store, oauthUser: () => user, restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    expect(t.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });
    expect(text(await t.tools.get('secure__whoami')!.call({}, ctx()))).toBe('signed in with scope mcp');
    expect(user.opened).toBe(1);
    expect(await store.get('mcp/secure/tokens')).toContain('"access_token"');
    expect(await store.get('mcp/secure/client')).toContain('"client_id"');

    await t.host.forgetServerCredentials('secure');
    for (const k of ['tokens', 'client', 'verifier']) expect(await store.get(`mcp/secure/${k}`)).toBeUndefined();
  });

  it('scope step-up with a refresh token held: the SDK refreshes (same scope) and meets the same 403; patchbay signs in again for the wider scope', async () => {
    const { url, base } = await protectedServer();
    const user = approvingUser('http://127.0.0.1:1/callback');
    const t = host({ secure: { url } }, { secrets: fileStore(), oauthUser: () => user, restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    const r = await t.tools.get('secure__admin')!.call({}, ctx());
    expect(text(r)).toBe('admin done');
    expect(user.opened).toBe(2);
    const log = (await (await fetch(`${base}/_log`)).json()) as Array<{ what: string; scope?: string; grant?: string }>;
    expect(log.filter((e) => e.what === 'authorize').map((e) => e.scope)).toEqual(['mcp', 'mcp admin']);
    expect(log.filter((e) => e.what === 'token').map((e) => e.grant)).toEqual(['authorization_code', 'refresh_token', 'authorization_code']);
  });

  it('scope step-up with nobody there: the call fails saying so, the server goes requires-auth, and the next sign-in (browser) asks for the wider scope', async () => {
    const { url, base } = await protectedServer();
    const dir = tempDir();
    dirs.push(dir);
    const env = { ...process.env, BROWSER: `${process.execPath} ${fixture('oauth-browser.mjs')}` };
    const t = host({ secure: { url } }, { secrets: fileStore(), env, restart: { maxRestarts: 0 } });
    await t.host.start('secure');
    expect(t.host.servers()[0].status).toBe('requires-auth');
    await t.host.signIn('secure');
    expect(t.host.servers()[0]).toMatchObject({ status: 'running', hasAuth: true });

    const denied = await t.tools.get('secure__admin')!.call({}, ctx());
    expect(denied.error).toBe(true);
    expect(text(denied)).toMatch(/requires authorization: connect it from the editor/);
    await waitFor(() => t.host.servers()[0].status === 'requires-auth', 'requires-auth after the step-up');

    await t.host.signIn('secure');
    expect(t.host.servers()[0].status).toBe('running');
    expect(text(await t.tools.get('secure__admin')!.call({}, ctx()))).toBe('admin done');
    const log = (await (await fetch(`${base}/_log`)).json()) as Array<{ what: string; scope?: string }>;
    expect(log.filter((e) => e.what === 'authorize').map((e) => e.scope)).toEqual(['mcp', 'mcp admin']);
  });

  it('with nobody to sign in: requires-auth, no registration made, nothing stored, no retries', async () => {
    const { url, base } = await protectedServer();
    const store = fileStore();
    const t = host({ secure: { url } }, { secrets: store, restart: { baseDelayMs: 10, maxRestarts: 3 } });
    await t.host.start('secure');
    expect(t.host.servers()[0]).toMatchObject({ status: 'requires-auth', hasAuth: false });
    expect(t.host.servers()[0].lastError).toBeUndefined();
    await new Promise((r) => setTimeout(r, 200));
    expect(t.statuses('secure')).toEqual(['starting', 'requires-auth']);
    const log = (await (await fetch(`${base}/_log`)).json()) as Array<{ what: string }>;
    expect(log.map((e) => e.what)).not.toContain('register');
    expect(await store.get('mcp/secure/client')).toBeUndefined();
  });

  it('stored credentials are bound to the server URL: an entry pointed elsewhere never gets them', async () => {
    const store = fileStore();
    const log = logger('test');
    const a = new McpOAuthProvider({ server: 's', url: 'http://127.0.0.1:1/mcp', store, log });
    await a.saveTokens({ access_token: 'at-bound-to-a', token_type: 'Bearer' });
    const same = new McpOAuthProvider({ server: 's', url: 'http://127.0.0.1:1/mcp', store, log });
    await same.load();
    expect(same.tokens()?.access_token).toBe('at-bound-to-a');
    const other = new McpOAuthProvider({ server: 's', url: 'http://evil.example/mcp', store, log });
    await other.load();
    expect(other.tokens()).toBeUndefined();
    expect(other.authorized).toBe(false);
  });

  it('a damaged stored entry counts as none', async () => {
    const store = fileStore();
    await store.set('mcp/s/tokens', '{not json');
    const p = new McpOAuthProvider({ server: 's', url: 'http://127.0.0.1:1/mcp', store, log: logger('test') });
    await p.load();
    expect(p.tokens()).toBeUndefined();
  });

  it('a client_credentials client shows hasAuth only while it holds a token, and forgets it', async () => {
    const c = clientCredentialsClient({ clientId: 'machine', clientSecret: 'machine-secret-value' });
    expect(c.authorized).toBe(false);
    await c.saveTokens({ access_token: 'at-machine', token_type: 'Bearer' });
    expect(c.authorized).toBe(true);
    await c.forget();
    expect(c.authorized).toBe(false);
    expect(c.redirectUrl).toBeUndefined();
  });
});

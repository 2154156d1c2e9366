/**
 * Two ProviderLogins (src/runtime/provider-logins.ts) on one PATCHBAY_HOME, as two editor windows
 * each with its own patchbay: one real 0600 file store, one login index, one lock directory, and
 * the fake authorization server (test/fixtures/fake-oauth.ts), whose refresh tokens rotate (each
 * works once, as with providers that detect reuse). Follows ECA's login.clj `renew-auth!` (#462):
 * a cross-process lock around re-read → refresh → write, and a peer's refresh is taken, not redone.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProviderLoginConfig } from '../../src/peers/llm/index.js';
import { ProviderLogins, type Credential } from '../../src/runtime/provider-logins.js';
import { FileSecretStore, type SecretStore } from '../../src/util/secrets.js';
import { useLoginsFixture } from '../support/provider-logins.js';

const fx = useLoginsFixture();
const { dirs, instances } = fx;

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pb-logins-shared-'));
  dirs.push(dir);
  return dir;
}

/** One patchbay on `dir`; `known` as its config would say. */
function window(dir: string, o: { known?: string[]; store?: SecretStore } = {}) {
  const notices: string[] = [];
  const changes: string[] = [];
  const logins = new ProviderLogins({
    store: o.store ?? new FileSecretStore(join(dir, 'secrets.json')),
    indexFile: join(dir, 'logins.json'),
    providers: () => ({ acme: { api: 'openai-chat', login: fx.auth.loginConfig() as ProviderLoginConfig } }),
    known: () => o.known ?? ['openai', 'acme'],
    overriddenBy: () => undefined,
    changed: async (id) => void changes.push(id),
    notice: (type, message) => notices.push(`${type}: ${message}`),
  });
  instances.push(logins);
  return { logins, notices, changes };
}

const now = (): number => Math.floor(Date.now() / 1000);

/** A stored login from an earlier session, `left` seconds from expiry, with a refresh token the server honours. */
async function storedLogin(dir: string, left: number): Promise<Credential> {
  const t = fx.auth.grant();
  const cred: Credential = { type: 'oauth', mode: 'browser', accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: now() + left };
  await new FileSecretStore(join(dir, 'secrets.json')).set('provider/acme', JSON.stringify(cred));
  writeFileSync(join(dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
  return cred;
}

const refreshes = () => fx.auth.tokenRequests.filter((r) => r.grantType === 'refresh_token');

describe('two patchbays sharing a login', () => {
  it('both timers fire at the same instant: one token request, both end with its token, nobody is told to log in again', async () => {
    const dir = home();
    // Inside the refresh margin at start: both windows' timers fire at once.
    await storedLogin(dir, 10);
    // A slow server widens the window in which both would send the same (rotating) refresh token.
    fx.auth.tokenDelayMs = 300;
    const a = window(dir);
    const b = window(dir);
    await Promise.all([a.logins.load(), b.logins.load()]);
    await waitFor(() => refreshes().length > 0 && a.logins.keys().acme === fx.auth.issued.at(-2) && b.logins.keys().acme === fx.auth.issued.at(-2));
    // Long enough for a second request (and its invalid_grant) to have come back.
    await new Promise((r) => setTimeout(r, 700));
    expect(refreshes()).toHaveLength(1);
    expect([...a.notices, ...b.notices]).toEqual([]);
  });

  it('invalid_grant because another patchbay (without the lock) already refreshed: its newer login is taken, not "log in again"', async () => {
    const dir = home();
    const old = await storedLogin(dir, 10);
    const a = window(dir);
    fx.auth.tokenDelayMs = 300;
    fx.auth.tokenModes = ['invalid_grant'];
    const loaded = a.logins.load();
    // While A's refresh is at the server, the peer stores what it got with the same refresh token.
    await new Promise((r) => setTimeout(r, 100));
    const theirs = { ...old, accessToken: 'theirs-access-0123456789', refreshToken: 'theirs-refresh-0123456789', expiresAt: now() + 7200 };
    await loaded;
    await new FileSecretStore(join(dir, 'secrets.json')).set('provider/acme', JSON.stringify(theirs));
    await waitFor(() => a.logins.keys().acme === 'theirs-access-0123456789');
    await waitFor(() => a.changes.length > 0);
    expect(a.notices).toEqual([]);
  });

  it('a refresh after the other window logged out takes the logout: nothing is stored again, no token request', async () => {
    const dir = home();
    await storedLogin(dir, 61);
    const a = window(dir);
    const b = window(dir);
    await Promise.all([a.logins.load(), b.logins.load()]);
    await b.logins.logout('acme');
    await new Promise((r) => setTimeout(r, 1100));
    await a.logins.ensureFresh('acme');
    expect(refreshes()).toHaveLength(0);
    expect(a.logins.keys()).toEqual({});
    expect(await new FileSecretStore(join(dir, 'secrets.json')).get('provider/acme')).toBeUndefined();
  });

  it("the login index keeps both windows' logins, and one for a provider this window does not know is loaded, listed and can be logged out of", async () => {
    const dir = home();
    const a = window(dir, { known: ['openai', 'acme', 'other'] });
    const b = window(dir);
    await a.logins.load();
    await b.logins.load();
    await a.logins.input('other', { 'api-key': 'other-key-0123456789' });
    // B started before A's login: its memory has none of it, and it must not write that back.
    await b.logins.input('acme', { 'api-key': 'acme-key-0123456789' });
    expect(JSON.parse(readFileSync(join(dir, 'logins.json'), 'utf8'))).toEqual({ providers: ['acme', 'other'] });
    // A third window whose config has no "other".
    const c = window(dir);
    await c.logins.load();
    expect(c.logins.keys()).toEqual({ acme: 'acme-key-0123456789', other: 'other-key-0123456789' });
    expect(c.logins.storedIds().sort()).toEqual(['acme', 'other']);
    await c.logins.logout('other');
    expect(c.logins.storedIds()).toEqual(['acme']);
    expect(JSON.parse(readFileSync(join(dir, 'logins.json'), 'utf8'))).toEqual({ providers: ['acme'] });
    // An id with no login and no config is still refused.
    await expect(c.logins.logout('nobody')).rejects.toThrow(/Unknown provider: nobody/);
  });
});

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

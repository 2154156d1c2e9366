/**
 * ProviderLogins (src/runtime/provider-logins.ts) when things overlap or fail: a logout or an API
 * key typed while a login is finishing wins; a login whose tokens cannot be stored says so; a
 * refresh that fails is retried only when the failure is temporary, and the user hears of it once
 * per streak. Real file store, the fake authorization server over real HTTP.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProviderLoginConfig } from '../../src/peers/llm/index.js';
import { ProviderLogins } from '../../src/runtime/provider-logins.js';
import { FileSecretStore, type SecretStore } from '../../src/util/secrets.js';
import { useLoginsFixture } from '../support/provider-logins.js';

const fx = useLoginsFixture();
const { dirs, instances } = fx;

function setup(store?: (file: FileSecretStore) => SecretStore) {
  const dir = mkdtempSync(join(tmpdir(), 'pb-logins-races-'));
  dirs.push(dir);
  const file = new FileSecretStore(join(dir, 'secrets.json'));
  const notices: string[] = [];
  const changes: string[] = [];
  const logins = new ProviderLogins({
    store: store ? store(file) : file,
    indexFile: join(dir, 'logins.json'),
    providers: () => ({ acme: { api: 'openai-chat', login: fx.auth.loginConfig() as ProviderLoginConfig } }),
    known: () => ['acme'],
    overriddenBy: () => undefined,
    changed: async (id) => void changes.push(id),
    notice: (type, message) => notices.push(`${type}: ${message}`),
  });
  instances.push(logins);
  return { dir, file, logins, notices, changes };
}

/** Starts a paste login and returns the code the authorization server showed. */
async function pasteCode(logins: ProviderLogins): Promise<string> {
  const step = await logins.login('acme', 'paste');
  if (step.kind !== 'authorize') throw new Error(`unexpected step ${step.kind}`);
  const location = new URL((await fetch(step.url, { redirect: 'manual' })).headers.get('location')!);
  return location.searchParams.get('code')!;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const now = (): number => Math.floor(Date.now() / 1000);

describe('a login finishing while the user moves on', () => {
  it('a logout during the code exchange wins: the exchange is abandoned, nothing is stored', async () => {
    const { file, logins } = setup();
    const code = await pasteCode(logins);
    fx.auth.tokenDelayMs = 400;
    const finishing = logins.input('acme', { code });
    await sleep(100);
    await logins.logout('acme');
    await expect(finishing).rejects.toThrow(/cancelled|nothing was stored/);
    await sleep(500);
    expect(logins.keys()).toEqual({});
    expect(await file.get('provider/acme')).toBeUndefined();
  });

  it('an API key typed during the code exchange stays: the late tokens do not overwrite it', async () => {
    const { file, logins } = setup();
    const code = await pasteCode(logins);
    fx.auth.tokenDelayMs = 400;
    const finishing = logins.input('acme', { code });
    await sleep(100);
    await logins.input('acme', { 'api-key': 'typed-key-0123456789' });
    await expect(finishing).rejects.toThrow();
    await sleep(500);
    expect(logins.keys()).toEqual({ acme: 'typed-key-0123456789' });
    expect(JSON.parse((await file.get('provider/acme'))!)).toEqual({ type: 'api-key', key: 'typed-key-0123456789' });
  });

  it('a background login whose tokens cannot be stored says so (error notice, providers changed)', async () => {
    const { logins, notices, changes } = setup((file) => ({
      kind: 'file',
      where: file.where,
      get: (k) => file.get(k),
      delete: (k) => file.delete(k),
      set: () => Promise.reject(new Error('disk full')),
    }));
    fx.auth.device.pending = 0;
    const step = await logins.login('acme', 'device');
    expect(step.kind).toBe('deviceCode');
    const until = Date.now() + 5000;
    while (!notices.length && Date.now() < until) await sleep(50);
    expect(notices).toEqual(['error: Login to acme succeeded, but storing it failed: disk full']);
    expect(changes).toEqual(['acme']);
    expect(logins.keys()).toEqual({});
  });
});

describe('a refresh that fails', () => {
  async function loggedIn(o: ReturnType<typeof setup>, left: number) {
    const t = fx.auth.grant();
    await o.file.set('provider/acme', JSON.stringify({ type: 'oauth', mode: 'browser', accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: now() + left }));
    writeFileSync(join(o.dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
  }
  /** The refresh the timer would run later (its backoff is minutes long). */
  const refreshNow = (l: ProviderLogins) => (l as unknown as { refresh(id: string): Promise<void> }).refresh('acme');

  it('a 503 is temporary: retried later, and a second failure in the streak is not announced again', async () => {
    const o = setup();
    await loggedIn(o, 10);
    fx.auth.tokenModes = ['unavailable', 'unavailable'];
    await o.logins.load();
    await refreshNow(o.logins);
    await refreshNow(o.logins);
    expect(fx.auth.tokenRequests.filter((r) => r.grantType === 'refresh_token')).toHaveLength(2);
    expect(o.notices).toHaveLength(1);
    expect(o.notices[0]).toMatch(/^warning: Refreshing the login to acme failed: The token endpoint answered HTTP 503.*patchbay tries again in \d+ s\.$/);
    // The timer for the retry is set (backed off), not a loop.
    expect((o.logins as unknown as { refreshTimers: Map<string, unknown> }).refreshTimers.has('acme')).toBe(true);
  });

  for (const mode of ['invalid_client', 'unauthorized_client'] as const) {
    it(`${mode} is not retried: "Log in again", no timer, and the spent login is not tried again`, async () => {
      const o = setup();
      await loggedIn(o, 10);
      fx.auth.tokenModes = [mode];
      await o.logins.load();
      await refreshNow(o.logins);
      await refreshNow(o.logins);
      expect(fx.auth.tokenRequests.filter((r) => r.grantType === 'refresh_token')).toHaveLength(1);
      expect(o.notices).toEqual([expect.stringMatching(new RegExp(`refused: ${mode}.*Log in again\\.$`))]);
      expect((o.logins as unknown as { refreshTimers: Map<string, unknown> }).refreshTimers.has('acme')).toBe(false);
    });
  }
});

describe('logout and expiry', () => {
  it('a logout the store cannot carry out is an error, and the login stays as it was', async () => {
    const o = setup((file) => ({ kind: 'file', where: file.where, get: (k) => file.get(k), set: (k, v) => file.set(k, v), delete: () => Promise.reject(new Error('keychain locked')) }));
    await o.logins.input('acme', { 'api-key': 'kept-key-0123456789' });
    await expect(o.logins.logout('acme')).rejects.toThrow(/keychain locked/);
    expect(o.logins.keys()).toEqual({ acme: 'kept-key-0123456789' });
    expect(JSON.parse(readFileSync(join(o.dir, 'logins.json'), 'utf8'))).toEqual({ providers: ['acme'] });
  });

  it('a token that runs out without a refresh is announced (the status turns "expired")', async () => {
    const o = setup();
    await o.file.set('provider/acme', JSON.stringify({ type: 'oauth', mode: 'browser', accessToken: 'short-lived-0123456789', expiresAt: now() + 2 }));
    writeFileSync(join(o.dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
    await o.logins.load();
    expect(o.changes).toEqual([]);
    const until = Date.now() + 10_000;
    while (!o.changes.length && Date.now() < until) await sleep(100);
    expect(o.changes).toEqual(['acme']);
  });
});

/**
 * Provider SDK: where the token and the gateway come from (src/provider/discover.ts), against
 * the real gateway where it matters (which token wins is decided by whether auth succeeds),
 * fatal AUTH_FAILED, reconnect backoff, and the `patchbay-ai/provider` package export.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backoffDelay, resolveBackoff } from '../../src/provider/backoff.js';
import { addressFilePath, createProvider, DEFAULT_GATEWAY_URL, discoverToken, discoverUrl, GatewayError, tokenFilePath, type Provider, type ProviderOptions } from '../../src/provider/index.js';
import { setLogLevel } from '../../src/util/log.js';
import { Relay, removeTempHomes, sleep, startGateway, tempHome, until, type TestGateway } from '../fixtures/providers/harness.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
beforeAll(() => setLogLevel('error'));
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
  removeTempHomes();
});

async function gateway(): Promise<TestGateway> {
  const g = await startGateway();
  cleanups.push(() => g.gateway.stop());
  return g;
}

function provider(o: Partial<ProviderOptions> & { url: string; env: NodeJS.ProcessEnv }): Provider {
  const p = createProvider({ name: 'disco', reconnect: { initialMs: 20, maxMs: 100 }, ...o });
  cleanups.push(() => p.close());
  return p;
}

function writeToken(home: string, token: string): string {
  const file = tokenFilePath({ PATCHBAY_HOME: home });
  mkdirSync(join(home, 'gateway'), { recursive: true });
  writeFileSync(file, `${token}\n`);
  return file;
}

describe('token and URL discovery', () => {
  it('reads PATCHBAY_PROVIDER_TOKEN, then TAP_PROVIDER_TOKEN, then the token file', () => {
    const home = tempHome();
    const file = writeToken(home, 'ptk-file');
    const env = { PATCHBAY_HOME: home };
    expect(discoverToken({ ...env, PATCHBAY_PROVIDER_TOKEN: 'ptk-a', TAP_PROVIDER_TOKEN: 'ptk-b' })).toEqual({ token: 'ptk-a', source: 'PATCHBAY_PROVIDER_TOKEN' });
    expect(discoverToken({ ...env, TAP_PROVIDER_TOKEN: 'ptk-b' })).toEqual({ token: 'ptk-b', source: 'TAP_PROVIDER_TOKEN' });
    expect(discoverToken({ ...env, PATCHBAY_PROVIDER_TOKEN: '  ', TAP_PROVIDER_TOKEN: '' })).toEqual({ token: 'ptk-file', source: 'file', file });
    expect(discoverToken({ PATCHBAY_HOME: tempHome() })).toBeUndefined();
  });

  it('puts the token file under PATCHBAY_HOME, else ~/.cache/patchbay', () => {
    expect(tokenFilePath({ PATCHBAY_HOME: '/srv/pb' })).toBe('/srv/pb/gateway/provider-token');
    expect(tokenFilePath({}, '/home/ann')).toBe('/home/ann/.cache/patchbay/gateway/provider-token');
    const home = tempHome();
    writeToken(join(home, '.cache', 'patchbay'), 'ptk-home');
    expect(discoverToken({}, home)).toEqual({ token: 'ptk-home', source: 'file', file: join(home, '.cache', 'patchbay', 'gateway', 'provider-token') });
  });

  it('takes the URL from the option, then PATCHBAY_GATEWAY_URL, then the address file, then ws://127.0.0.1:9400', () => {
    const home = tempHome();
    const env = { PATCHBAY_HOME: home };
    expect(discoverUrl(undefined, env)).toBe(DEFAULT_GATEWAY_URL);
    expect(DEFAULT_GATEWAY_URL).toBe('ws://127.0.0.1:9400');
    mkdirSync(join(home, 'gateway'), { recursive: true });
    writeFileSync(addressFilePath(env), 'ws://127.0.0.1:3\n');
    expect(addressFilePath(env)).toBe(join(home, 'gateway', 'address'));
    expect(discoverUrl(undefined, env)).toBe('ws://127.0.0.1:3');
    expect(discoverUrl(undefined, { ...env, PATCHBAY_GATEWAY_URL: 'ws://127.0.0.1:2' })).toBe('ws://127.0.0.1:2');
    expect(discoverUrl('ws://127.0.0.1:1', { ...env, PATCHBAY_GATEWAY_URL: 'ws://127.0.0.1:2' })).toBe('ws://127.0.0.1:1');
  });

  it('finds a gateway on a free port through the address file', async () => {
    const g = await gateway();
    writeFileSync(addressFilePath({ PATCHBAY_HOME: g.home }), `${g.url}\n`); // as patchbay server does
    const p = provider({ url: '', env: { PATCHBAY_HOME: g.home } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 's1' });
  });

  it('PATCHBAY_GATEWAY_URL reaches the gateway when no url option is given', async () => {
    const g = await gateway();
    const p = provider({ url: '', env: { PATCHBAY_HOME: g.home, PATCHBAY_GATEWAY_URL: g.url } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 's1' });
  });
});

describe('token precedence against the real gateway', () => {
  it('PATCHBAY_PROVIDER_TOKEN wins over TAP_PROVIDER_TOKEN and the file', async () => {
    const g = await gateway();
    writeToken(g.home, 'ptk-wrong-file');
    const p = provider({ url: g.url, env: { PATCHBAY_HOME: g.home, PATCHBAY_PROVIDER_TOKEN: g.gateway.token, TAP_PROVIDER_TOKEN: 'ptk-wrong-tap' } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 's1' });
  });

  it('TAP_PROVIDER_TOKEN wins over the file', async () => {
    const g = await gateway();
    writeToken(g.home, 'ptk-wrong-file');
    const p = provider({ url: g.url, env: { PATCHBAY_HOME: g.home, TAP_PROVIDER_TOKEN: g.gateway.token } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 's1' });
  });

  it('a wrong PATCHBAY_PROVIDER_TOKEN is used even when TAP_PROVIDER_TOKEN is right: AUTH_FAILED is fatal, no reconnect', async () => {
    const g = await gateway();
    const relay = await Relay.start(g.url);
    cleanups.push(() => relay.close());
    const p = provider({ url: relay.url, env: { PATCHBAY_HOME: g.home, PATCHBAY_PROVIDER_TOKEN: 'ptk-wrong', TAP_PROVIDER_TOKEN: g.gateway.token } });
    const errors: Error[] = [];
    p.on('error', (e) => errors.push(e));
    const err = await p.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ code: 'AUTH_FAILED', fatal: true });
    expect(errors).toEqual([err]);
    expect(p.state).toBe('failed');
    expect(relay.sent('auth')).toEqual([{ type: 'auth', token: 'ptk-wrong' }]);
    await sleep(150);
    expect(relay.connections).toBe(1);
  });

  it('an explicit token option beats every discovered one', async () => {
    const g = await gateway();
    const p = provider({ url: g.url, token: g.gateway.token, env: { PATCHBAY_HOME: g.home, PATCHBAY_PROVIDER_TOKEN: 'ptk-wrong' } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 's1' });
  });

  it('waits for a token file that is not there yet', async () => {
    const g = await gateway();
    const home = tempHome(); // no gateway writes here (yet)
    const p = provider({ url: g.url, env: { PATCHBAY_HOME: home } });
    const codes: string[] = [];
    p.on('error', (e) => codes.push((e as { code?: string }).code ?? ''));
    const bound = p.connect();
    await until(() => codes.filter((c) => c === 'NO_TOKEN').length >= 2, 'NO_TOKEN twice');
    writeToken(home, g.gateway.token);
    await expect(bound).resolves.toMatchObject({ sessionId: 's1' });
  });

  it('AUTH_FAILED with a token file that has changed since it was read is retried, not fatal', async () => {
    const g = await gateway();
    const file = writeToken(g.home, 'ptk-stale'); // as a crashed gateway would have left it
    const relay = await Relay.start(g.url);
    cleanups.push(() => relay.close());
    // The new gateway publishes its token while the provider is still using the stale one.
    relay.onUp = (m) => {
      if (m.type === 'auth' && m.token === 'ptk-stale') writeFileSync(file, g.gateway.token);
    };
    const p = provider({ url: relay.url, env: { PATCHBAY_HOME: g.home } });
    const errors: GatewayError[] = [];
    p.on('error', (e) => e instanceof GatewayError && errors.push(e));
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 's1' });
    expect(errors.map((e) => [e.code, e.fatal])).toEqual([['AUTH_FAILED', false]]);
    expect(relay.sent('auth').map((m) => m.token)).toEqual(['ptk-stale', g.gateway.token]);
  });
});

describe('reconnect backoff', () => {
  it('grows exponentially, is capped, and is jittered within [d·(1−jitter), d]', () => {
    const b = resolveBackoff({ initialMs: 100, maxMs: 1000, factor: 2, jitter: 0.5 });
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelay(b, a, () => 1))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([0, 1, 2, 3, 4, 10].map((a) => backoffDelay(b, a, () => 0))).toEqual([50, 100, 200, 400, 500, 500]);
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(b, 3)));
    expect(spread.size).toBeGreaterThan(5);
    for (const d of spread) expect(d >= 400 && d <= 800).toBe(true);
    expect(resolveBackoff()).toEqual({ initialMs: 250, maxMs: 10_000, factor: 2, jitter: 0.5, maxAttempts: Number.POSITIVE_INFINITY });
  });
});

describe('package export', () => {
  it('`patchbay-ai/provider` resolves to the built SDK', async () => {
    // Through the package's own `exports` (self-reference), as a provider author imports it. Not a
    // literal, so type-checking the tests does not need a build.
    const specifier = 'patchbay-ai/provider';
    const mod = (await import(specifier)) as { createProvider?: unknown };
    expect(typeof mod.createProvider).toBe('function');
    expect(import.meta.resolve(specifier)).toMatch(/\/dist\/provider\/index\.js$/);
  });
});

/**
 * One gateway per process, several per home (src/peers/gateway/publish.ts, src/provider/discover.ts):
 * each writes and removes only its own run file, the older shared pair is handed on, and a
 * provider finds the newest running gateway or the one serving its workspace, skipping files
 * left by processes that are gone. Real gateways, real providers, a real dead pid.
 */
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createProvider, discoverGateway, listGateways, ProviderError, runDirPath, type Provider, type ProviderOptions } from '../../src/provider/index.js';
import { setLogLevel } from '../../src/util/log.js';
import { FakeChats, removeTempHomes, startGateway, tempHome, until, type TestGateway } from '../fixtures/providers/harness.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
beforeAll(() => setLogLevel('error'));
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
  removeTempHomes();
});

async function gateway(o: Parameters<typeof startGateway>[0]): Promise<TestGateway> {
  const g = await startGateway(o);
  cleanups.push(() => g.gateway.stop());
  return g;
}

function provider(o: Partial<ProviderOptions> & { env: NodeJS.ProcessEnv }): Provider {
  const p = createProvider({ name: 'finder', reconnect: { initialMs: 20, maxMs: 100 }, ...o });
  cleanups.push(() => p.close());
  return p;
}

/** The pid of a process that has exited: what a crashed patchbay leaves in its run file. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

const sessions = (id: string) => new FakeChats([{ id, label: id, cwd: '/tmp' }]);

describe('run files', () => {
  it('each gateway on one home writes its own (0600 in a 0700 dir); stopping one leaves the other, and hands it the shared pair', async () => {
    const home = tempHome();
    const a = await gateway({ home, roots: ['/work/a'], chats: sessions('chat-a') });
    const b = await gateway({ home, roots: ['/work/b'], chats: sessions('chat-b') });
    const dir = runDirPath({ PATCHBAY_HOME: home });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dir).sort()).toEqual([a.gateway.runFile, b.gateway.runFile].map((f) => f.slice(dir.length + 1)).sort());
    for (const f of [a.gateway.runFile, b.gateway.runFile]) expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(a.gateway.runFile, 'utf8'))).toMatchObject({ version: 1, pid: process.pid, url: a.url, port: a.port, token: a.gateway.token, roots: ['/work/a'] });
    // Newest first; the shared pair is the newest's.
    expect(listGateways({ PATCHBAY_HOME: home }).map((g) => g.url)).toEqual([b.url, a.url]);
    expect(readFileSync(join(home, 'gateway', 'address'), 'utf8').trim()).toBe(b.url);
    expect(readFileSync(join(home, 'gateway', 'provider-token'), 'utf8')).toBe(b.gateway.token);

    await b.gateway.stop();
    expect(existsSync(b.gateway.runFile)).toBe(false);
    expect(existsSync(a.gateway.runFile)).toBe(true);
    // The pair is handed to the one still running, not removed ("no gateway token").
    expect(readFileSync(join(home, 'gateway', 'address'), 'utf8').trim()).toBe(a.url);
    expect(readFileSync(join(home, 'gateway', 'provider-token'), 'utf8')).toBe(a.gateway.token);
    const p = provider({ env: { PATCHBAY_HOME: home } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 'chat-a' });

    await a.gateway.stop();
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(join(home, 'gateway', 'address'))).toBe(false);
    expect(existsSync(join(home, 'gateway', 'provider-token'))).toBe(false);
  });

  it("skips a file whose process is gone, and the next gateway to start removes it; another's live file stays", async () => {
    const home = tempHome();
    const dir = runDirPath({ PATCHBAY_HOME: home });
    mkdirSync(dir, { recursive: true });
    const stale = join(dir, '999999.json');
    // Newer than any live one: chosen, were its pid not checked.
    writeFileSync(stale, JSON.stringify({ version: 1, pid: deadPid(), startedAt: Date.now() + 60_000, url: 'ws://127.0.0.1:1', port: 1, token: 'ptk-dead', roots: ['/work/a'] }));
    expect(listGateways({ PATCHBAY_HOME: home })).toEqual([]);
    const live = await gateway({ home, roots: ['/work/a'], chats: sessions('chat-live') });
    expect(existsSync(stale)).toBe(false);
    expect(discoverGateway({ workspace: '/work/a' }, { PATCHBAY_HOME: home })).toMatchObject({ ok: true, url: live.url, token: { token: live.gateway.token, source: 'run-file' } });
    const p = provider({ env: { PATCHBAY_HOME: home } });
    await expect(p.connect()).resolves.toMatchObject({ sessionId: 'chat-live' });
  });
});

describe("files that are not this user's gateway's (review)", () => {
  /** A run file for a live process (this one), newer than any real gateway: chosen, were it read. */
  const intruder = (file: string) =>
    writeFileSync(file, JSON.stringify({ version: 1, pid: process.pid, startedAt: Date.now() + 60_000, url: 'ws://127.0.0.1:1', port: 1, token: 'ptk-intruder', roots: ['/work/a'] }));

  it('a symlink in run/ (to a run file elsewhere), a legacy address that is a symlink, and garbage are skipped', async () => {
    const home = tempHome();
    const dir = runDirPath({ PATCHBAY_HOME: home });
    mkdirSync(dir, { recursive: true });
    const elsewhere = join(home, 'elsewhere.json');
    intruder(elsewhere);
    symlinkSync(elsewhere, join(dir, '1.json'));
    writeFileSync(join(dir, '2.json'), '{ not json');
    writeFileSync(join(home, 'elsewhere-address'), 'ws://127.0.0.1:1\n');
    symlinkSync(join(home, 'elsewhere-address'), join(home, 'gateway', 'address'));
    expect(listGateways({ PATCHBAY_HOME: home })).toEqual([]);
    expect(discoverGateway({}, { PATCHBAY_HOME: home })).toMatchObject({ ok: true, url: 'ws://127.0.0.1:9400' });
    const live = await gateway({ home, roots: ['/work/a'], chats: sessions('chat-live') });
    expect(discoverGateway({ workspace: '/work/a' }, { PATCHBAY_HOME: home, PATCHBAY_PROVIDER_TOKEN: 'ptk-mine' })).toMatchObject({ ok: true, url: live.url });
  });

  // Only root can make a file another user owns; as anyone else this case cannot be set up.
  it.runIf(process.geteuid?.() === 0)("a run file owned by another user is skipped: it could point a provider (and the token in its environment) at that user's gateway", () => {
    const home = tempHome();
    const dir = runDirPath({ PATCHBAY_HOME: home });
    mkdirSync(dir, { recursive: true });
    const file = join(dir, '1.json');
    intruder(file);
    chownSync(file, 65534, 65534);
    expect(listGateways({ PATCHBAY_HOME: home })).toEqual([]);
    expect(discoverGateway({}, { PATCHBAY_HOME: home, PATCHBAY_PROVIDER_TOKEN: 'ptk-mine' })).toMatchObject({ url: 'ws://127.0.0.1:9400' });
  });
});

describe('choosing a gateway', () => {
  it('by workspace (a folder it has open, or one inside it), over a newer one; the option beats PATCHBAY_WORKSPACE', async () => {
    const home = tempHome();
    const a = await gateway({ home, roots: ['/work/a'], chats: sessions('chat-a') });
    await gateway({ home, roots: ['/work/b'], chats: sessions('chat-b') });
    const env = { PATCHBAY_HOME: home };
    await expect(provider({ name: 'one', env: { ...env, PATCHBAY_WORKSPACE: '/work/a/src/deep' } }).connect()).resolves.toMatchObject({ sessionId: 'chat-a' });
    await expect(provider({ name: 'two', env: { ...env, PATCHBAY_WORKSPACE: '/work/b' }, workspace: '/work/a' }).connect()).resolves.toMatchObject({ sessionId: 'chat-a' });
    await expect(provider({ name: 'three', env }).connect()).resolves.toMatchObject({ sessionId: 'chat-b' }); // the newest
    // '/work/ab' is not inside '/work/a'.
    expect(discoverGateway({ workspace: '/work/ab' }, env)).toMatchObject({ ok: false });
    expect(discoverGateway({ workspace: '/work/a' }, env)).toMatchObject({ ok: true, url: a.url });
  });

  it('waits (NO_GATEWAY, retried) until a gateway serving the workspace starts', async () => {
    const home = tempHome();
    await gateway({ home, roots: ['/work/b'], chats: sessions('chat-b') });
    const p = provider({ env: { PATCHBAY_HOME: home }, workspace: '/work/a' });
    const errors: Error[] = [];
    p.on('error', (e) => errors.push(e));
    const bound = p.connect();
    await until(() => errors.length >= 2, 'NO_GATEWAY twice');
    expect(errors[0]).toBeInstanceOf(ProviderError);
    expect(errors[0]).toMatchObject({ code: 'NO_GATEWAY' });
    expect(errors[0].message).toContain('no running patchbay gateway serves /work/a; running: ws://127.0.0.1:');
    await gateway({ home, roots: ['/work/a'], chats: sessions('chat-a') });
    await expect(bound).resolves.toMatchObject({ sessionId: 'chat-a' });
  });

  it('a token given without a URL picks the gateway it belongs to', async () => {
    const home = tempHome();
    const a = await gateway({ home, roots: ['/work/a'], chats: sessions('chat-a') });
    await gateway({ home, roots: ['/work/b'], chats: sessions('chat-b') });
    await expect(provider({ env: { PATCHBAY_HOME: home, PATCHBAY_PROVIDER_TOKEN: a.gateway.token } }).connect()).resolves.toMatchObject({ sessionId: 'chat-a' });
  });
});

import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LspHostImpl, type LspHostOptions } from '../../src/peers/lsp/host.js';
import { LanguageServerProcess } from '../../src/peers/lsp/server.js';
import type { ToolContext } from '../../src/shapes/tool.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';

const FAKE = join(import.meta.dirname, '../fixtures/lsp/fake-ls.mjs');
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const hosts: LspHostImpl[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

function setup(mode: string, extra: Partial<LspHostOptions> = {}, env: Record<string, string> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'lsp-fake-'));
  const pidfile = join(root, 'pids.txt');
  const host = new LspHostImpl({
    servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], env: { FAKE_LS_MODE: mode, FAKE_LS_PIDFILE: pidfile, ...env } } },
    roots: [root],
    env: { PATH: '/nonexistent' },
    log: quiet,
    restart: { baseDelayMs: 30, maxRestarts: 2 },
    diagnosticsWaitMs: 2000,
    ...extra,
  });
  hosts.push(host);
  const pids = () => (existsSync(pidfile) ? readFileSync(pidfile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);
  return { root, host, pids };
}

const living = (pids: number[]) => pids.filter((p) => isAlive(p) && !isZombie(p));
const ctx = (root: string): ToolContext => ({ signal: new AbortController().signal, roots: [root], chatId: 'c', editor: {} });
async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
const change = (host: LspHostImpl, file: string, signal = new AbortController().signal) => host.afterFileChange(file, signal);
const errorsOf = async (host: LspHostImpl, file: string) => {
  const r = await change(host, file);
  return r.kind === 'errors' ? r.errors : r.kind;
};
const textOf = (r: { outputs: Array<{ type: string; text?: string }> }) => r.outputs.map((o) => o.text).join('');

describe('LspHost with a fake language server', () => {
  it('syncs a changed file and returns its fresh errors with 1-based character columns', async () => {
    const { root, host } = setup('normal');
    const file = join(root, 'a.fake');
    writeFileSync(file, 'ok\n🎉 é ERROR\n');
    expect(await errorsOf(host, file)).toBe('a.fake:2:5 error [fake] fake error here');
    writeFileSync(file, 'ok\nfine\n');
    expect(await errorsOf(host, file)).toBe('clean');
    expect(host.diagnostics(file)).toEqual([]);
    writeFileSync(file, 'ERROR\n');
    expect(await errorsOf(host, 'a.fake')).toBe('a.fake:1:1 error [fake] fake error here');
    expect(host.diagnostics()).toMatchObject([{ severity: 'error', source: 'fake', range: { start: { line: 0, character: 0 } } }]);
    expect(host.servers()).toMatchObject([{ name: 'fake', status: 'running', roots: [root], restarts: 0 }]);
  });

  it("(review) gets patchbay's environment without LLM provider keys or the gateway token; what it needs and its own env stay", async () => {
    const envfile = join(mkdtempSync(join(tmpdir(), 'lsp-env-')), 'env.json');
    const env = {
      PATH: '/nonexistent',
      GOPATH: '/home/me/go',
      HTTPS_PROXY: 'http://proxy:3128',
      NPM_TOKEN: 'npm-registry-token',
      OPENAI_API_KEY: 'sk-openai',
      ANTHROPIC_API_KEY: 'sk-ant',
      ANTHROPIC_AUTH_TOKEN: 'sk-ant-auth',
      PATCHBAY_PROVIDER_TOKEN: 'ptk-gateway',
      TAP_PROVIDER_TOKEN: 'ptk-gateway',
      PATCHBAY_GATEWAY_URL: 'ws://127.0.0.1:1',
      PATCHBAY_CONFIG: '{"providers":{"openai":{"key":"sk-inline"}}}',
    };
    const { root, host } = setup('normal', { env }, { FAKE_LS_ENVFILE: envfile, DEEPSEEK_API_KEY: 'asked for by the entry' });
    const file = join(root, 'a.fake');
    writeFileSync(file, 'ok\n');
    expect(await errorsOf(host, file)).toBe('clean');
    const got = JSON.parse(readFileSync(envfile, 'utf8')) as Record<string, string>;
    expect(got).toMatchObject({ PATH: '/nonexistent', GOPATH: '/home/me/go', HTTPS_PROXY: 'http://proxy:3128', NPM_TOKEN: 'npm-registry-token', DEEPSEEK_API_KEY: 'asked for by the entry' });
    for (const k of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'PATCHBAY_PROVIDER_TOKEN', 'TAP_PROVIDER_TOKEN', 'PATCHBAY_GATEWAY_URL', 'PATCHBAY_CONFIG'])
      expect(got[k], k).toBeUndefined();
  });

  it('waits for a new publish when the server sends no version', async () => {
    const { root, host } = setup('normal', {}, { FAKE_LS_NO_VERSION: '1' });
    const file = join(root, 'b.fake');
    writeFileSync(file, 'x ERROR\n');
    expect(await errorsOf(host, file)).toBe('b.fake:1:3 error [fake] fake error here');
    writeFileSync(file, 'x\n');
    expect(await errorsOf(host, file)).toBe('clean');
  });

  it('sends the UTF-16 position of the symbol named on the line', async () => {
    const { root, host } = setup('normal');
    writeFileSync(join(root, 'c.fake'), 'line one\nconst 🎉 = café(total);\n');
    const hover = host.tools().find((t) => t.name === 'lsp_hover')!;
    expect(textOf(await hover.call({ path: 'c.fake', line: 2, symbol: 'total' }, ctx(root)))).toBe('pos 1:16');
    expect(textOf(await hover.call({ path: 'c.fake', line: 2, character: 11 }, ctx(root)))).toBe('pos 1:11');
    const missing = await hover.call({ path: 'c.fake', line: 2, symbol: 'nope' }, ctx(root));
    expect(missing.error).toBe(true);
    expect(textOf(missing)).toMatch(/"nope" does not occur on line 2/);
    const bad = await hover.call({ path: 'c.fake' }, ctx(root));
    expect(bad.error).toBe(true);
    const def = host.tools().find((t) => t.name === 'lsp_definition')!;
    expect(textOf(await def.call({ path: 'c.fake', line: 2, symbol: 'café' }, ctx(root)))).toBe('c.fake:1:1: line one');
  });

  it('restarts a server that crashes after initialize, with bounded backoff', async () => {
    const { root, host, pids } = setup('crash-after-init');
    writeFileSync(join(root, 'a.fake'), 'x');
    host.fileRead(join(root, 'a.fake'));
    await until(() => host.servers()[0].restarts === 2 && host.servers()[0].status === 'failed');
    await new Promise((r) => setTimeout(r, 300));
    const [info] = host.servers();
    expect(info).toMatchObject({ status: 'failed', restarts: 2 });
    expect(info.lastError).toMatch(/exited \(code 3\)/);
    expect(pids()).toHaveLength(3); // the first start and two restarts, no more
    // The write's note says why there are no diagnostics, in the server's words.
    expect(await change(host, join(root, 'a.fake'))).toMatchObject({ kind: 'unavailable', note: expect.stringMatching(/^Diagnostics: not available — fake failed: exited \(code 3\)/) });
  });

  it('a crash during a request fails the call as a result, then the server comes back', async () => {
    const { root, host } = setup('crash-on-request');
    writeFileSync(join(root, 'a.fake'), 'hello world\n');
    const hover = host.tools().find((t) => t.name === 'lsp_hover')!;
    const r = await hover.call({ path: 'a.fake', line: 1, symbol: 'world' }, ctx(root));
    expect(r.error).toBe(true);
    expect(textOf(r)).toMatch(/lsp_hover failed: fake failed: exited \(code 4\)|connection closed/);
    await until(() => host.servers()[0].status === 'running');
    expect(host.servers()[0].restarts).toBe(1);
  });

  it('marks a server that hangs on initialize failed, kills it, and gives up after maxRestarts', async () => {
    const { root, host, pids } = setup('hang-init', { initializeTimeoutMs: 200, restart: { baseDelayMs: 20, maxRestarts: 1 } });
    writeFileSync(join(root, 'a.fake'), 'x');
    const r = await change(host, join(root, 'a.fake'));
    expect(r).toMatchObject({ kind: 'unavailable', note: expect.stringMatching(/fake failed: initialize failed: initialize timed out after 200 ms/) });
    await until(() => host.servers()[0].restarts === 1 && host.servers()[0].status === 'failed');
    expect(host.servers()[0].lastError).toMatch(/initialize timed out after 200 ms/);
    await until(() => pids().length === 2 && living(pids()).length === 0);
  });

  it('afterFileChange gives up when its signal is aborted, even while the server starts', async () => {
    const { root, host } = setup('hang-init', { initializeTimeoutMs: 10_000 });
    writeFileSync(join(root, 'a.fake'), 'x');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = Date.now();
    expect(await change(host, join(root, 'a.fake'), ac.signal)).toEqual({ kind: 'none', note: '' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(host.servers()[0].status).toBe('starting');
  });

  it('survives malformed frames: the server is failed and restarted', async () => {
    const { root, host } = setup('malformed', { restart: { baseDelayMs: 20, maxRestarts: 1 } });
    writeFileSync(join(root, 'a.fake'), 'x');
    host.fileRead(join(root, 'a.fake'));
    await until(() => host.servers()[0].restarts === 1 && host.servers()[0].status === 'failed');
    expect(host.servers()[0].lastError).toMatch(/malformed message from the server/);
  });

  it('reports a bad config entry and an unstartable command without throwing', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lsp-bad-'));
    const host = new LspHostImpl({
      servers: { bad: { command: 42 }, missing: { command: '/no/such/ls', extensions: ['fake'] } },
      roots: [root],
      env: { PATH: '' },
      log: quiet,
      restart: { baseDelayMs: 10, maxRestarts: 1 },
    });
    hosts.push(host);
    writeFileSync(join(root, 'a.fake'), 'x');
    expect(await change(host, join(root, 'a.fake'))).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/missing failed: cannot start \/no\/such\/ls: .*ENOENT/) });
    await until(() => host.servers().find((s) => s.name === 'missing')?.restarts === 1);
    const infos = host.servers();
    expect(infos.find((s) => s.name === 'bad')).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/invalid languageServers\.bad/) });
    expect(infos.find((s) => s.name === 'missing')).toMatchObject({ status: 'failed', lastError: expect.stringMatching(/ENOENT/) });
  });

  it('dispose stops every process, even one ignoring exit and SIGTERM, and its children', async () => {
    const { root, host, pids } = setup('stubborn', {}, { FAKE_LS_CHILD: '1' });
    writeFileSync(join(root, 'a.fake'), 'x');
    await host.afterFileChange(join(root, 'a.fake'), new AbortController().signal);
    expect(host.servers()[0].status).toBe('running');
    expect(living(pids())).toHaveLength(2);
    await host.dispose();
    expect(living(pids())).toEqual([]);
    expect(host.servers()[0].status).toBe('stopped');
  });

  it('dispose of a well-behaved server uses shutdown/exit', async () => {
    const { root, host, pids } = setup('normal');
    writeFileSync(join(root, 'a.fake'), 'x');
    await host.afterFileChange(join(root, 'a.fake'), new AbortController().signal);
    const started = Date.now();
    await host.dispose();
    expect(Date.now() - started).toBeLessThan(1500);
    expect(living(pids())).toEqual([]);
  });
});

describe('LanguageServerProcess requests', () => {
  const make = (requestTimeoutMs: number) =>
    new LanguageServerProcess({
      name: 'fake',
      root: mkdtempSync(join(tmpdir(), 'lsp-proc-')),
      env: {},
      log: quiet,
      requestTimeoutMs,
      initializeTimeoutMs: 10_000,
      config: { command: process.execPath, args: [FAKE], extensions: ['fake'] },
      restart: { baseDelayMs: 10_000, maxRestarts: 0 },
      onDiagnostics: () => {},
    });

  it('times out and honours cancellation', async () => {
    const p = make(200);
    try {
      await expect(p.request('slow', {})).rejects.toThrow(/slow timed out after 200 ms/);
      const ac = new AbortController();
      const pending = p.request('slow', {}, ac.signal);
      ac.abort();
      await expect(pending).rejects.toThrow(/cancelled/);
      expect(p.status).toBe('running');
    } finally {
      await p.dispose();
    }
  });

  it("a server's requestTimeoutSeconds is the deadline of its requests", async () => {
    const root = mkdtempSync(join(tmpdir(), 'lsp-proc-'));
    const host = new LspHostImpl({
      servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], requestTimeoutSeconds: 0.3 } },
      roots: [root],
      env: { PATH: '/nonexistent' },
      log: quiet,
      restart: { baseDelayMs: 30, maxRestarts: 0 },
      requestTimeoutMs: 60_000,
    });
    hosts.push(host);
    const proc = host.processFor(join(root, 'a.fake'))!.proc;
    expect(proc.requestTimeoutMs).toBe(300);
    await expect(proc.request('slow', {})).rejects.toThrow('slow timed out after 300 ms');
    expect(proc.status).toBe('running');
  });

  it('rejects pending requests when the server dies', async () => {
    const p = make(10_000);
    try {
      expect(await p.ready()).toBe(true);
      const pending = p.request('slow', {});
      process.kill(p.pid!, 'SIGKILL');
      // Named after the server, with why it failed (the exit, or the broken pipe), not the request's bare "connection closed".
      await expect(pending).rejects.toThrow(/^fake failed: /);
      expect(p.status).toBe('failed');
    } finally {
      await p.dispose();
    }
  });
});

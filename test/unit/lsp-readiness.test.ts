// The diagnostics wait against a fake language server that loads slowly, pulls, stays silent or
// fails: bounded by the server's readiness and a cap, and a note saying why when none came.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LspHostImpl, type LspHostOptions } from '../../src/peers/lsp/host.js';
import type { ToolContext } from '../../src/shapes/tool.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';

const FAKE = join(import.meta.dirname, '../fixtures/lsp/fake-ls.mjs');
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const hosts: Array<{ host: LspHostImpl; pids: () => number[] }> = [];
afterEach(async () => {
  for (const { host, pids } of hosts.splice(0)) {
    await host.dispose();
    expect(pids().filter((p) => isAlive(p) && !isZombie(p))).toEqual([]);
  }
});

function setup(env: Record<string, string>, extra: Partial<LspHostOptions> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'lsp-ready-'));
  const pidfile = join(root, 'pids.txt');
  const host = new LspHostImpl({
    servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], env: { FAKE_LS_PIDFILE: pidfile, ...env } } },
    roots: [root],
    env: { PATH: '/nonexistent' },
    log: quiet,
    restart: { baseDelayMs: 30, maxRestarts: 1 },
    ...extra,
  });
  const pids = () => (existsSync(pidfile) ? readFileSync(pidfile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);
  hosts.push({ host, pids });
  const file = join(root, 'a.fake');
  const write = (text: string) => (writeFileSync(file, text), host.afterFileChange(file, new AbortController().signal));
  return { root, host, file, write };
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
const ctx = (root: string): ToolContext => ({ signal: new AbortController().signal, roots: [root], chatId: 'c', editor: {} });
const textOf = (r: { outputs: Array<{ type: string; text?: string }> }) => r.outputs.map((o) => o.text).join('');

describe('the diagnostics wait', () => {
  it('goes on past the quiet time while the server reports its project loading ($/progress)', async () => {
    // Loading takes 1.5 s; once ready, 200 ms without an answer would end the wait.
    const { root, host, write } = setup({ FAKE_LS_LOAD_MS: '1500' }, { diagnosticsWaitMs: 200 });
    // A first file answered at once: the server is known to publish, so only its progress says it is busy.
    writeFileSync(join(root, 'early.fake'), 'EARLY\n');
    expect(await host.afterFileChange(join(root, 'early.fake'), new AbortController().signal)).toEqual({ kind: 'clean', note: '' });
    expect(await write('x ERROR\n')).toMatchObject({ kind: 'errors', errors: 'a.fake:1:3 error [fake] fake error here' });
    expect(await write('fine\n')).toEqual({ kind: 'clean', note: '' });
  });

  it('ends at the cap while the server is still loading, and the note says so', async () => {
    const { write } = setup({ FAKE_LS_LOAD_MS: '60000' }, { diagnosticsWaitMs: 200, diagnosticsMaxWaitMs: 800 });
    const r = await write('x ERROR\n');
    expect(r).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/^fake is still loading the project \(waited \d+ s\)$/) });
    expect(r.note).toMatch(/^Diagnostics: not available — fake is still loading the project \(waited \d+ s\)\. Do not take the file as free of errors/);
  });

  it('the per-server diagnosticsTimeoutSeconds is the cap', async () => {
    const root = mkdtempSync(join(tmpdir(), 'lsp-ready-'));
    const host = new LspHostImpl({
      servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], env: { FAKE_LS_LOAD_MS: '60000' }, diagnosticsTimeoutSeconds: 0.5 } },
      roots: [root],
      env: { PATH: '/nonexistent' },
      log: quiet,
      diagnosticsMaxWaitMs: 600_000,
    });
    hosts.push({ host, pids: () => [] });
    writeFileSync(join(root, 'a.fake'), 'x\n');
    expect(await host.afterFileChange(join(root, 'a.fake'), new AbortController().signal)).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/still loading/) });
  });

  it('pulls diagnostics when the server offers them, asking again while it answers ServerCancelled', async () => {
    const { write } = setup({ FAKE_LS_PULL: '1', FAKE_LS_LOAD_MS: '800' }, { diagnosticsWaitMs: 100 });
    expect(await write('ok\nERROR\n')).toMatchObject({ kind: 'errors', errors: 'a.fake:2:1 error [fake] fake error here' });
    expect(await write('ok\n')).toEqual({ kind: 'clean', note: '' });
  });

  it('a server that never publishes: the first wait lasts until the cap, later ones only the quiet time; the note names its error', async () => {
    const { host, write } = setup({ FAKE_LS_SILENT: '1', FAKE_LS_SHOW_ERROR: 'Cannot load the toolchain' }, { diagnosticsWaitMs: 200, diagnosticsMaxWaitMs: 1000 });
    expect(await write('x\n')).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/^fake is still loading the project/) });
    expect(await write('y\n')).toMatchObject({ kind: 'unavailable', reason: expect.stringMatching(/^fake sent none \(waited \d+ s\); its last error: Cannot load the toolchain$/) });
    expect(host.servers()[0]).toMatchObject({ status: 'running', lastError: 'Cannot load the toolchain' });
  });

  it('a server that dies at start: its stderr is in the error, the note and the lsp tools', async () => {
    const { root, host, write } = setup({ FAKE_LS_MODE: 'crash-after-init', FAKE_LS_STDERR: 'fatal: no toolchain found' });
    writeFileSync(join(root, 'a.fake'), 'x');
    host.fileRead(join(root, 'a.fake'));
    await until(() => host.servers()[0].restarts === 1 && host.servers()[0].status === 'failed');
    expect(host.servers()[0].lastError).toBe('exited (code 3): fatal: no toolchain found');
    expect(await write('x\n')).toMatchObject({
      kind: 'unavailable',
      note: 'Diagnostics: not available — fake failed: exited (code 3): fatal: no toolchain found. Do not take the file as free of errors: check it with lsp_diagnostics later.',
    });
    for (const [name, args] of [
      ['lsp_diagnostics', { path: 'a.fake' }],
      ['lsp_hover', { path: 'a.fake', line: 1, character: 1 }],
    ] as const) {
      const r = await host
        .tools()
        .find((t) => t.name === name)!
        .call(args, ctx(root));
      expect(r.error).toBe(true);
      expect(textOf(r)).toBe(`${name} failed: fake failed: exited (code 3): fatal: no toolchain found`);
    }
    // Asked for every file, the failed server is named rather than a bare "No diagnostics".
    const all = await host
      .tools()
      .find((t) => t.name === 'lsp_diagnostics')!
      .call({}, ctx(root));
    expect(textOf(all)).toBe('No diagnostics.\nfake failed: exited (code 3): fatal: no toolchain found');
  });
});

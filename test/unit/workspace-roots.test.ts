// Workspace folders changing at run time, piece by piece: which requested changes apply
// (runtime/roots.ts), the language-server peer stopping a removed folder's server and starting
// one for an added folder's files, and the OpenCtx files provider serving the folders of now.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Workspace } from '../../src/runtime/workspace.js';
import { RootsNotifier } from '../../src/runtime/roots-notify.js';
import type { Peer, RootsChange } from '../../src/shapes/peer.js';
import { planRootsChange } from '../../src/runtime/roots.js';
import { LspHostImpl } from '../../src/peers/lsp/host.js';
import { RUST_ANALYZER_NOTE } from '../../src/peers/lsp/untrusted.js';
import { workspaceFiles } from '../../src/peers/openctx/host/builtin/workspace-files.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';

const dir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

describe('planRootsChange', () => {
  const exists = (p: string) => !p.includes('missing');

  it('removes first, then appends the added folders in order (as ECA does)', () => {
    const plan = planRootsChange(['/a', '/b'], { added: ['/c', '/d/'], removed: ['/a'] }, exists);
    expect(plan).toEqual({ roots: ['/b', '/c', '/d'], added: ['/c', '/d'], removed: ['/a'], warnings: [] });
  });

  it('skips, with a warning each, an unknown folder, one already open, one that does not exist, and the last one', () => {
    const plan = planRootsChange(['/a'], { added: ['/a/../a', '/missing'], removed: ['/x'] }, exists);
    expect(plan).toEqual({
      roots: ['/a'],
      added: [],
      removed: [],
      warnings: [
        'cannot remove workspace folder /x: it is not one of the workspace folders (/a)',
        'workspace folder /a is already open; added once only',
        'cannot add workspace folder /missing: no such directory',
      ],
    });
    expect(planRootsChange(['/a'], { added: [], removed: ['/a'] }, exists)).toEqual({ roots: ['/a'], added: [], removed: [], warnings: ['cannot remove workspace folder /a: it is the last one'] });
  });

  it('the last folder may go when another comes in the same change; one removed and added back stays', () => {
    expect(planRootsChange(['/a'], { added: ['/b'], removed: ['/a'] }, exists)).toMatchObject({ roots: ['/b'], added: ['/b'], removed: ['/a'] });
    expect(planRootsChange(['/a', '/b'], { added: ['/a'], removed: ['/a'] }, exists)).toMatchObject({ roots: ['/b', '/a'], added: [], removed: [], warnings: [] });
  });

  it('a path that is a file is no folder', () => {
    const root = dir('pb-roots-');
    writeFileSync(join(root, 'f'), '');
    expect(planRootsChange([root], { added: [join(root, 'f')], removed: [] }).warnings).toEqual([`cannot add workspace folder ${join(root, 'f')}: no such directory`]);
  });
});

const FAKE = join(import.meta.dirname, '../fixtures/lsp/fake-ls.mjs');
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const hosts: LspHostImpl[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the language-server peer follows the folders', () => {
  it('an added folder’s file gets a server; a removed folder’s server stops and its diagnostics go', { timeout: 30_000 }, async () => {
    const first = dir('pb-lsp-first-');
    const second = dir('pb-lsp-second-');
    const pidfile = join(first, 'pids.txt');
    let statusChanges = 0;
    const host = new LspHostImpl({
      servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], env: { FAKE_LS_MODE: 'normal', FAKE_LS_PIDFILE: pidfile } } },
      roots: [first],
      env: { PATH: '/nonexistent' },
      log: quiet,
      diagnosticsWaitMs: 2000,
      onStatusChange: () => statusChanges++,
    });
    hosts.push(host);
    const file = join(second, 'b.fake');
    writeFileSync(file, 'ERROR\n');
    // Outside every folder: no server takes it.
    expect(host.processFor(file)).toBeUndefined();

    await host.setRoots([first, second], []);
    expect(host.processFor(file)).toMatchObject({ name: 'fake', root: second, folder: second });
    const r = await host.afterFileChange(file, new AbortController().signal);
    expect(r.kind).toBe('errors');
    expect(host.diagnostics(file)).toHaveLength(1);
    const pids = readFileSync(pidfile, 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(1);

    const before = statusChanges;
    await host.setRoots([first], [second]);
    expect(pids.filter((p) => isAlive(p) && !isZombie(p))).toEqual([]);
    expect(host.diagnostics(file)).toEqual([]);
    expect(host.diagnostics()).toEqual([]);
    expect(host.servers()).toEqual([expect.objectContaining({ name: 'fake', status: 'stopped', roots: [] })]);
    expect(statusChanges).toBeGreaterThan(before);
    expect(host.processFor(file)).toBeUndefined();
  });
});

describe('a removed folder’s diagnostics stay gone, and its servers are waited for', () => {
  const fakeHost = (roots: string[], env: Record<string, string>) => {
    const host = new LspHostImpl({
      servers: { fake: { command: process.execPath, args: [FAKE], extensions: ['fake'], env: { FAKE_LS_MODE: 'normal', ...env } } },
      roots,
      env: { PATH: '/nonexistent' },
      log: quiet,
      diagnosticsWaitMs: 2000,
    });
    hosts.push(host);
    return host;
  };

  it('what a stopping server publishes after its folder was removed is not recorded', { timeout: 30_000 }, async () => {
    const first = dir('pb-lsp-first-');
    const second = dir('pb-lsp-second-');
    const file = join(second, 'b.fake');
    writeFileSync(file, 'ERROR\n');
    const host = fakeHost([first, second], { FAKE_LS_PUBLISH_ON_SHUTDOWN: '1' });
    expect((await host.afterFileChange(file, new AbortController().signal)).kind).toBe('errors');
    // The server publishes the file's diagnostics once more while it is told to shut down.
    await host.setRoots([first], [second]);
    expect(host.diagnostics(file)).toEqual([]);
    expect(host.diagnostics()).toEqual([]);
  });

  it('removing a folder keeps the diagnostics of a folder nested in it that stays', { timeout: 30_000 }, async () => {
    const outer = dir('pb-lsp-outer-');
    const inner = join(outer, 'sub');
    mkdirSync(inner);
    const file = join(inner, 'c.fake');
    writeFileSync(file, 'ERROR\n');
    const host = fakeHost([outer, inner], {});
    expect((await host.afterFileChange(file, new AbortController().signal)).kind).toBe('errors');
    await host.setRoots([inner], [outer]);
    expect(host.diagnostics(file)).toHaveLength(1);
  });

  it('dispose waits for, and kills, a removed folder’s server that is still stopping', { timeout: 30_000 }, async () => {
    const first = dir('pb-lsp-first-');
    const second = dir('pb-lsp-second-');
    const pidfile = join(first, 'pids.txt');
    const file = join(second, 'b.fake');
    writeFileSync(file, 'ERROR\n');
    // Ignores `exit` and SIGTERM: only a kill stops it.
    const host = fakeHost([first, second], { FAKE_LS_MODE: 'stubborn', FAKE_LS_PIDFILE: pidfile });
    await host.afterFileChange(file, new AbortController().signal);
    const pids = readFileSync(pidfile, 'utf8').trim().split('\n').map(Number);
    expect(pids).toHaveLength(1);
    const removing = host.setRoots([first], [second]);
    await host.dispose();
    expect(pids.filter((p) => isAlive(p) && !isZombie(p))).toEqual([]);
    await removing;
  });
});

describe('an added untrusted folder refuses what it would refuse at start', () => {
  it('rust-analyzer (it runs the project’s build scripts) is no longer offered once an untrusted folder joins, and is again once it leaves', async () => {
    const first = dir('pb-lsp-trusted-');
    const second = dir('pb-lsp-untrusted-');
    const bin = dir('pb-lsp-bin-');
    writeFileSync(join(bin, 'rust-analyzer'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const host = new LspHostImpl({ servers: {}, roots: [first], env: { PATH: bin }, log: quiet, trustedFolder: (r) => r === first });
    hosts.push(host);
    const rust = () => host.servers().find((s) => s.name === 'rust-analyzer');
    expect(rust()).toMatchObject({ status: 'stopped' });

    await host.setRoots([first, second], []);
    expect(rust()).toMatchObject({ status: 'disabled', note: RUST_ANALYZER_NOTE });
    expect(host.processFor(join(second, 'main.rs'))).toBeUndefined();

    await host.setRoots([first], [second]);
    expect(rust()).toMatchObject({ status: 'stopped' });
  });
});

describe('the OpenCtx files provider follows the folders', () => {
  it('serves a file of a folder added after it was made, and refuses it once the folder is gone', async () => {
    const first = dir('pb-octx-first-');
    const second = dir('pb-octx-second-');
    writeFileSync(join(second, 'b.md'), 'bee\n');
    let roots = [first];
    const provider = workspaceFiles({ roots: () => roots, query: () => [{ type: 'file', path: join(second, 'b.md') }] });
    const mention = { title: 'b.md', uri: pathToFileURL(join(second, 'b.md')).href };
    await expect(provider.items!({ mention }, {})).rejects.toThrow(/outside the workspace roots/);
    expect(await provider.mentions!({ query: 'b' }, {})).toEqual([]);

    roots = [first, second];
    expect(await provider.items!({ mention }, {})).toEqual([expect.objectContaining({ ai: { content: 'bee\n' } })]);
    expect(await provider.mentions!({ query: 'b' }, {})).toEqual([{ title: 'b.md', uri: mention.uri }]);

    roots = [first];
    await expect(provider.items!({ mention }, {})).rejects.toThrow(/outside the workspace roots/);
  });
});

describe('Workspace.changeRoots', () => {
  it('indexes an added folder and loads its config (held back where it needs trust); a removed one’s index is disposed and its config gone', { timeout: 30_000 }, async () => {
    const home = dir('pb-ws-home-');
    const first = dir('pb-ws-first-');
    const second = dir('pb-ws-second-');
    mkdirSync(join(second, '.patchbay'));
    writeFileSync(join(second, '.patchbay', 'config.json'), JSON.stringify({ toolCall: { approval: { deny: { grep: {} } } }, mcpServers: { evil: { command: 'true' } } }));
    const quietEvents = { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} };
    const ws = await Workspace.create({
      roots: [first],
      env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off' },
      frontEnd: { canAsk: false, canShowDiffs: false },
      events: quietEvents,
      logLevel: 'error',
    });
    try {
      const added = await ws.changeRoots({ added: [second], removed: [] });
      expect(added).toMatchObject({ roots: [first, second], added: [second], removed: [], warnings: [] });
      expect(added.heldBack).toEqual([expect.stringContaining('mcpServers.evil')]);
      expect(ws.roots).toEqual([first, second]);
      expect(ws.indexes.map((ix) => ix.root)).toEqual([first, second]);
      expect(ws.config.toolCall.approval.deny).toHaveProperty('grep');
      expect(ws.config.mcpServers).not.toHaveProperty('evil');
      expect(ws.configSources.some((src) => src.startsWith(join(second, '.patchbay')))).toBe(true);

      const index = ws.indexes[1];
      const disposed = vi.spyOn(index, 'dispose');
      // Two changes at once run one after the other: the second sees what the first left.
      const [removed, again] = await Promise.all([ws.changeRoots({ added: [], removed: [second] }), ws.changeRoots({ added: [], removed: [second] })]);
      expect(removed).toMatchObject({ roots: [first], removed: [second], warnings: [] });
      expect(again.removed).toEqual([]);
      expect(again.warnings).toEqual([expect.stringContaining('cannot remove workspace folder')]);
      expect(disposed).toHaveBeenCalledOnce();
      expect(ws.indexes.map((ix) => ix.root)).toEqual([first]);
      expect(ws.config.toolCall.approval.deny ?? {}).not.toHaveProperty('grep');
      expect(ws.configSources.some((src) => src.startsWith(second))).toBe(false);
    } finally {
      await ws.dispose();
    }
  });

  it('a peer that never follows a change holds back no later change, and shutdown does not wait on it', { timeout: 30_000 }, async () => {
    const home = dir('pb-ws-home-');
    const first = dir('pb-ws-first-');
    const second = dir('pb-ws-second-');
    const ws = await Workspace.create({
      roots: [first],
      env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off' },
      frontEnd: { canAsk: false, canShowDiffs: false },
      events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
      logLevel: 'error',
    });
    // The MCP peer hangs as one whose HTTP server never answers `notifications/roots/list_changed`.
    const mcp = (ws as unknown as { peers: Map<string, Peer> }).peers.get('mcp')!;
    const heard: RootsChange[] = [];
    mcp.rootsChanged = (change) => {
      heard.push(change);
      return new Promise<void>(() => {});
    };
    try {
      await ws.changeRoots({ added: [second], removed: [] });
      // Without the fix this removal waits on the hung peer for ever (the test times out).
      const removed = await ws.changeRoots({ added: [], removed: [second] });
      expect(removed.removed).toEqual([second]);
      expect(ws.roots).toEqual([first]);
      expect(heard).toEqual([{ added: [second], removed: [] }]);
    } finally {
      await ws.dispose();
    }
  });
});

describe('Workspace.dispose during a folder change', () => {
  it('waits for the change in progress, and the change tells no peer once shutdown began', { timeout: 30_000 }, async () => {
    const home = dir('pb-ws-home-');
    const first = dir('pb-ws-first-');
    const second = dir('pb-ws-second-');
    const ws = await Workspace.create({
      roots: [first],
      env: { HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off' },
      frontEnd: { canAsk: false, canShowDiffs: false },
      events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
      logLevel: 'error',
    });
    const peers = (ws as unknown as { peers: Map<string, Peer> }).peers;
    const told: string[] = [];
    for (const [name, p] of peers) if (p.rootsChanged) p.rootsChanged = () => void told.push(name);
    // The change's config reload is held until shutdown has begun.
    let release!: () => void;
    const reloading = new Promise<void>((r) => (release = r));
    const reload = ws.reloadConfig.bind(ws);
    let reloadStarted = false;
    vi.spyOn(ws, 'reloadConfig').mockImplementation(async () => {
      reloadStarted = true;
      await reloading;
      return reload();
    });
    let changed = false;
    const change = ws.changeRoots({ added: [second], removed: [] }).then((r) => ((changed = true), r));
    await until(() => reloadStarted);
    const disposed = ws.dispose();
    release();
    await disposed;
    expect(changed).toBe(true);
    expect(told).toEqual([]);
    await change;
  });
});

describe('RootsNotifier', () => {
  it('tells each peer of the changes in order, one at a time; a peer past its limit is warned about and the next change goes on', async () => {
    const warnings: string[] = [];
    let stopped = false;
    const n = new RootsNotifier({ warn: (m) => warnings.push(m), stopped: () => stopped, limitMs: 50 });
    const slowSeen: string[] = [];
    let release!: () => void;
    const slow = {
      name: 'slow',
      rootsChanged: (c: RootsChange) => {
        slowSeen.push(c.added[0]);
        return c.added[0] === '/a' ? new Promise<void>((r) => (release = r)) : undefined;
      },
    };
    const fastSeen: string[] = [];
    const fast = { name: 'fast', rootsChanged: (c: RootsChange) => void fastSeen.push(c.added[0]) };
    const failing = { name: 'failing', rootsChanged: () => Promise.reject(new Error('boom')) };
    n.tell([slow, fast, failing], { added: ['/a'], removed: [] });
    n.tell([slow, fast, failing], { added: ['/b'], removed: [] });
    // The second change waits for the first only at the slow peer, and only up to its limit.
    expect(slowSeen).toEqual([]);
    await until(() => fastSeen.length === 2);
    expect(fastSeen).toEqual(['/a', '/b']);
    await n.idle();
    expect(slowSeen).toEqual(['/a', '/b']);
    expect(warnings).toEqual([
      'failing could not follow the workspace folder change: boom',
      'failing could not follow the workspace folder change: boom',
      'slow has not followed the workspace folder change after 0.05 s; going on without waiting for it',
    ]);
    release();
    // Once stopped (the workspace is disposed), peers are told nothing more.
    stopped = true;
    n.tell([fast], { added: ['/c'], removed: [] });
    await n.idle();
    expect(fastSeen).toEqual(['/a', '/b']);
  });
});

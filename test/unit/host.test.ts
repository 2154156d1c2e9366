// The process-level host (src/runtime/host.ts): workspaces shared by their set of folders and
// disposed with their last user; chats owned by an instance lease (src/store/instances.ts), so
// two hosts on one home, or two workspaces in one process, never take each other's running
// chats for interrupted ones; one gateway listener per host; and no write to process.env.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Host, rootsKey, type WorkspaceOpenOptions } from '../../src/runtime/host.js';
import type { Workspace } from '../../src/runtime/workspace.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';

const dir = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

function envFor(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', HOME: home, PATCHBAY_HOME: join(home, '.patchbay'), XDG_CONFIG_HOME: join(home, '.config'), PATCHBAY_LOCAL_MODEL: 'off', ...extra };
}

/** No gateway, no OpenCtx host: nothing listens unless a test asks for it. */
const quiet = { gateway: { enabled: false }, openctx: { host: { enabled: false } } };

function openOpts(initializationOptions: unknown = quiet): WorkspaceOpenOptions {
  return {
    initializationOptions,
    frontEnd: { canAsk: false, canShowDiffs: false },
    events: { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} },
  };
}

const hosts: Host[] = [];
function openHost(home: string, extra?: Record<string, string>): Host {
  const h = Host.open({ env: envFor(home, extra), logLevel: 'error' });
  hosts.push(h);
  return h;
}
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

/** A background job of the workspace that writes its shell's pid; resolves with it once it runs. */
async function jobPid(ws: Workspace, root: string, name: string): Promise<number> {
  const file = join(root, `${name}.pid`);
  const started = ws.jobs.start({ command: `echo $$ > ${name}.pid; exec sleep 60`, cwd: root, chatId: `chat-${name}` });
  expect(started.ok).toBe(true);
  await vi.waitFor(() => expect(existsSync(file) && readFileSync(file, 'utf8').trim()).toMatch(/^\d+$/), { timeout: 10_000 });
  return Number(readFileSync(file, 'utf8').trim());
}
const running = (pid: number) => isAlive(pid) && !isZombie(pid);

describe('Host workspaces', () => {
  it('waits for a released workspace still stopping: shutdown keeps the store open for it, and its folders reopen only after it', async () => {
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const host = openHost(home);
    const first = await host.acquire([a], openOpts());
    // A slow stop, as a workspace whose MCP server takes its time: it waits for a real process to exit.
    const dispose = first.dispose.bind(first);
    const order: string[] = [];
    first.dispose = async () => {
      await new Promise<void>((r) => execFile(process.execPath, ['-e', ''], () => r()));
      order.push(`stopped; store open: ${host.store.db.open}`);
      await dispose();
    };
    const released = host.release(first);
    const again = host.acquire([a], openOpts()).then(
      (ws) => (order.push('reopened'), ws),
      () => undefined,
    );
    await Promise.all([released, again]);
    await host.dispose();
    order.push('host disposed');
    expect(order).toEqual(['stopped; store open: true', 'reopened', 'host disposed']);
  });

  it('a forced close reaches a released workspace that is still stopping', async () => {
    const host = openHost(dir('pb-host-'));
    const ws = await host.acquire([dir('pb-host-a-')], openOpts());
    let letGo!: () => void;
    const held = new Promise<void>((r) => (letGo = r));
    const dispose = ws.dispose.bind(ws);
    ws.dispose = async () => {
      await held;
      await dispose();
    };
    const forced = vi.spyOn(ws, 'forceClose');
    const released = host.release(ws);
    host.forceClose();
    expect(forced).toHaveBeenCalled();
    letGo();
    await released;
  });

  it('shares one workspace per set of folders, in any order; another set is another workspace', async () => {
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const b = dir('pb-host-b-');
    const host = openHost(home);
    const [ab, ba, abDup] = await Promise.all([host.acquire([a, b], openOpts()), host.acquire([b, a], openOpts()), host.acquire([`${a}/`, b, a], openOpts())]);
    expect(ba).toBe(ab);
    expect(abDup).toBe(ab);
    const onlyA = await host.acquire([a], openOpts());
    expect(onlyA).not.toBe(ab);
    expect(host.workspaces()).toHaveLength(2);
    expect(rootsKey([b, a])).toBe(rootsKey([a, b]));
    // Every workspace of a host uses its store, its home and its environment.
    expect(onlyA.store).toBe(host.store);
    expect(ab.store).toBe(host.store);
    expect(ab.home).toBe(host.home);
  });

  it('release of the last reference disposes the workspace, and only its own processes stop', async () => {
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const b = dir('pb-host-b-');
    const host = openHost(home);
    const wa = await host.acquire([a], openOpts());
    await host.acquire([a], openOpts());
    const wb = await host.acquire([b], openOpts());
    const [pa, pb] = [await jobPid(wa, a, 'a'), await jobPid(wb, b, 'b')];

    await host.release(wa);
    // One reference is left: the workspace is open and its job runs.
    expect(host.workspaces()).toContain(wa);
    expect(running(pa)).toBe(true);

    await host.release(wa);
    expect(host.workspaces()).not.toContain(wa);
    expect(host.find([a])).toBeUndefined();
    await vi.waitFor(() => expect(running(pa)).toBe(false), { timeout: 10_000 });
    // The other workspace, and its job, are untouched; the store is still open for it.
    expect(host.workspaces()).toEqual([wb]);
    expect(running(pb)).toBe(true);
    expect(wb.store.listChats({})).toEqual([]);

    // A workspace acquired again for those folders is a new one.
    const again = await host.acquire([a], openOpts());
    expect(again).not.toBe(wa);
  });

  it("a workspace's forced close kills its own processes only; the host's kills every one", async () => {
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const b = dir('pb-host-b-');
    const host = openHost(home);
    const wa = await host.acquire([a], openOpts());
    const wb = await host.acquire([b], openOpts());
    const [pa, pb] = [await jobPid(wa, a, 'a'), await jobPid(wb, b, 'b')];
    wa.forceClose();
    await vi.waitFor(() => expect(running(pa)).toBe(false), { timeout: 10_000 });
    expect(running(pb)).toBe(true);
    host.forceClose();
    await vi.waitFor(() => expect(running(pb)).toBe(false), { timeout: 10_000 });
  });

  it("follows a workspace's folders: after a change it is found by its new set", async () => {
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const b = dir('pb-host-b-');
    const host = openHost(home);
    const ws = await host.acquire([a], openOpts());
    await ws.changeRoots({ added: [b], removed: [] });
    expect(host.find([b, a])).toBe(ws);
    expect(host.find([a])).toBeUndefined();
    expect(await host.acquire([b, a], openOpts())).toBe(ws);
  });
});

describe('instance leases', () => {
  it("two hosts on one home leave each other's running chats alone; a released lease's chat is interrupted", async () => {
    const home = dir('pb-host-');
    const first = openHost(home);
    first.store.createChat({ id: 'c1' });
    first.store.updateChat('c1', { status: 'running' });

    const second = openHost(home);
    expect(second.instanceId).not.toBe(first.instanceId);
    // The second host's crash recovery ran: the first one's chat is still running, owned elsewhere.
    expect(second.store.getChat('c1')!.status).toBe('running');
    expect(second.store.runningElsewhere('c1')).toBe(process.pid);
    expect(first.store.runningElsewhere('c1')).toBeUndefined();

    // The first host stops without its chat having finished (its lease goes): the next host recovers it.
    await first.dispose();
    const third = openHost(home);
    expect(third.store.getChat('c1')!.status).toBe('idle');
    expect(third.store.messages('c1').at(-1)).toMatchObject({ role: 'system', kind: 'interrupted' });
  });

  it("a second workspace in the same host never marks the first one's running chats interrupted", async () => {
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const b = dir('pb-host-b-');
    const host = openHost(home);
    const wa = await host.acquire([a], openOpts());
    wa.store.createChat({ id: 'mine' });
    wa.store.updateChat('mine', { status: 'running' });
    await host.acquire([b], openOpts());
    expect(host.store.getChat('mine')!.status).toBe('running');
    expect(host.store.runningElsewhere('mine')).toBeUndefined();
  });

  it('a lease whose process is gone, or whose heartbeat expired, is dead: its running chats are recovered', async () => {
    const home = dir('pb-host-');
    const seed = SqliteStore.open(join(home, '.patchbay'));
    const now = Date.now();
    for (const id of ['dead-pid', 'expired', 'live']) seed.createChat({ id });
    seed.db.prepare('INSERT INTO instances (id, pid, started, heartbeat) VALUES (?, ?, ?, ?)').run('gone', 999_999_999, now, now);
    // This very process, but not renewed for an hour: a hung or reused lease.
    seed.db.prepare('INSERT INTO instances (id, pid, started, heartbeat) VALUES (?, ?, ?, ?)').run('stale', process.pid, now - 3_600_000, now - 3_600_000);
    seed.db.prepare('INSERT INTO instances (id, pid, started, heartbeat) VALUES (?, ?, ?, ?)').run('fresh', process.pid, now, now);
    const mark = seed.db.prepare("UPDATE chats SET status = 'running', owner_instance = ?, owner_pid = ? WHERE id = ?");
    mark.run('gone', 999_999_999, 'dead-pid');
    mark.run('stale', process.pid, 'expired');
    mark.run('fresh', process.pid, 'live');
    seed.close();

    const host = openHost(home);
    const status = (id: string) => host.store.getChat(id)!.status;
    expect([status('dead-pid'), status('expired'), status('live')]).toEqual(['idle', 'idle', 'running']);
    // Dead leases are forgotten when a host takes its own.
    const ids = (host.store.db.prepare('SELECT id FROM instances').all() as Array<{ id: string }>).map((r) => r.id).sort();
    expect(ids).toEqual([host.instanceId, 'fresh'].sort());
  });

  it('an older database (owner_pid only, no instances table) opens, migrates and is recovered by pid', async () => {
    const home = dir('pb-host-');
    const ph = join(home, '.patchbay');
    mkdirSync(ph, { recursive: true });
    const Database = (await import('better-sqlite3')).default;
    const old = new Database(join(ph, 'patchbay.db'));
    old.exec(`CREATE TABLE chats (
      id TEXT PRIMARY KEY, title TEXT, model TEXT, agent TEXT, status TEXT NOT NULL DEFAULT 'idle', owner_pid INTEGER,
      created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, usage TEXT NOT NULL DEFAULT '{"inputTokens":0,"outputTokens":0,"cost":0}')`);
    old.prepare("INSERT INTO chats (id, status, owner_pid, created_at, updated_at) VALUES ('old', 'running', 999999999, 1, 1)").run();
    old.close();
    const host = openHost(home);
    expect(host.store.getChat('old')!.status).toBe('idle');
    host.store.updateChat('old', { status: 'running' });
    const row = host.store.db.prepare("SELECT owner_pid, owner_instance FROM chats WHERE id = 'old'").get() as { owner_pid: number; owner_instance: string };
    // Written for older patchbays too: they read the pid.
    expect(row).toEqual({ owner_pid: process.pid, owner_instance: host.instanceId });
  });

  it("renews its lease on a heartbeat, so a long-running host's chats stay its own", async () => {
    const home = join(dir('pb-host-'), '.patchbay');
    const store = SqliteStore.open(home, { lease: { heartbeatMs: 20, expiryMs: 10_000 } });
    try {
      const beat = () => (store.db.prepare('SELECT heartbeat FROM instances WHERE id = ?').get(store.lease.id) as { heartbeat: number }).heartbeat;
      const first = beat();
      await vi.waitFor(() => expect(beat()).toBeGreaterThan(first), { timeout: 5_000 });
    } finally {
      store.close();
    }
  });
});

describe('Host environment and listeners', () => {
  it('writes nothing to process.env; the gateway listens once per host and its address and token are in host.env', async () => {
    const before = { ...process.env };
    const home = dir('pb-host-');
    const a = dir('pb-host-a-');
    const b = dir('pb-host-b-');
    const host = openHost(home);
    const gatewayOn = { gateway: { port: 0 }, openctx: { host: { enabled: false } } };
    const wa = await host.acquire([a], openOpts(gatewayOn));
    // Started as a façade starts it (runtime/start.ts): the listeners open with the rest.
    const failed: unknown[] = [];
    wa.start({ servers: 'now', listenerFailed: (_peer, e) => failed.push(e) });
    await vi.waitFor(() => expect(host.env.PATCHBAY_GATEWAY_URL).toBeDefined(), { timeout: 10_000 });
    expect(failed).toEqual([]);
    const url = host.env.PATCHBAY_GATEWAY_URL;
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    expect(host.env.PATCHBAY_PROVIDER_TOKEN).toMatch(/.+/);
    const token = host.env.PATCHBAY_PROVIDER_TOKEN;

    const wb = await host.acquire([b], openOpts(gatewayOn));
    await Promise.all(wb.startListeners().map((l) => l.started));
    // The second workspace joined the first one's listener: same address and token, one run file listing both folders.
    expect(host.env.PATCHBAY_GATEWAY_URL).toBe(url);
    expect(host.env.PATCHBAY_PROVIDER_TOKEN).toBe(token);
    const runDir = join(host.home, 'gateway', 'run');
    const files = readdirSync(runDir).filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    const run = JSON.parse(readFileSync(join(runDir, files[0]!), 'utf8')) as { url: string; roots: string[] };
    expect(run.url).toBe(url);
    expect(run.roots.sort()).toEqual([a, b].sort());

    // The first workspace goes: the listener stays for the second, and its run file no longer names the first's folder.
    await host.release(wa);
    const after = JSON.parse(readFileSync(join(runDir, files[0]!), 'utf8')) as { roots: string[] };
    expect(after.roots).toEqual([b]);
    await host.release(wb);
    expect(readdirSync(runDir).filter((f) => f.endsWith('.json'))).toEqual([]);

    expect(process.env).toEqual(before);
  });
});

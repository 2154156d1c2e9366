/**
 * The process bench/workspaces.ts measures (run as `node --expose-gc workspaces-child.js <json>`):
 * it opens workspaces one by one, each in its own folder, started as a façade starts one
 * (`Workspace.start`: the session, listeners, servers, models, the file index warm-up, config
 * watching), and after 1, 2, 4 and 8 of them, and again after closing them all, it collects
 * garbage and prints its memory as one JSON line. No peers are configured; the local model is off.
 *
 * It loads the build's own modules (`<root>/dist/runtime/…`), so it can measure another checkout
 * (a baseline, bench/baseline.ts): with `dist/runtime/host.js` there, the workspaces are one
 * Host's (`Host.open`, `acquire`, `release`: one store for all); without it (before issue 30),
 * each is a `Workspace.create` of its own. The first line says which.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Workspace as WorkspaceClass } from '../src/runtime/workspace.js';

type Workspace = WorkspaceClass;
/** What this uses of src/runtime/host.ts (issue 30's Host), loaded from a build that has it. */
interface HostLike {
  acquire(roots: string[], opts: object): Promise<Workspace>;
  release(ws: Workspace): Promise<void>;
  dispose(): Promise<void>;
}
interface HostModule {
  Host: { open(opts: { env: NodeJS.ProcessEnv; logLevel?: 'error' }): HostLike };
}
interface WorkspaceModule {
  Workspace: { create(opts: object): Promise<Workspace> };
}

interface Args {
  /** The checkout whose build (dist/) is measured. */
  root: string;
  home: string;
  folders: string[];
  levels: number[];
  settleMs: number;
}

interface Sample {
  open: number;
  rssKb: number;
  heapKb: number;
  externalKb: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as Args;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Memory once the process is quiet: wait, collect twice (finalizers in between). */
async function sample(open: number): Promise<Sample> {
  await sleep(args.settleMs);
  gc!();
  await sleep(50);
  gc!();
  const m = process.memoryUsage();
  return { open, rssKb: Math.round(m.rss / 1024), heapKb: Math.round(m.heapUsed / 1024), externalKb: Math.round((m.external + m.arrayBuffers) / 1024) };
}

const quiet = { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} };
const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: args.home, PATCHBAY_HOME: args.home, PATCHBAY_LOCAL_MODEL: 'off', PATCHBAY_CONFIG: '{}' };

const dist = (rel: string): string => join(args.root, 'dist', 'runtime', rel);
const hostMod = existsSync(dist('host.js')) ? ((await import(pathToFileURL(dist('host.js')).href)) as HostModule) : undefined;
const wsMod = (await import(pathToFileURL(dist('workspace.js')).href)) as WorkspaceModule;
const host = hostMod?.Host.open({ env, logLevel: 'error' });
const frontEnd = { frontEnd: { canAsk: false, canShowDiffs: false }, events: quiet };

/** One workspace on `folder`, started as a façade starts one (the ECA server at `initialized`). */
async function open(folder: string): Promise<Workspace> {
  const ws = host ? await host.acquire([folder], frontEnd) : await wsMod.Workspace.create({ roots: [folder], env, logLevel: 'error', ...frontEnd });
  // A build with `Workspace.start(policy)` (issue 30) has the one start-up order; before it, the ECA server's steps.
  const start = (ws as { start?: (policy: object) => void }).start;
  if (start) start.call(ws, { servers: 'now', listenerFailed: () => {} });
  else {
    void ws.startServers();
    for (const l of ws.startListeners()) void l.started.catch(() => {});
    ws.startSession();
    for (const ix of ws.indexes) void ix.warm();
    ws.watchConfig();
  }
  await ws.modelsReady;
  await Promise.all(ws.indexes.map((ix) => ix.warm()));
  return ws;
}

async function main(): Promise<void> {
  const out = (s: object): void => void process.stdout.write(`${JSON.stringify(s)}\n`);
  out({ mode: host ? 'Host.acquire' : 'Workspace.create' });
  out(await sample(0));
  const open_: Workspace[] = [];
  for (const level of args.levels) {
    while (open_.length < level) open_.push(await open(args.folders[open_.length]));
    out(await sample(open_.length));
  }
  await Promise.all(open_.splice(0).map((ws) => (host ? host.release(ws) : ws.dispose())));
  out({ ...(await sample(0)), open: -1 });
  await host?.dispose();
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`workspaces-child: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

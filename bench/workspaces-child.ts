/**
 * The process bench/workspaces.ts measures (run as `node --expose-gc workspaces-child.js <json>`):
 * it opens workspaces one by one, each in its own folder, started as a façade starts one (the
 * session, listeners, servers, models, the file index warm-up, config watching), and after 1, 2,
 * 4 and 8 of them, and again after closing them all, it collects garbage and prints its memory
 * as one JSON line. No peers are configured; the local model is off.
 */
import { Workspace } from '../src/runtime/workspace.js';

interface Args {
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

/** One workspace on `folder`, started the way `patchbay server` starts its one at `initialized`. */
async function open(folder: string): Promise<Workspace> {
  const ws = await Workspace.create({ roots: [folder], env, frontEnd: { canAsk: false, canShowDiffs: false }, events: quiet, logLevel: 'error' });
  ws.startSession();
  await Promise.all(ws.startListeners().map((l) => l.started.catch(() => {})));
  await ws.modelsReady;
  await ws.startServers();
  await Promise.all(ws.indexes.map((ix) => ix.warm()));
  ws.watchConfig();
  return ws;
}

async function main(): Promise<void> {
  const out = (s: Sample): void => void process.stdout.write(`${JSON.stringify(s)}\n`);
  out(await sample(0));
  const open_: Workspace[] = [];
  for (const level of args.levels) {
    while (open_.length < level) open_.push(await open(args.folders[open_.length]));
    out(await sample(open_.length));
  }
  await Promise.all(open_.splice(0).map((ws) => ws.dispose()));
  out({ ...(await sample(0)), open: -1 });
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`workspaces-child: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

/**
 * Before/after: the start-up and idle memory of a BASELINE build (bench/baseline.ts) and of this
 * checkout's, measured side by side in one run, interleaved, so both see the same machine load.
 *
 *   server start      spawn → `initialize` answered (`patchbay server`, the initialize written
 *                     as soon as the child is spawned, as an editor does)
 *   acp initialize    spawn → `initialize` answered (`patchbay acp`)
 *   acp session/new   spawn → `session/new` answered (sent as the initialize answer arrives)
 *   … CPU             the CPU time (user + system) the process had used when each of those
 *                     answers arrived: what start-up costs, less moved by other processes on
 *                     busy cores than the wall-clock figures (10 ms clock ticks, so medians)
 *   server idle RSS   VmRSS after initialize + initialized + config/updated and BENCH_IDLE_MS idle
 *   acp idle RSS      VmRSS after initialize + session/new and BENCH_IDLE_MS idle
 *
 * Timings: BENCH_STARTUP_RUNS rounds (default 15) after one discarded warm-up of each; in each
 * round every build runs once, the order of the builds alternating from round to round. Memory:
 * BENCH_RSS_RUNS rounds (default 3), in each of which the builds' processes are started and
 * left idle at the same time. Medians are reported, with the spread. Each build gets its own
 * home (their stores' schemas may differ); they share one small workspace folder.
 *
 * With no baseline, the same figures are measured for the current build alone.
 */
import { AcpProc } from './acp-proc.js';
import type { Build } from './baseline.js';
import { smallWorkspace } from './rss.js';
import { median, procCpuMs, procMemKb, Server, sleep, tempDir } from './util.js';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);
const RSS_RUNS = Number(process.env.BENCH_RSS_RUNS ?? 3);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 2000);

export type Figure = 'serverStart' | 'acpInit' | 'acpSession' | 'serverStartCpu' | 'acpInitCpu' | 'acpSessionCpu' | 'serverRssKb' | 'acpRssKb';
export const FIGURES: Figure[] = ['serverStart', 'acpInit', 'acpSession', 'serverStartCpu', 'acpInitCpu', 'acpSessionCpu', 'serverRssKb', 'acpRssKb'];
const empty = (): Record<Figure, number[]> => ({ serverStart: [], acpInit: [], acpSession: [], serverStartCpu: [], acpInitCpu: [], acpSessionCpu: [], serverRssKb: [], acpRssKb: [] });

export interface BuildFigures {
  build: Build;
  /** Every sample of each figure (ms, or kB for the RSS ones). */
  all: Record<Figure, number[]>;
  median: Record<Figure, number>;
}

/** Wall-clock ms since the spawn, and the CPU ms the process had used, when an answer arrived. */
interface At {
  wall: number;
  cpu: number;
}

/** spawn → `initialize` answered, of one `patchbay server`. */
async function serverStart(home: string, ws: string, bin: string): Promise<At> {
  const s = new Server({ home, bin });
  try {
    const { t } = await s.request('initialize', s.initializeParams(ws), 30_000);
    return { wall: t - s.spawnedAt, cpu: procCpuMs(s.pid) };
  } finally {
    await s.stop();
  }
}

/** spawn → initialize answered, and → session/new answered, of one `patchbay acp`. */
async function acpStart(home: string, ws: string, bin: string): Promise<{ init: At; session: At }> {
  const p = new AcpProc({ home, bin });
  try {
    const { msg, t } = await p.initialize();
    const init = { wall: t - p.spawnedAt, cpu: procCpuMs(p.pid) };
    if (msg.result?.protocolVersion !== 1) throw new Error(`initialize answered protocolVersion ${JSON.stringify(msg.result?.protocolVersion)}, not 1`);
    const created = await p.request('session/new', { cwd: ws, mcpServers: [] }, 30_000);
    const session = { wall: created.t - p.spawnedAt, cpu: procCpuMs(p.pid) };
    if (typeof created.msg.result?.sessionId !== 'string') throw new Error(`session/new answered no sessionId: ${JSON.stringify(created.msg.result)}`);
    return { init, session };
  } finally {
    await p.stop();
  }
}

/** Every build's `patchbay server`, handshaken and idle at the same time: their VmRSS. */
async function serverRss(builds: Build[], homes: string[], ws: string): Promise<number[]> {
  const servers = builds.map((b, i) => new Server({ home: homes[i], bin: b.bin }));
  try {
    await Promise.all(servers.map((s) => s.handshake(ws)));
    await sleep(IDLE_MS);
    return servers.map((s) => procMemKb(s.pid).rss);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** Every build's `patchbay acp`, with one session, idle at the same time: their VmRSS. */
async function acpRss(builds: Build[], homes: string[], ws: string): Promise<number[]> {
  const procs = builds.map((b, i) => new AcpProc({ home: homes[i], bin: b.bin }));
  try {
    await Promise.all(
      procs.map(async (p) => {
        await p.initialize();
        await p.request('session/new', { cwd: ws, mcpServers: [] }, 30_000);
      }),
    );
    await sleep(IDLE_MS);
    return procs.map((p) => procMemKb(p.pid).rss);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

export async function runBeforeAfter(builds: Build[], log: (s: string) => void = console.log): Promise<BuildFigures[]> {
  const ws = smallWorkspace();
  const homes = builds.map(() => tempDir('pb-bench-home-'));
  const out: BuildFigures[] = builds.map((build) => ({
    build,
    all: empty(),
    median: Object.fromEntries(FIGURES.map((k) => [k, 0])) as Record<Figure, number>,
  }));
  const names = builds.map((b) => b.name).join(' and ');
  log(`before-after: ${RUNS} rounds of ${names} start-up (server initialize, acp initialize and session/new), builds alternating…`);
  for (const b of out) log(`  ${b.build.name}: ${b.build.describe}`);
  const once = async (i: number, keep: boolean): Promise<void> => {
    const f = out[i];
    const server = await serverStart(homes[i], ws, f.build.bin);
    const acp = await acpStart(homes[i], ws, f.build.bin);
    if (!keep) return;
    f.all.serverStart.push(server.wall);
    f.all.acpInit.push(acp.init.wall);
    f.all.acpSession.push(acp.session.wall);
    f.all.serverStartCpu.push(server.cpu);
    f.all.acpInitCpu.push(acp.init.cpu);
    f.all.acpSessionCpu.push(acp.session.cpu);
  };
  for (let i = 0; i < out.length; i++) await once(i, false);
  for (let r = 0; r < RUNS; r++) {
    const order = out.map((_, i) => i);
    if (r % 2 === 1) order.reverse();
    for (const i of order) await once(i, true);
  }
  log(`before-after: ${RSS_RUNS} rounds of idle RSS (${IDLE_MS} ms after start-up), ${names} side by side…`);
  for (let r = 0; r < RSS_RUNS; r++) {
    const s = await serverRss(builds, homes, ws);
    const a = await acpRss(builds, homes, ws);
    out.forEach((f, i) => (f.all.serverRssKb.push(s[i]), f.all.acpRssKb.push(a[i])));
  }
  for (const f of out) for (const k of FIGURES) f.median[k] = median(f.all[k]);
  return out;
}

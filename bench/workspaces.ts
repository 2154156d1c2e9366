/**
 * The memory cost of each extra open workspace: one process (bench/workspaces-child.ts, run with
 * `--expose-gc`) opens 1, 2, 4 and 8 workspaces, each in its own temp folder with no peers
 * configured, and after each level collects garbage and reports its RSS and V8 heap; then it
 * closes them all and reports again (what closing gives back). The figure is the growth from 1 to
 * 8 open workspaces divided by 7: the cost of one more, the process's own start excluded.
 * BENCH_WS_ROUNDS child processes (default 3) are run one after another; medians are reported.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CURRENT, type Build } from './baseline.js';
import { smallWorkspace } from './rss.js';
import { median, tempDir } from './util.js';

export const WORKSPACE_TARGET_MB = 15;
const LEVELS = [1, 2, 4, 8];
const ROUNDS = Number(process.env.BENCH_WS_ROUNDS ?? 3);
const SETTLE_MS = Number(process.env.BENCH_WS_SETTLE_MS ?? 500);

export interface WsSample {
  /** Open workspaces (-1: after closing them all). */
  open: number;
  rssKb: number;
  heapKb: number;
  externalKb: number;
}

export interface WorkspacesResult {
  /** How the child opened them: `Host.acquire` (one host) or `Workspace.create` (a build before issue 30). */
  mode: string;
  levels: number[];
  /** Median of each level's samples over the rounds, in the child's order (0, 1, 2, 4, 8, closed). */
  samples: WsSample[];
  /** (8 open − 1 open) / 7, medians over the rounds. */
  perWorkspace: { rssKb: number; heapKb: number; externalKb: number };
  /** Each round's per-workspace RSS figure. */
  rssRounds: number[];
}

function child(root: string, home: string, folders: string[]): Promise<{ mode: string; samples: WsSample[] }> {
  const script = fileURLToPath(new URL('./workspaces-child.js', import.meta.url));
  const arg = JSON.stringify({ root, home, folders, levels: LEVELS, settleMs: SETTLE_MS });
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--expose-gc', script, arg], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: home } });
    let out = '';
    let err = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
    const timer = setTimeout(() => p.kill('SIGKILL'), 180_000);
    p.on('error', reject);
    p.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`workspaces child exited ${code}: ${err}`));
      const [first, ...rest] = out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as WsSample & { mode: string });
      resolve({ mode: first?.mode ?? '?', samples: rest });
    });
  });
}

/** `build`: whose dist/ to load (this checkout's by default). */
export async function runWorkspaces(log: (s: string) => void = console.log, build: Build = CURRENT): Promise<WorkspacesResult> {
  const max = Math.max(...LEVELS);
  log(`workspaces (${build.name}): one process opening ${LEVELS.join(', ')} workspaces (distinct folders, no peers), RSS and heap after GC, ${ROUNDS} rounds…`);
  const rounds: WsSample[][] = [];
  let mode = '';
  for (let r = 0; r < ROUNDS; r++) {
    const folders = Array.from({ length: max }, () => smallWorkspace());
    const got = await child(build.root, tempDir('pb-bench-home-'), folders);
    const s = got.samples;
    mode = got.mode;
    const at = (n: number): WsSample => s.find((x) => x.open === n) ?? { open: n, rssKb: Number.NaN, heapKb: Number.NaN, externalKb: Number.NaN };
    log(`  round ${r + 1}: ${s.map((x) => `${x.open < 0 ? 'closed' : `${x.open} open`} ${(x.rssKb / 1024).toFixed(1)} MB (heap ${(x.heapKb / 1024).toFixed(1)})`).join(', ')}`);
    rounds.push([0, ...LEVELS, -1].map(at));
  }
  const samples = rounds[0].map((_, i) => ({
    open: rounds[0][i].open,
    rssKb: median(rounds.map((r) => r[i].rssKb)),
    heapKb: median(rounds.map((r) => r[i].heapKb)),
    externalKb: median(rounds.map((r) => r[i].externalKb)),
  }));
  const per = (r: WsSample[], k: 'rssKb' | 'heapKb' | 'externalKb'): number => {
    const one = r.find((x) => x.open === 1)!;
    const all = r.find((x) => x.open === max)!;
    return (all[k] - one[k]) / (max - 1);
  };
  return {
    mode,
    levels: LEVELS,
    samples,
    perWorkspace: { rssKb: median(rounds.map((r) => per(r, 'rssKb'))), heapKb: median(rounds.map((r) => per(r, 'heapKb'))), externalKb: median(rounds.map((r) => per(r, 'externalKb'))) },
    rssRounds: rounds.map((r) => per(r, 'rssKb')),
  };
}

/**
 * Startup benchmark: spawn → `initialize` answered for `patchbay server`, against
 * spawn → exit for `node -e 0` (node's own start), measured alternately in the same run.
 * The initialize request is written as soon as the child is spawned (the pipe buffers it),
 * as an editor does. One home is reused across runs (as an editor's would be); the first
 * run of each is a discarded warm-up (disk cache, first-time store creation).
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { median, now, Server, tempDir } from './util.js';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);

export interface StartupResult {
  runs: number;
  patchbayMs: number;
  nodeMs: number;
  ratio: number;
  patchbayAll: number[];
  nodeAll: number[];
}

function nodeStart(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    // The same minimal environment the server gets (bench/util.ts Server): variables such as
    // NODE_EXTRA_CA_CERTS change node's own start-up time, so both sides must match.
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'pipe', env: { PATH: process.env.PATH ?? '', HOME: tmpdir() } });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`node -e 0 exited ${code}`))));
  });
}

/** spawn → `initialize` answered for one `patchbay server` (bench/acp-startup.ts compares `patchbay acp` with it); `bin`: another build's. */
export async function patchbayStart(home: string, ws: string, bin?: string): Promise<number> {
  const s = new Server({ home, ...(bin ? { bin } : {}) });
  try {
    const { t } = await s.request('initialize', s.initializeParams(ws), 30_000);
    return t - s.spawnedAt;
  } finally {
    await s.stop();
  }
}

export async function runStartup(log: (s: string) => void = console.log): Promise<StartupResult> {
  const home = tempDir();
  const ws = tempDir('pb-bench-ws-');
  log(`startup: ${RUNS} runs each of \`patchbay server\` (spawn → initialize answered) and \`node -e 0\` (spawn → exit)…`);
  await nodeStart();
  await patchbayStart(home, ws);
  const nodeAll: number[] = [];
  const patchbayAll: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    nodeAll.push(await nodeStart());
    patchbayAll.push(await patchbayStart(home, ws));
  }
  const patchbayMs = median(patchbayAll);
  const nodeMs = median(nodeAll);
  return { runs: RUNS, patchbayMs, nodeMs, ratio: patchbayMs / nodeMs, patchbayAll, nodeAll };
}

/**
 * Idle memory: `patchbay server` after initialize + initialized + config/updated and ~2 s
 * idle, VmRSS from /proc/<pid>/status; alongside, in the same run, an idle bare node
 * process (`node -e setInterval…`) as the reference for the ratio.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { procMemKb, Server, sleep, tempDir } from './util.js';

const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 2000);

export interface RssResult {
  rssKb: number;
  hwmKb: number;
  nodeRssKb: number;
  ratio: number;
}

/** A small but real workspace, so the file index has something to hold. */
export function smallWorkspace(): string {
  const ws = tempDir('pb-bench-ws-');
  for (const dir of ['src', 'src/lib', 'test', 'docs']) {
    mkdirSync(join(ws, dir), { recursive: true });
    for (let i = 0; i < 10; i++) writeFileSync(join(ws, dir, `file${i}.ts`), `export const x${i} = ${i};\n`);
  }
  writeFileSync(join(ws, 'README.md'), '# ws\n');
  return ws;
}

export async function runRss(log: (s: string) => void = console.log): Promise<RssResult> {
  log(`rss: patchbay server idle ${IDLE_MS} ms after the handshake, next to an idle bare node…`);
  const baseline = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  const s = new Server({ home: tempDir() });
  try {
    await s.handshake(smallWorkspace());
    await sleep(IDLE_MS);
    const mem = procMemKb(s.pid);
    const nodeRss = procMemKb(baseline.pid ?? -1).rss;
    return { rssKb: mem.rss, hwmKb: mem.hwm, nodeRssKb: nodeRss, ratio: mem.rss / nodeRss };
  } finally {
    baseline.kill();
    await s.stop();
  }
}

/**
 * Framing benchmark: how long the real server takes to answer a request written right after an
 * ignored notification of 10 MB and of 40 MB on its stdin. A reader linear in the bytes spends
 * about the same time per MB at both sizes; the quadratic one it replaced spent >6× as long
 * per MB at 40 MB (issue 14, point 7).
 */
import { now, Server, tempDir } from './util.js';

export const FRAMING_SIZES_MB = [10, 40] as const;

export interface FramingResult {
  /** Size in MB → ms from the first byte written to the answer, and that per MB. */
  runs: Array<{ mb: number; ms: number; msPerMb: number }>;
  /** ms per MB at the largest size / at the smallest: ~1 when linear. */
  growth: number;
}

async function once(mb: number): Promise<number> {
  const s = new Server({ home: tempDir(), env: { PATCHBAY_LOCAL_MODEL: 'off' }, config: { gateway: { port: 0 } } });
  try {
    await s.handshake(tempDir('pb-bench-ws-'));
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'bench/ignored', params: { blob: 'y'.repeat(mb * 1024 * 1024) } });
    const frame = Buffer.from(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const t0 = now();
    s.writeRaw(frame);
    const { t } = await s.request('chat/list', {}, 300_000);
    return t - t0;
  } finally {
    await s.stop();
  }
}

export async function runFraming(log: (s: string) => void = console.log): Promise<FramingResult> {
  log(`framing: a request right after an ignored ${FRAMING_SIZES_MB.join(' / ')} MB notification on the server's stdin…`);
  const runs: FramingResult['runs'] = [];
  for (const mb of FRAMING_SIZES_MB) {
    // The best of three: the figure is the reader's cost, not the machine's other load.
    const times: number[] = [];
    for (let i = 0; i < 3; i++) times.push(await once(mb));
    const best = Math.min(...times);
    runs.push({ mb, ms: best, msPerMb: best / mb });
    log(`  ${mb} MB: ${best.toFixed(0)} ms (${(best / mb).toFixed(1)} ms/MB; runs ${times.map((x) => x.toFixed(0)).join(', ')} ms)`);
  }
  return { runs, growth: runs[runs.length - 1].msPerMb / runs[0].msPerMb };
}

/**
 * ACP startup benchmark: spawn → `initialize` answered for `patchbay acp`, against the same for
 * `patchbay server` (ECA, bench/startup.ts), measured alternately in the same run with one home
 * for both (as an editor's would be) and a discarded warm-up of each. The ACP `initialize` is
 * written as soon as the child is spawned, as an ACP client does; it carries no workspace (ACP
 * names one per session), so the figure is the façade's own start.
 */
import { AcpProc } from './acp-proc.js';
import { patchbayStart } from './startup.js';
import { median, tempDir } from './util.js';

const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 15);
/** Issue 19: ACP's start may cost at most 10 % more than ECA's. */
export const ACP_STARTUP_TARGET = 1.1;

export interface AcpStartupResult {
  runs: number;
  acpMs: number;
  ecaMs: number;
  ratio: number;
  acpAll: number[];
  ecaAll: number[];
}

async function acpStart(home: string): Promise<number> {
  const p = new AcpProc({ home });
  try {
    const { msg, t } = await p.initialize();
    if (msg.result?.protocolVersion !== 1) throw new Error(`initialize answered protocolVersion ${JSON.stringify(msg.result?.protocolVersion)}, not 1`);
    return t - p.spawnedAt;
  } finally {
    await p.stop();
  }
}

export async function runAcpStartup(log: (s: string) => void = console.log): Promise<AcpStartupResult> {
  const home = tempDir();
  const ws = tempDir('pb-bench-ws-');
  log(`acp startup: ${RUNS} runs each of \`patchbay acp\` and \`patchbay server\` (spawn → initialize answered), alternating…`);
  await acpStart(home);
  await patchbayStart(home, ws);
  const acpAll: number[] = [];
  const ecaAll: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternate which goes first, so neither always runs right after the other's exit.
    if (i % 2 === 0) {
      acpAll.push(await acpStart(home));
      ecaAll.push(await patchbayStart(home, ws));
    } else {
      ecaAll.push(await patchbayStart(home, ws));
      acpAll.push(await acpStart(home));
    }
  }
  const acpMs = median(acpAll);
  const ecaMs = median(ecaAll);
  return { runs: RUNS, acpMs, ecaMs, ratio: acpMs / ecaMs, acpAll, ecaAll };
}

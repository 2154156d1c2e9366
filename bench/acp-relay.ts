/**
 * ACP relay benchmark: bench/relay.ts's method with `patchbay acp` in place of `patchbay server`.
 * The fake LLM stamps every chunk with its send time; the ACP side reads `session/update`
 * `agent_message_chunk` lines from patchbay's stdout with raw ndjson parsing (bench/acp-proc.ts)
 * and the direct side reads the same fake with a plain SSE client. Latency = arrival − send
 * time, reported as relay − direct per percentile; the rate is a 10,000-chunk burst, direct and
 * relay alternating. Each prompt gets a fresh session (as the ECA bench gets a fresh chat).
 */
import { FakeLlm, chunkReply } from '../test/fixtures/fake-llm.js';
import { AcpProc } from './acp-proc.js';
import { BURST_TEXT, CHUNKS, Driver, Stamps, directBurst, directPaced, measureLegs, pacedReply, type RelayResult } from './relay.js';
import { fakeConfig, tempDir, type Msg } from './util.js';

interface Turn {
  chunks: number;
  stopReason: string;
}

/** `session/new` then one `session/prompt`; `onText` sees each agent message chunk's text. */
async function prompt(p: AcpProc, ws: string, onText: (text: string, t: number) => void): Promise<Turn> {
  const { msg: created } = await p.request('session/new', { cwd: ws, mcpServers: [] });
  const sessionId = created.result.sessionId as string;
  const turn: Turn = { chunks: 0, stopReason: '' };
  const off = p.listen((m: Msg, t: number) => {
    if (m.method !== 'session/update' || m.params?.sessionId !== sessionId) return;
    const u = m.params.update;
    if (u?.sessionUpdate === 'agent_message_chunk' && u.content?.type === 'text') {
      turn.chunks++;
      onText(u.content.text as string, t);
    }
  });
  try {
    const { msg } = await p.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'bench' }] }, 120_000);
    turn.stopReason = msg.result?.stopReason as string;
  } finally {
    off();
  }
  if (turn.stopReason !== 'end_turn') throw new Error(`acp relay: the turn ended ${turn.stopReason}; stderr tail:\n${p.stderr.slice(-2000)}`);
  return turn;
}

async function relayPaced(p: AcpProc, ws: string, d: Driver, n: number): Promise<{ latencies: number[]; notifications: number }> {
  d.next = () => pacedReply(n);
  const stamps = new Stamps();
  const turn = await prompt(p, ws, (text, t) => stamps.feed(text, t));
  if (stamps.latencies.length !== n) throw new Error(`acp relay: ${stamps.latencies.length} of ${n} chunks arrived`);
  return { latencies: stamps.latencies, notifications: turn.chunks };
}

async function relayBurst(p: AcpProc, ws: string, d: Driver, n: number): Promise<number> {
  d.next = () => chunkReply(n, BURST_TEXT);
  let chars = 0;
  let last = 0;
  await prompt(p, ws, (text, t) => {
    chars += text.length;
    last = t;
  });
  if (chars !== n * BURST_TEXT.length) throw new Error(`acp relay: ${chars} of ${n * BURST_TEXT.length} chars arrived`);
  return (n * 1000) / (last - d.startedAt);
}

/**
 * `bins`: the bin/patchbay of each build to measure (undefined: this checkout's), e.g. a
 * baseline's and this one's; one result each, in that order, measured in the same rounds.
 */
export async function runAcpRelay(log: (s: string) => void = console.log, bins: Array<string | undefined> = [undefined]): Promise<RelayResult[]> {
  const fake = await FakeLlm.start();
  const d = new Driver(fake);
  const ws = tempDir('pb-bench-ws-');
  const procs = bins.map((bin) => new AcpProc({ home: tempDir(), config: fakeConfig(fake.url), ...(bin ? { bin } : {}) }));
  try {
    await Promise.all(procs.map((p) => p.initialize()));

    // Warm-up: JIT for the fake, the direct client, patchbay and the line reader.
    await directBurst(d, CHUNKS);
    await directPaced(d, 500);
    for (const p of procs) {
      await relayBurst(p, ws, d, CHUNKS);
      await relayPaced(p, ws, d, 500);
    }
    return await measureLegs(
      'acp relay',
      log,
      d,
      procs.map((p) => ({ pid: p.pid, paced: () => relayPaced(p, ws, d, CHUNKS), burst: () => relayBurst(p, ws, d, CHUNKS) })),
    );
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    await fake.close();
  }
}

/**
 * Relay benchmark: streamed chunks from the fake LLM (OpenAI chat SSE) read by the editor
 * through patchbay, against the same fake read directly by a plain SSE client (fetch +
 * manual line parsing) in this process.
 *
 * - Latency: every chunk's text is its own send time — a getter step, evaluated by the fake
 *   right before it writes the chunk to the socket — followed by `|`. Chunks are paced (a
 *   timer tick after every PACE_GROUP chunks) so the figure is the per-chunk path, not a
 *   queue. Latency = arrival time of the bytes carrying the chunk − its send time; the
 *   figure reported is relay − direct at each percentile.
 * - Rate: a 10,000-chunk burst (the fake's fast path), chunks / (last chunk read − moment
 *   the fake started answering). Direct and relay runs alternate; medians are reported.
 *
 * bench/acp-relay.ts measures `patchbay acp` the same way, with the pieces exported here.
 */
import { FakeLlm, chunkReply, type Reply, type Step } from '../test/fixtures/fake-llm.js';
import { fakeConfig, median, now, procCpuMs, Server, summarize, tempDir, type Msg, type Summary } from './util.js';

export const CHUNKS = 10_000;
/** Chunks written back to back between timer ticks in the latency run. */
const PACE_GROUP = Number(process.env.BENCH_PACE_GROUP ?? 1);
export const BURST_RUNS = Number(process.env.BENCH_BURST_RUNS ?? 5);
/** Bursts when builds are compared (a baseline beside this one): each is cheap, and the CPU figure counts 10 ms ticks. */
const COMPARE_BURST_RUNS = Number(process.env.BENCH_COMPARE_BURST_RUNS ?? 15);
export const BURST_TEXT = 'tok ';

export interface RelayResult {
  chunks: number;
  direct: { latency: Summary; rate: number; rates: number[] };
  /** `cpuMs`: the server's CPU time (user + system) over each burst, in the order of `rates`. */
  relay: { latency: Summary; rate: number; rates: number[]; notifications: number; cpuMs: number[] };
  addedP50: number;
  addedP99: number;
  rateRatio: number;
}

/** Parses `<sendTime>|` records out of a text stream, however it was split or merged. */
export class Stamps {
  private rest = '';
  readonly latencies: number[] = [];
  feed(text: string, t: number): void {
    this.rest += text;
    let i: number;
    while ((i = this.rest.indexOf('|')) >= 0) {
      this.latencies.push(t - Number(this.rest.slice(0, i)));
      this.rest = this.rest.slice(i + 1);
    }
  }
}

/** Paced steps whose text is evaluated (as the current time) when the fake sends it. */
export function pacedReply(n: number): Step[] {
  const stamp = {
    get text(): string {
      return `${now().toFixed(4)}|`;
    },
  } as Step;
  const steps: Step[] = [];
  for (let i = 0; i < n; i++) {
    steps.push(stamp);
    if ((i + 1) % PACE_GROUP === 0 && i < n - 1) steps.push({ delay: 0 });
  }
  return steps;
}

/** The fake answers whatever `next` says; `startedAt` is when it began answering. */
export class Driver {
  next: () => Reply = () => [{ text: 'ok' }];
  startedAt = 0;
  constructor(readonly fake: FakeLlm) {
    fake.onRequest = (path) => {
      if (path !== '/v1/chat/completions') return undefined;
      this.startedAt = now();
      return this.next();
    };
  }
}

// ---------------------------------------------------------------- direct

/** A plain SSE client: fetch, split lines, JSON-parse `data:` payloads. */
async function direct(url: string, onText: (text: string, t: number) => void): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'm1', stream: true, messages: [{ role: 'user', content: 'bench' }] }),
  });
  if (!res.ok || !res.body) throw new Error(`direct: HTTP ${res.status}`);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    const t = now();
    buf += dec.decode(value, { stream: true });
    let start = 0;
    let nl: number;
    while ((nl = buf.indexOf('\n', start)) >= 0) {
      let line = buf.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (!line.startsWith('data:')) continue;
      const data = line.slice(line.startsWith('data: ') ? 6 : 5);
      if (data === '[DONE]') {
        await reader.cancel().catch(() => {});
        return;
      }
      const content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
      if (content) onText(content, t);
    }
    buf = buf.slice(start);
  }
}

export async function directPaced(d: Driver, n: number): Promise<number[]> {
  d.next = () => pacedReply(n);
  const stamps = new Stamps();
  await direct(d.fake.url, (text, t) => stamps.feed(text, t));
  if (stamps.latencies.length !== n) throw new Error(`direct: ${stamps.latencies.length} of ${n} chunks arrived`);
  return stamps.latencies;
}

/** Chunks per second of one burst. */
export async function directBurst(d: Driver, n: number): Promise<number> {
  d.next = () => chunkReply(n, BURST_TEXT);
  let chars = 0;
  let last = 0;
  await direct(d.fake.url, (text, t) => {
    chars += text.length;
    last = t;
  });
  if (chars !== n * BURST_TEXT.length) throw new Error(`direct: ${chars} of ${n * BURST_TEXT.length} chars arrived`);
  return (n * 1000) / (last - d.startedAt);
}

// ---------------------------------------------------------------- through patchbay

interface Turn {
  texts: number;
  finishedAt: number;
  errors: string[];
}

/** One `chat/prompt` (new chat); `onText` sees each assistant text notification. */
async function prompt(s: Server, onText: (text: string, t: number) => void): Promise<Turn> {
  const turn: Turn = { texts: 0, finishedAt: 0, errors: [] };
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const off = s.listen((m: Msg, t: number) => {
    if (m.method !== 'chat/contentReceived') return;
    const { role, content } = m.params;
    if (role === 'assistant' && content.type === 'text') {
      turn.texts++;
      onText(content.text, t);
    } else if (role === 'system' && content.type === 'text') {
      turn.errors.push(content.text);
    } else if (role === 'system' && content.type === 'progress' && content.state === 'finished') {
      turn.finishedAt = t;
      done();
    }
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await s.request('chat/prompt', { message: 'bench' });
    await Promise.race([
      finished,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`relay: turn did not finish; stderr tail:\n${s.stderr.slice(-2000)}`)), 120_000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    off();
  }
  if (turn.errors.length) throw new Error(`relay: patchbay said: ${turn.errors.join(' | ')}`);
  return turn;
}

async function relayPaced(s: Server, d: Driver, n: number): Promise<{ latencies: number[]; notifications: number }> {
  d.next = () => pacedReply(n);
  const stamps = new Stamps();
  const turn = await prompt(s, (text, t) => stamps.feed(text, t));
  if (stamps.latencies.length !== n) throw new Error(`relay: ${stamps.latencies.length} of ${n} chunks arrived`);
  return { latencies: stamps.latencies, notifications: turn.texts };
}

async function relayBurst(s: Server, d: Driver, n: number): Promise<number> {
  d.next = () => chunkReply(n, BURST_TEXT);
  let chars = 0;
  let last = 0;
  await prompt(s, (text, t) => {
    chars += text.length;
    last = t;
  });
  if (chars !== n * BURST_TEXT.length) throw new Error(`relay: ${chars} of ${n * BURST_TEXT.length} chars arrived`);
  return (n * 1000) / (last - d.startedAt);
}

// ---------------------------------------------------------------- the benchmark

/** One build's relay: its paced latency run and one burst (chunks per second). */
export interface RelayLeg {
  /** The relaying process (its CPU time is read around each burst). */
  pid: number;
  paced: () => Promise<{ latencies: number[]; notifications: number }>;
  burst: () => Promise<number>;
}

/**
 * The measuring half of a relay bench, shared by ECA's and ACP's, for one build or several (a
 * baseline beside the current one, bench/baseline.ts): the paced latency run straight from the
 * fake, then through each build; then BURST_RUNS rounds (COMPARE_BURST_RUNS for several builds)
 * of a burst straight from the fake and one through each build (the builds' order alternating
 * from round to round), so every figure of a round shares the machine's load; the server's CPU
 * time is read around each burst. One result per leg, each with the same direct reference.
 */
export async function measureLegs(label: string, log: (s: string) => void, d: Driver, legs: RelayLeg[]): Promise<RelayResult[]> {
  log(`${label}: latency run, ${CHUNKS} paced chunks (a timer tick every ${PACE_GROUP}) direct, then through patchbay${legs.length > 1 ? ` (${legs.length} builds)` : ''}…`);
  const directLat = summarize(await directPaced(d, CHUNKS));
  const relayRuns: Array<{ latencies: number[]; notifications: number }> = [];
  for (const leg of legs) relayRuns.push(await leg.paced());
  const bursts = legs.length > 1 ? COMPARE_BURST_RUNS : BURST_RUNS;
  log(`${label}: rate, ${bursts} × ${CHUNKS}-chunk bursts, direct and relay alternating…`);
  const directRates: number[] = [];
  const relayRates: number[][] = legs.map(() => []);
  const cpu: number[][] = legs.map(() => []);
  for (let i = 0; i < bursts; i++) {
    directRates.push(await directBurst(d, CHUNKS));
    const order = legs.map((_, j) => j);
    if (i % 2 === 1) order.reverse();
    for (const j of order) {
      const c0 = procCpuMs(legs[j].pid);
      relayRates[j].push(await legs[j].burst());
      cpu[j].push(procCpuMs(legs[j].pid) - c0);
    }
  }
  const directRate = median(directRates);
  return legs.map((_, j) => {
    const relayLat = summarize(relayRuns[j].latencies);
    const relayRate = median(relayRates[j]);
    return {
      chunks: CHUNKS,
      direct: { latency: directLat, rate: directRate, rates: directRates },
      relay: { latency: relayLat, rate: relayRate, rates: relayRates[j], notifications: relayRuns[j].notifications, cpuMs: cpu[j] },
      addedP50: relayLat.p50 - directLat.p50,
      addedP99: relayLat.p99 - directLat.p99,
      rateRatio: relayRate / directRate,
    };
  });
}

/**
 * `bins`: the bin/patchbay of each build to measure (undefined: this checkout's), e.g. a
 * baseline's and this one's; one result each, in that order, measured in the same rounds.
 */
export async function runRelay(log: (s: string) => void = console.log, bins: Array<string | undefined> = [undefined]): Promise<RelayResult[]> {
  const fake = await FakeLlm.start();
  const d = new Driver(fake);
  const servers = bins.map((bin) => new Server({ home: tempDir(), config: fakeConfig(fake.url), ...(bin ? { bin } : {}) }));
  try {
    const ws = tempDir('pb-bench-ws-');
    await Promise.all(servers.map((s) => s.handshake(ws)));

    // Warm-up: JIT for the fake, the direct client, patchbay and the frame reader.
    await directBurst(d, CHUNKS);
    await directPaced(d, 500);
    for (const s of servers) {
      await relayBurst(s, d, CHUNKS);
      await relayPaced(s, d, 500);
    }
    return await measureLegs(
      'relay',
      log,
      d,
      servers.map((s) => ({ pid: s.pid, paced: () => relayPaced(s, d, CHUNKS), burst: () => relayBurst(s, d, CHUNKS) })),
    );
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await fake.close();
  }
}

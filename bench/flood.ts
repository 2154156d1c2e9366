/**
 * The editor under a provider flood (issue 14, point 8): the real `patchbay server` over stdio,
 * one chat open, and the latency of a cheap editor request (`chat/queryCommands`, one at a
 * time) first idle, then while PROVIDERS gateway providers push `keep` events (BENCH_FLOOD_LEVEL=surface:
 * `surface` ones, each also shown in the chat) as fast as their
 * sockets take them for FLOOD_MS. Target: flood p50 and p95 within 2× of idle.
 *
 * The providers run in a child process (bench/.work/flood-providers.mjs), so this process's
 * event loop measures the editor's latency and nothing else.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { fakeConfig, now, ROOT, Server, sleep, summarize, tempDir, workFile, type Summary } from './util.js';

const PROVIDERS = Number(process.env.BENCH_FLOOD_PROVIDERS ?? 10);
const FLOOD_MS = Number(process.env.BENCH_FLOOD_MS ?? 8000);
const IDLE_REQUESTS = Number(process.env.BENCH_FLOOD_IDLE_REQUESTS ?? 300);
/** Pause between two editor requests: an editor asks now and then, not in a tight loop. */
const GAP_MS = 5;
/** `keep` (stored only) by default; `surface` also shows each event in the chat. */
const LEVEL = process.env.BENCH_FLOOD_LEVEL === 'surface' ? 'surface' : 'keep';

export const FLOOD_TARGET = 2;

export interface FloodRun {
  idle: Summary;
  flood: Summary;
  providers: number;
  /** Pushes the providers got onto their sockets, and the RATE_LIMITED errors they were sent back. */
  pushes: number;
  rateLimited: number;
}

/** Each provider: auth → hello → push `keep` events whenever its socket buffer has room. */
const PROVIDERS_SCRIPT = `
import WebSocket from 'ws';
const [url, token, count, ms, level] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5]), process.argv[6]];
let pushes = 0, limited = 0, bound = 0;
const event = 'x'.repeat(200);
function provider(i) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    let flooding = false;
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      if (m.type === 'sessions') ws.send(JSON.stringify({ type: 'hello', name: 'flood' + i, protocolVersion: 2, session: m.active[0].id, tools: [] }));
      else if (m.type === 'hello.ack') { bound++; resolve(ws); }
      else if (m.type === 'error' && m.code === 'RATE_LIMITED') limited++;
    });
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token })));
    ws.on('error', () => {});
  });
}
const sockets = await Promise.all(Array.from({ length: count }, (_, i) => provider(i)));
process.stdout.write('bound ' + bound + '\\n');
await new Promise((r) => process.stdin.once('data', r));
const end = Date.now() + ms;
for (const ws of sockets) {
  // As fast as the socket takes them; when the gateway stops reading, wait for the kernel to
  // drain rather than spin (a spinning client would only steal the server's CPU).
  const pump = () => {
    for (let i = 0; i < 1000 && Date.now() < end && ws.readyState === 1; i++) {
      ws.send(JSON.stringify({ type: 'push', level, event }));
      pushes++;
    }
    if (Date.now() >= end || ws.readyState !== 1) return;
    if (ws._socket.writableNeedDrain) ws._socket.once('drain', pump);
    else setImmediate(pump);
  };
  pump();
}
await new Promise((r) => setTimeout(r, ms + 200));
process.stdout.write('done ' + pushes + ' ' + limited + '\\n');
for (const ws of sockets) ws.terminate();
process.exit(0);
`;

async function timedRequests(s: Server, until: () => boolean): Promise<number[]> {
  const out: number[] = [];
  while (until()) {
    const t0 = now();
    const r = await s.request('chat/queryCommands', { query: '' });
    out.push(r.t - t0);
    await sleep(GAP_MS);
  }
  return out;
}

export async function runFlood(log: (s: string) => void): Promise<FloodRun> {
  const fake = await FakeLlm.start();
  const home = tempDir('pb-bench-flood-');
  const root = tempDir('pb-bench-flood-ws-');
  const s = new Server({ home, config: fakeConfig(fake.url) });
  try {
    await s.handshake(root);
    fake.script([{ text: 'ready' }]);
    const started = s.waitFor((m) => m.method === 'chat/contentReceived' && m.params?.content?.type === 'progress' && m.params.content.state === 'finished', 'first turn');
    await s.request('chat/prompt', { message: 'start' });
    await started;
    const dir = join(home, 'gateway');
    for (let i = 0; i < 200 && !existsSync(join(dir, 'address')); i++) await sleep(25);
    const url = readFileSync(join(dir, 'address'), 'utf8').trim();
    const token = readFileSync(join(dir, 'provider-token'), 'utf8').trim();

    // Warm-up, then idle.
    let n = 0;
    await timedRequests(s, () => n++ < 50);
    n = 0;
    const idle = summarize(await timedRequests(s, () => n++ < IDLE_REQUESTS));

    const script = workFile('flood-providers.mjs', PROVIDERS_SCRIPT);
    const child = spawn(process.execPath, [script, url, token, String(PROVIDERS), String(FLOOD_MS), LEVEL], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const printed = async (re: RegExp): Promise<RegExpMatchArray> => {
      for (let i = 0; i < 1200; i++) {
        const m = re.exec(out);
        if (m) return m;
        await sleep(25);
      }
      throw new Error(`flood providers did not print ${re}: ${out}`);
    };
    try {
      await printed(/bound (\d+)/);
      child.stdin.write('go\n');
      const t0 = now();
      // Measure inside the flood, after the first second's burst has started.
      await sleep(200);
      const flood = summarize(await timedRequests(s, () => now() - t0 < FLOOD_MS - 200));
      const done = await printed(/done (\d+) (\d+)/);
      log(`  ${PROVIDERS} providers pushed ${done[1]} ${LEVEL} events in ${(FLOOD_MS / 1000).toFixed(0)} s; ${done[2]} RATE_LIMITED replies`);
      return { idle, flood, providers: PROVIDERS, pushes: Number(done[1]), rateLimited: Number(done[2]) };
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  } finally {
    await s.stop();
    await fake.close();
  }
}

/**
 * Provider gateway benchmarks (specs/tap-provider-gateway.md, core profile).
 *
 * 1. Round trip: the gateway's `Tool.call()` → its resolution, with a provider written with the
 *    SDK (src/provider) answering `echo`, against a raw `ws` echo round trip of a frame of the
 *    same size (JSON.stringify → send → server sends the bytes back → JSON.parse). Both live in
 *    this process over loopback, so one event loop serves both ends in either case; blocks of
 *    the two alternate. Target: gateway p50 ≤ 1.3× echo p50. Alongside, for reading the ratio:
 *    a JSON echo whose server also parses the frame and answers a fresh `tool.result` (the
 *    floor any JSON protocol pays). Warm-up is long because V8 needs a few thousand calls to
 *    settle; the measured calls stay under the gateway's 10,000-call settled-id memory.
 * 2. Sustained calls per second: CONCURRENCY calls in flight for THROUGHPUT_MS, same set-up,
 *    next to the raw echo with as many frames in flight.
 * 3. Memory: the gateway in a child process (this file, run with `--gateway-child`: a
 *    GatewayHostImpl on a free port over a one-chat fake GatewayChats), VmRSS idle and then with
 *    PROVIDERS raw `ws` providers connected and bound (auth → sessions → hello with one tool →
 *    hello.ack). Target: ≤ +150 MB.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import type { Tool } from '../src/shapes/tool.js';
import { GatewayHostImpl, type GatewayChats, type GatewayConfig } from '../src/peers/gateway/index.js';
import { createProvider } from '../src/provider/index.js';
import { setLogLevel } from '../src/util/log.js';
import { now, procMemKb, sleep, summarize, tempDir, type Summary } from './util.js';

const CALLS = Number(process.env.BENCH_GATEWAY_CALLS ?? 4000);
const WARMUP = Number(process.env.BENCH_GATEWAY_WARMUP ?? 3000);
const ROUNDS = Number(process.env.BENCH_GATEWAY_ROUNDS ?? 4);
const PAYLOAD = Number(process.env.BENCH_GATEWAY_PAYLOAD ?? 256);
const CONCURRENCY = Number(process.env.BENCH_GATEWAY_CONCURRENCY ?? 64);
const THROUGHPUT_MS = Number(process.env.BENCH_GATEWAY_THROUGHPUT_MS ?? 3000);
const PROVIDERS = Number(process.env.BENCH_GATEWAY_PROVIDERS ?? 1000);
const SESSION = 'bench-chat';

export const GATEWAY_TARGETS = { roundTripRatio: 1.3, rssGrowthMb: 150 } as const;

function config(): GatewayConfig {
  return { enabled: true, host: '127.0.0.1', port: 0, injectStartsTurn: false, maxConnections: PROVIDERS + 100, maxUnauthenticated: 256, rateLimitPerSecond: 200 };
}

/** One chat; provider tools land in `tools`. */
function benchChats(): GatewayChats & { tools: Map<string, Tool[]> } {
  const tools = new Map<string, Tool[]>();
  return {
    tools,
    active: () => [{ id: SESSION, label: 'bench', cwd: process.cwd() }],
    setTools: (_chat, provider, ts) => void (ts.length ? tools.set(provider, ts) : tools.delete(provider)),
    push: () => {},
    providersChanged: () => {},
  };
}

// ---------------------------------------------------------------- the two paths

interface Path {
  /** One round trip of `text`; resolves with the text that came back. */
  call(text: string): Promise<string>;
  close(): Promise<void>;
}

/** GatewayHostImpl + an SDK provider, both in this process; `call` is the chat's Tool.call(). */
async function gatewayPath(): Promise<Path & { frameBytes: number }> {
  const chats = benchChats();
  const home = tempDir('pb-bench-gw-');
  const gateway = new GatewayHostImpl({ config: config(), home, chats });
  const { url } = await gateway.start();
  const provider = createProvider({
    name: 'bench',
    url,
    env: { PATCHBAY_HOME: home },
    tools: [{ name: 'echo', description: 'Echo', parameters: { type: 'object', properties: { text: { type: 'string' } } }, handler: ({ text }: { text: string }) => text }],
  });
  await provider.connect();
  const tool = chats.tools.get('bench')?.find((t) => t.name === 'echo');
  if (!tool) throw new Error('the bench provider tool was not registered');
  // One signal for every call, as a chat turn's calls share one; the gateway listens on it per call in flight.
  const ctx = { signal: new AbortController().signal, roots: [process.cwd()], chatId: SESSION, editor: {} };
  setMaxListeners(0, ctx.signal);
  const sample = 'x'.repeat(PAYLOAD);
  return {
    // What goes over the wire for one call (the gateway numbers calls `call-N`).
    frameBytes: JSON.stringify({ type: 'tool.call', id: 'call-1000', sessionId: SESSION, tool: 'echo', args: { text: sample } }).length,
    async call(text) {
      const r = await tool.call({ text }, ctx);
      const out = r.outputs[0];
      if (r.error || out?.type !== 'text') throw new Error(`gateway call failed: ${JSON.stringify(r).slice(0, 200)}`);
      return out.text;
    },
    async close() {
      await provider.close();
      await gateway.stop();
    },
  };
}

/**
 * A `ws` server that sends every frame back as is (`bytes`), or parses it and answers a
 * `tool.result` (`json`), and a client that frames like the gateway does.
 */
async function echoPath(frameBytes: number, mode: 'bytes' | 'json'): Promise<Path> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) =>
    ws.on('message', (data) => {
      if (mode === 'bytes') return ws.send(data as Buffer);
      const m = JSON.parse(data.toString()) as { id: number; args: { text: string } };
      ws.send(JSON.stringify({ type: 'tool.result', id: m.id, data: m.args.text }));
    }),
  );
  const port = (wss.address() as { port: number }).port;
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waiting = new Map<number, (text: string) => void>();
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { id: number; args?: { text: string }; data?: string };
    const done = waiting.get(m.id);
    waiting.delete(m.id);
    done?.(m.data ?? m.args?.text ?? '');
  });
  let seq = 0;
  // Padding so the frame is as long as the gateway's tool.call for the same text.
  const base = JSON.stringify({ type: 'tool.call', id: 0, sessionId: SESSION, tool: 'echo', args: { text: 'x'.repeat(PAYLOAD) }, pad: '' }).length;
  const pad = ' '.repeat(Math.max(0, frameBytes - base));
  return {
    call(text) {
      const id = ++seq;
      return new Promise<string>((resolve) => {
        waiting.set(id, resolve);
        ws.send(JSON.stringify({ type: 'tool.call', id, sessionId: SESSION, tool: 'echo', args: { text }, pad }));
      });
    },
    async close() {
      ws.close();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

async function sequential(p: Path, n: number, tag: string): Promise<number[]> {
  const times: number[] = [];
  const pad = 'x'.repeat(PAYLOAD);
  for (let i = 0; i < n; i++) {
    const text = `${tag}${i}:${pad}`.slice(0, PAYLOAD);
    const t = now();
    const back = await p.call(text);
    times.push(now() - t);
    if (back !== text) throw new Error(`${tag}: echoed text differs`);
  }
  return times;
}

/** `concurrency` loops calling back to back for `ms`; calls per second. */
async function sustained(p: Path, concurrency: number, ms: number): Promise<{ calls: number; seconds: number; rate: number }> {
  const text = 'y'.repeat(PAYLOAD);
  let calls = 0;
  const t0 = now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (now() < end) {
        await p.call(text);
        calls++;
      }
    }),
  );
  const seconds = (now() - t0) / 1000;
  return { calls, seconds, rate: calls / seconds };
}

export interface GatewayCallsResult {
  payload: number;
  frameBytes: number;
  echo: Summary;
  jsonEcho: Summary;
  gateway: Summary;
  throughput: { gateway: { calls: number; seconds: number; rate: number }; echo: { calls: number; seconds: number; rate: number } };
}

export async function runGatewayCalls(log: (s: string) => void = console.log): Promise<GatewayCallsResult> {
  setLogLevel('error');
  const gw = await gatewayPath();
  const echo = await echoPath(gw.frameBytes, 'bytes');
  const json = await echoPath(gw.frameBytes, 'json');
  try {
    await sequential(echo, WARMUP, 'w');
    await sequential(json, WARMUP, 'w');
    await sequential(gw, WARMUP, 'w');
    const per = Math.ceil(CALLS / ROUNDS);
    log(`gateway: ${ROUNDS} × ${per} sequential round trips each (${PAYLOAD}-char text, ${gw.frameBytes}-byte frames), raw ws echo and Tool.call() → SDK provider alternating…`);
    const e: number[] = [];
    const j: number[] = [];
    const g: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      e.push(...(await sequential(echo, per, `e${r}`)));
      j.push(...(await sequential(json, per, `j${r}`)));
      g.push(...(await sequential(gw, per, `g${r}`)));
    }
    log(`gateway: ${CONCURRENCY} calls in flight for ${(THROUGHPUT_MS / 1000).toFixed(1)} s, raw ws echo then through the gateway…`);
    const te = await sustained(echo, CONCURRENCY, THROUGHPUT_MS);
    const tg = await sustained(gw, CONCURRENCY, THROUGHPUT_MS);
    return { payload: PAYLOAD, frameBytes: gw.frameBytes, echo: summarize(e), jsonEcho: summarize(j), gateway: summarize(g), throughput: { gateway: tg, echo: te } };
  } finally {
    await echo.close();
    await json.close();
    await gw.close();
  }
}

// ---------------------------------------------------------------- 3. memory with 1,000 providers

export interface GatewayRssResult {
  providers: number;
  bound: number;
  idleKb: number;
  loadedKb: number;
  hwmKb: number;
  growthKb: number;
  connectMs: number;
}

interface ChildInfo {
  port: number;
  token: string;
}

/** Line protocol with the child: it prints its address, then answers `stats` with JSON. */
class GatewayChild {
  readonly proc: ChildProcess;
  private readonly lines: string[] = [];
  private wake: (() => void) | undefined;

  constructor() {
    this.proc = spawn(process.execPath, [fileURLToPath(import.meta.url), '--gateway-child', tempDir('pb-bench-gwc-')], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH ?? '', HOME: tempDir(), PATCHBAY_LOG_LEVEL: 'error' },
    });
    createInterface({ input: this.proc.stdout! }).on('line', (l) => {
      this.lines.push(l);
      this.wake?.();
    });
  }

  async line(timeoutMs = 15_000): Promise<string> {
    const t0 = now();
    while (!this.lines.length) {
      if (this.proc.exitCode !== null) throw new Error(`gateway child exited ${this.proc.exitCode}`);
      if (now() - t0 > timeoutMs) throw new Error('gateway child did not answer');
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 100);
      });
    }
    return this.lines.shift()!;
  }

  async stats(): Promise<{ providers: number }> {
    this.proc.stdin!.write('stats\n');
    return JSON.parse(await this.line()) as { providers: number };
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.proc.stdin!.end();
    const kill = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(kill);
  }
}

/** A minimal provider on a raw socket: auth → sessions → hello → hello.ack. */
function rawProvider(info: ChildInfo, i: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${info.port}`, { perMessageDeflate: false });
    const timer = setTimeout(() => reject(new Error(`provider ${i}: not bound in 30 s`)), 30_000);
    ws.on('open', () => ws.send(JSON.stringify({ type: 'auth', token: info.token })));
    ws.on('error', (e) => reject(e));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as { type: string; active?: Array<{ id: string }>; code?: string; message?: string };
      if (m.type === 'sessions') {
        ws.send(
          JSON.stringify({
            type: 'hello',
            name: `p${i}`,
            protocolVersion: 2,
            session: m.active?.[0]?.id,
            tools: [{ name: 'lookup', description: `Look something up (provider ${i})`, parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }],
          }),
        );
      } else if (m.type === 'hello.ack') {
        clearTimeout(timer);
        resolve(ws);
      } else if (m.type === 'error') {
        clearTimeout(timer);
        reject(new Error(`provider ${i}: ${m.code} ${m.message}`));
      }
    });
  });
}

export async function runGatewayRss(log: (s: string) => void = console.log): Promise<GatewayRssResult> {
  const child = new GatewayChild();
  const sockets: WebSocket[] = [];
  try {
    const info = JSON.parse(await child.line()) as ChildInfo;
    const pid = child.proc.pid!;
    await sleep(1500);
    const idle = procMemKb(pid).rss;
    log(`gateway: child gateway (pid ${pid}) idle at ${(idle / 1024).toFixed(1)} MB; connecting ${PROVIDERS} providers in batches of 100…`);
    const t0 = now();
    for (let i = 0; i < PROVIDERS; i += 100) {
      sockets.push(...(await Promise.all(Array.from({ length: Math.min(100, PROVIDERS - i) }, (_, k) => rawProvider(info, i + k)))));
    }
    const connectMs = now() - t0;
    await sleep(2000);
    const { providers } = await child.stats();
    const mem = procMemKb(pid);
    return { providers: PROVIDERS, bound: providers, idleKb: idle, loadedKb: mem.rss, hwmKb: mem.hwm, growthKb: mem.rss - idle, connectMs };
  } finally {
    for (const ws of sockets) ws.terminate();
    await child.stop();
  }
}

// ---------------------------------------------------------------- the child

async function gatewayChild(home: string): Promise<void> {
  setLogLevel('error');
  const gateway = new GatewayHostImpl({ config: config(), home, chats: benchChats() });
  const { port } = await gateway.start();
  process.stdout.write(`${JSON.stringify({ port, token: gateway.token })}\n`);
  const rl = createInterface({ input: process.stdin });
  rl.on('line', (l) => {
    if (l.trim() === 'stats') process.stdout.write(`${JSON.stringify({ providers: gateway.providers().length })}\n`);
  });
  // stdin closed: the bench is done (or gone).
  rl.on('close', () => {
    // The providers are already gone; a stop with nobody bound is quick.
    void gateway.stop().finally(() => process.exit(0));
  });
}

if (process.argv[2] === '--gateway-child') void gatewayChild(process.argv[3] ?? tempDir());

/**
 * MCP benchmarks.
 *
 * 1. Tool-call overhead: `echo {message}` on the real @modelcontextprotocol/server-everything,
 *    called N times through patchbay against N `client.callTool` round trips made directly with
 *    the SDK Client (StdioClientTransport) from this process, each side with its own copy of
 *    the server. Through patchbay the fake LLM answers one reply of many `everything__echo`
 *    calls (run one after another); a call's latency is the editor's view of it: arrival of its
 *    `toolCallRunning` → arrival of its `toolCalled`. Direct and patchbay blocks alternate.
 *    Also, as information, the cycle: one call's end to the next's (see McpCallResult).
 * 2. Slow servers don't delay `config/updated`: spawn → `config/updated` received with ten MCP
 *    servers configured that each sleep SLOW_MS before speaking MCP, against none configured
 *    (runs alternate, medians compared); also when the last of the ten reported `running`.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FakeLlm, type Step } from '../test/fixtures/fake-llm.js';
import { fakeConfig, median, now, ROOT, Server, summarize, tempDir, workFile, type Msg, type Summary } from './util.js';

const EVERYTHING = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const CALLS = Number(process.env.BENCH_MCP_CALLS ?? 200);
const WARMUP_CALLS = Number(process.env.BENCH_MCP_WARMUP ?? 50);
/** Direct and patchbay alternate in this many blocks of CALLS / ROUNDS calls. */
const ROUNDS = Number(process.env.BENCH_MCP_ROUNDS ?? 4);
const SLOW_SERVERS = 10;
const SLOW_MS = 3000;
const START_RUNS = Number(process.env.BENCH_MCP_START_RUNS ?? 5);

export interface McpCallResult {
  calls: number;
  direct: Summary;
  patchbay: Summary;
  /**
   * One call to the next in a run of calls: direct, one `callTool` resolving to the next; through
   * patchbay, one `toolCalled` to the next (the whole cost of a call, storing it included, so
   * moving where a call "starts" cannot make it look faster).
   */
  directCycle: Summary;
  patchbayCycle: Summary;
}

export interface McpStartResult {
  runs: number;
  /** spawn → `config/updated`, per run. */
  withoutAll: number[];
  withSlowAll: number[];
  /** spawn → the last slow server's `running`, per run. */
  lastRunningAll: number[];
  withoutMs: number;
  withSlowMs: number;
  lastRunningMs: number;
}

const isMcpUpdate = (m: Msg): boolean => m.method === 'tool/serverUpdated' && m.params?.type === 'mcp';

// ---------------------------------------------------------------- 1. tool-call overhead

/** An SDK client on its own server-everything, as any MCP host would hold one. */
async function directClient(): Promise<Client> {
  const client = new Client({ name: 'patchbay-bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }));
  await client.listTools(); // as patchbay does on connect (the SDK caches output schemas from it)
  return client;
}

interface Timings {
  /** Per call, its start → its end. */
  times: number[];
  /** Per call after the first, the previous call's end → its end. */
  cycles: number[];
}

async function directCalls(client: Client, n: number, tag: string): Promise<Timings> {
  const times: number[] = [];
  const cycles: number[] = [];
  let last: number | undefined;
  for (let i = 0; i < n; i++) {
    const message = `${tag}-${i}`;
    const t = now();
    const r = await client.callTool({ name: 'echo', arguments: { message } });
    const end = now();
    times.push(end - t);
    if (last !== undefined) cycles.push(end - last);
    last = end;
    const text = (r.content as Array<{ type: string; text?: string }> | undefined)?.[0]?.text ?? '';
    if (r.isError || !text.includes(message)) throw new Error(`direct echo answered ${JSON.stringify(r).slice(0, 200)}`);
  }
  return { times, cycles };
}

/**
 * One chat turn whose first reply asks for `n` `everything__echo` calls (then "done"); each
 * call's `toolCallRunning` → `toolCalled` as the editor received them.
 */
async function patchbayCalls(s: Server, fake: FakeLlm, n: number, tag: string): Promise<Timings> {
  const calls: Step[] = Array.from({ length: n }, (_, i) => ({ toolCall: { id: `${tag}-${i}`, name: 'everything__echo', args: { message: `${tag}-${i}` } } }));
  fake.script(calls, [{ text: 'done' }]);
  const running = new Map<string, number>();
  const times: number[] = [];
  const cycles: number[] = [];
  let last: number | undefined;
  const problems: string[] = [];
  const off = s.listen((m, t) => {
    if (m.method !== 'chat/contentReceived') return;
    const c = m.params.content;
    if (c.type === 'toolCallRunning') running.set(c.id, t);
    else if (c.type === 'toolCalled') {
      const t0 = running.get(c.id);
      if (t0 === undefined) problems.push(`${c.id}: toolCalled without toolCallRunning`);
      else times.push(t - t0);
      if (last !== undefined) cycles.push(t - last);
      last = t;
      if (c.error || !JSON.stringify(c.outputs).includes(c.id)) problems.push(`${c.id}: ${JSON.stringify(c.outputs).slice(0, 200)}`);
    } else if (c.type === 'toolCallRejected' || (m.params.role === 'system' && c.type === 'text')) {
      problems.push(JSON.stringify(c).slice(0, 200));
    }
  });
  const finished = s.waitFor((m) => m.method === 'chat/contentReceived' && m.params.content.type === 'progress' && m.params.content.state === 'finished', 'the tool turn to finish', 120_000);
  finished.catch(() => {}); // awaited below unless the prompt itself fails
  try {
    await s.request('chat/prompt', { message: `call echo ${n} times` });
    await finished;
  } finally {
    off();
  }
  if (problems.length) throw new Error(`through patchbay: ${problems.slice(0, 3).join(' | ')}`);
  if (times.length !== n) throw new Error(`through patchbay: ${times.length} of ${n} calls seen`);
  return { times, cycles };
}

export async function runMcpCalls(log: (s: string) => void = console.log): Promise<McpCallResult> {
  const fake = await FakeLlm.start();
  const s = new Server({
    home: tempDir(),
    config: {
      ...fakeConfig(fake.url),
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
      toolCall: { approval: { allow: { everything: {} } } },
    },
  });
  let client: Client | undefined;
  try {
    const up = s.waitFor((m) => isMcpUpdate(m) && m.params.name === 'everything' && m.params.status === 'running', 'everything running', 30_000);
    await s.handshake(tempDir('pb-bench-ws-'));
    await up;
    client = await directClient();

    await directCalls(client, WARMUP_CALLS, 'warm');
    await patchbayCalls(s, fake, WARMUP_CALLS, 'warm');

    const per = Math.ceil(CALLS / ROUNDS);
    log(`mcp: ${ROUNDS} × ${per} echo calls each, direct SDK client and through patchbay alternating…`);
    const direct: Timings = { times: [], cycles: [] };
    const through: Timings = { times: [], cycles: [] };
    const add = (to: Timings, from: Timings) => (to.times.push(...from.times), to.cycles.push(...from.cycles));
    for (let r = 0; r < ROUNDS; r++) {
      add(direct, await directCalls(client, per, `d${r}`));
      add(through, await patchbayCalls(s, fake, per, `p${r}`));
    }
    return {
      calls: direct.times.length,
      direct: summarize(direct.times),
      patchbay: summarize(through.times),
      directCycle: summarize(direct.cycles),
      patchbayCycle: summarize(through.cycles),
    };
  } finally {
    await client?.close().catch(() => {});
    await s.stop();
    await fake.close();
  }
}

// ---------------------------------------------------------------- 2. slow servers vs config/updated

/**
 * A real (SDK) MCP server that sleeps argv[2] ms before it loads the SDK, reads stdin or says
 * anything: slow to answer, not busy meanwhile (busy children would measure the CPU, not patchbay).
 */
const SLOW_SERVER = `await new Promise((r) => setTimeout(r, Number(process.argv[2])));
const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
const server = new McpServer({ name: 'slow-bench', version: '1.0.0' });
server.registerTool('ping', { description: 'Answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());
`;

/** spawn → `config/updated`, and → the last MCP server's `running` (when `servers` has any). */
async function startOnce(home: string, ws: string, base: Record<string, unknown>, servers: Record<string, unknown>): Promise<{ configMs: number; lastRunningMs: number }> {
  const names = new Set(Object.keys(servers));
  const s = new Server({ home, config: { ...base, mcpServers: servers } });
  try {
    const configured = s.waitFor((m) => m.method === 'config/updated', 'config/updated', 30_000);
    let last = Number.NaN;
    const allRunning = new Promise<void>((resolve, reject) => {
      if (!names.size) return resolve();
      const timer = setTimeout(() => reject(new Error(`still not running after 30 s: ${[...names].join(', ')}`)), 30_000);
      const off = s.listen((m, t) => {
        if (!isMcpUpdate(m) || m.params.status !== 'running' || !names.delete(m.params.name)) return;
        last = t;
        if (names.size) return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
    allRunning.catch(() => {});
    await s.handshake(ws);
    const { t } = await configured;
    await allRunning;
    return { configMs: t - s.spawnedAt, lastRunningMs: last - s.spawnedAt };
  } finally {
    await s.stop();
  }
}

export async function runMcpStart(log: (s: string) => void = console.log): Promise<McpStartResult> {
  const fake = await FakeLlm.start();
  const script = workFile('slow-mcp-server.mjs', SLOW_SERVER);
  const slow: Record<string, unknown> = {};
  for (let i = 0; i < SLOW_SERVERS; i++) slow[`slow${i}`] = { command: process.execPath, args: [script, String(SLOW_MS)] };
  const base = fakeConfig(fake.url);
  const home = tempDir();
  const ws = tempDir('pb-bench-ws-');
  try {
    log(`mcp: ${START_RUNS} starts each, spawn → config/updated with ${SLOW_SERVERS} MCP servers that wait ${SLOW_MS} ms before speaking, and with none…`);
    // Warm-up (disk cache, first-time store creation), discarded.
    await startOnce(home, ws, base, {});
    await startOnce(home, ws, base, slow);
    const withoutAll: number[] = [];
    const withSlowAll: number[] = [];
    const lastRunningAll: number[] = [];
    for (let i = 0; i < START_RUNS; i++) {
      withoutAll.push((await startOnce(home, ws, base, {})).configMs);
      const r = await startOnce(home, ws, base, slow);
      withSlowAll.push(r.configMs);
      lastRunningAll.push(r.lastRunningMs);
    }
    return {
      runs: START_RUNS,
      withoutAll,
      withSlowAll,
      lastRunningAll,
      withoutMs: median(withoutAll),
      withSlowMs: median(withSlowAll),
      lastRunningMs: median(lastRunningAll),
    };
  } finally {
    await fake.close();
  }
}

export const MCP_SLOW = { servers: SLOW_SERVERS, ms: SLOW_MS };

/**
 * Local model benchmark: the tiny deterministic GGUF model (scripts/make-tiny-gguf.mjs, which
 * streams lowercase letters and never ends, so every reply is MAX_TOKENS long) answered by
 * patchbay's built-in `local` provider, against node-llama-cpp driven directly the way
 * src/peers/llm/local.ts drives it, with the same prompt.
 *
 * - The prompt: captured once from patchbay itself with the fake LLM (same home, workspace and
 *   user message): the system prompt, the user message and the tools of its OpenAI chat
 *   request, turned into the library's history and functions by patchbay's own `toHistory` /
 *   `toFunctions`. The prompt sizes both sides report (patchbay's `usage` content, the direct
 *   side's token meter) show it is the same prompt.
 * - Cold: `chat/prompt` on a just-started server → its first assistant text, which includes
 *   importing node-llama-cpp, getLlama, loading the model, a context and evaluating the prompt;
 *   against a fresh `node` child (bench/.work/local-direct.mjs, so its import is cold too), once
 *   it is up and idle: `import('node-llama-cpp')` → first `onTextChunk`. Neither counts the
 *   process's own start-up. Rounds alternate which side goes first; one discarded direct start
 *   warms the disk cache first.
 * - Warm: with the model loaded, a prompt in a new chat (a new context; the chat is deleted
 *   afterwards, as the direct side disposes its context) → first text, against a new context
 *   and LlamaChat in the direct child. Patchbay and direct runs alternate.
 * - Tokens/s: (text chunks after the first) / (first → last chunk); each chunk is one token
 *   (the library's final empty chunk, which patchbay does not forward, is not counted).
 *
 * Patchbay's times are on the bench clock (arrival of its notifications), the direct side's on
 * the child's own clock; each figure is a difference on one clock.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { toFunctions, toHistory } from '../src/peers/llm/local.js';
import type { LlmMessage, LlmToolSpec } from '../src/shapes/llm.js';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { fakeConfig, median, now, ROOT, Server, tempDir, workFile, type Msg } from './util.js';

const MAX_TOKENS = Number(process.env.BENCH_LOCAL_TOKENS ?? 64);
const CONTEXT_SIZE = 8192;
const COLD_RUNS = Number(process.env.BENCH_LOCAL_COLD ?? 5);
const WARM_RUNS = Number(process.env.BENCH_LOCAL_WARM ?? 7);
const MESSAGE = 'Say hello.';

export interface LocalRun {
  /** Prompt sent → first text chunk. */
  firstMs: number;
  chunks: number;
  /** Chunks after the first / (first → last chunk). */
  tokensPerSec: number;
  inputTokens: number;
  /** Through patchbay, a cold prompt: "Loading local model …" → "… 100%" (import, getLlama, loadModel). */
  loadMs?: number;
}

/** A direct cold start: each stage as time since `import('node-llama-cpp')` began. */
export interface DirectColdRun extends LocalRun {
  importMs: number;
  llamaMs: number;
  loadMs: number;
  contextMs: number;
}

export interface LocalResult {
  modelBytes: number;
  maxTokens: number;
  promptChars: number;
  tools: number;
  patchbay: { cold: LocalRun[]; warm: LocalRun[] };
  direct: { cold: DirectColdRun[]; warm: LocalRun[] };
  /** Medians. */
  coldMs: { patchbay: number; direct: number };
  /** Library import + getLlama + loadModel. */
  loadMs: { patchbay: number; direct: number };
  warmMs: { patchbay: number; direct: number };
  tokensPerSec: { patchbay: number; direct: number };
  promptTokens: { patchbay: number; direct: number };
  chunks: { patchbay: number; direct: number };
  /** The direct cold starts' stages, each as time since the import began. */
  directStages: { importMs: number; llamaMs: number; loadMs: number; contextMs: number };
}

const isFinished = (m: Msg): boolean => m.method === 'chat/contentReceived' && m.params.content.type === 'progress' && m.params.content.state === 'finished';

// ---------------------------------------------------------------- the prompt patchbay sends

interface Prompt {
  system: string;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
}

/** The system prompt, messages and tools patchbay sends for MESSAGE, read off the fake LLM. */
async function capturePrompt(home: string, ws: string): Promise<Prompt> {
  const fake = await FakeLlm.start();
  fake.script([{ text: 'ok' }]);
  const s = new Server({ home, config: fakeConfig(fake.url) });
  try {
    await s.handshake(ws);
    const finished = s.waitFor(isFinished, 'the fake reply to finish');
    finished.catch(() => {});
    await s.request('chat/prompt', { message: MESSAGE });
    await finished;
  } finally {
    await s.stop();
    await fake.close();
  }
  const body = fake.requests.find((r) => r.path.endsWith('/chat/completions'))?.body;
  if (!body) throw new Error(`no chat completions request reached the fake (${fake.requests.map((r) => r.path).join(', ')})`);
  let system = '';
  const messages: LlmMessage[] = [];
  for (const m of body.messages as Array<{ role: string; content: unknown }>) {
    if (typeof m.content !== 'string') throw new Error(`unexpected ${m.role} content ${JSON.stringify(m.content).slice(0, 200)}`);
    if (m.role === 'system') system += m.content;
    else if (m.role === 'user') messages.push({ role: 'user', content: m.content });
    else throw new Error(`unexpected ${m.role} message in the first request`);
  }
  const tools = ((body.tools ?? []) as Array<{ function: LlmToolSpec }>).map(({ function: f }) => ({ name: f.name, description: f.description, parameters: f.parameters }));
  return { system, messages, tools };
}

// ---------------------------------------------------------------- through patchbay

/** One `chat/prompt` in a new chat: its text chunks as the editor received them. */
async function patchbayPrompt(s: Server): Promise<LocalRun & { chatId: string }> {
  let first = Number.NaN;
  let last = Number.NaN;
  let chunks = 0;
  let inputTokens = Number.NaN;
  let loadStart = Number.NaN;
  let loadEnd = Number.NaN;
  let chatId = '';
  const problems: string[] = [];
  const off = s.listen((m, t) => {
    if (m.method !== 'chat/contentReceived') return;
    const c = m.params.content;
    if (m.params.role === 'assistant' && c.type === 'text' && c.text) {
      if (!chunks) first = t;
      last = t;
      chunks++;
      chatId = m.params.chatId;
    } else if (c.type === 'usage') inputTokens = c.messageInputTokens;
    else if (c.type === 'progress' && typeof c.text === 'string' && c.text.startsWith('Loading local model')) {
      if (c.text.endsWith('…')) loadStart = t;
      else if (c.text.endsWith(' 100%')) loadEnd = t;
    } else if (m.params.role === 'system' && c.type === 'text') problems.push(String(c.text).slice(0, 300));
  });
  const finished = s.waitFor(isFinished, 'the local reply to finish', 60_000);
  finished.catch(() => {}); // awaited below unless the prompt itself fails
  const t0 = now();
  try {
    const r = await s.request('chat/prompt', { message: MESSAGE });
    chatId = r.msg.result?.chatId ?? chatId;
    await finished;
  } finally {
    off();
  }
  if (problems.length) throw new Error(`through patchbay: ${problems.join(' | ')}`);
  if (chunks < 2) throw new Error(`through patchbay: ${chunks} text chunks`);
  return { firstMs: first - t0, chunks, tokensPerSec: (chunks - 1) / ((last - first) / 1000), inputTokens, chatId, loadMs: loadEnd - loadStart };
}

// ---------------------------------------------------------------- direct

/**
 * What LocalRuntime and LocalClient do, in a child of its own: getLlama, loadModel,
 * createContext (one thread under 64 MB) and LlamaChat.generateResponse with the same options.
 * argv[2] is a JSON job; it says it is ready, runs cold on the first line from stdin, then warm
 * once per `warm` line.
 */
const DIRECT_SCRIPT = `import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const say = (o) => process.stdout.write(JSON.stringify(o) + '\\n');

async function generate(lib, model, t0) {
  const context = await model.createContext({ contextSize: { max: Math.min(job.contextSize, model.trainContextSize) }, threads: model.size < 64 * 1024 * 1024 ? 1 : undefined });
  const chat = new lib.LlamaChat({ contextSequence: context.getSequence() });
  const contextMs = performance.now() - t0;
  let first = NaN;
  let last = NaN;
  let chunks = 0;
  await chat.generateResponse(job.history, {
    ...(job.functions ? { functions: job.functions } : {}),
    onTextChunk: (text) => {
      if (!text) return; // the library ends with an empty chunk, which patchbay does not forward
      last = performance.now();
      if (!chunks++) first = last;
    },
    signal: new AbortController().signal,
    stopOnAbortSignal: true,
    maxTokens: Math.min(job.maxTokens, Math.floor(context.contextSize / 2)),
  });
  const inputTokens = chat.sequence.tokenMeter.usedInputTokens;
  chat.dispose();
  await context.dispose();
  return { contextMs, firstMs: first - t0, chunks, tokensPerSec: (chunks - 1) / ((last - first) / 1000), inputTokens };
}

// Started and idle before the clock starts, as patchbay is after its handshake.
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
say({ ready: true });
await lines.next();
const t0 = performance.now();
const lib = await import('node-llama-cpp');
const importMs = performance.now() - t0;
const llama = await lib.getLlama({ build: 'never', gpu: 'auto', logLevel: lib.LlamaLogLevel.error, logger: () => {} });
const llamaMs = performance.now() - t0;
const model = await llama.loadModel({ modelPath: job.model, gpuLayers: 'auto' });
const loadMs = performance.now() - t0;
say({ importMs, llamaMs, loadMs, ...(await generate(lib, model, t0)) });
for (let line = await lines.next(); !line.done; line = await lines.next()) {
  if (line.value === 'warm') say(await generate(lib, model, performance.now()));
}
await model.dispose();
await llama.dispose();
`;

/** The direct child: one JSON line per run. */
class Direct {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly exited: Promise<void>;
  private readonly lines: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private closed = false;
  private stderr = '';

  constructor(script: string, job: string) {
    this.child = spawn(process.execPath, [script, job], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      const w = this.waiting;
      this.waiting = undefined;
      if (w) w(line);
      else this.lines.push(line);
    });
    // 'close', not 'exit': its last lines have been read by then.
    this.exited = new Promise((resolve) =>
      this.child.on('close', () => {
        this.closed = true;
        this.waiting?.(undefined);
        this.waiting = undefined;
        resolve();
      }),
    );
  }

  private next<T>(what: string, timeoutMs = 60_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`direct: no ${what} in ${timeoutMs} ms; stderr tail:\n${this.stderr}`));
      }, timeoutMs);
      const take = (line: string | undefined): void => {
        clearTimeout(timer);
        if (line === undefined) reject(new Error(`direct: exited before its ${what}; stderr tail:\n${this.stderr}`));
        else resolve(JSON.parse(line) as T);
      };
      const queued = this.lines.shift();
      if (queued !== undefined) take(queued);
      else if (this.closed) take(undefined);
      else this.waiting = take;
    });
  }

  /** Waits until the child is up and idle, then starts the clock. */
  async cold(): Promise<DirectColdRun> {
    await this.next('ready');
    this.child.stdin.write('cold\n');
    return this.next('cold run');
  }

  warm(): Promise<LocalRun> {
    this.child.stdin.write('warm\n');
    return this.next('warm run');
  }

  /** stdin closed: it frees the model and exits; SIGKILL after 5 s as a last resort. */
  async close(): Promise<void> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------- the run

export async function runLocal(log: (s: string) => void = console.log): Promise<LocalResult> {
  const { writeTinyGguf } = (await import(pathToFileURL(join(ROOT, 'scripts', 'make-tiny-gguf.mjs')).href)) as typeof import('../scripts/make-tiny-gguf.mjs');
  const home = tempDir();
  const ws = tempDir('pb-bench-ws-');
  const tiny = writeTinyGguf(join(tempDir('pb-bench-model-'), 'tiny.gguf'));

  const prompt = await capturePrompt(home, ws);
  const jobFile = join(tempDir('pb-bench-job-'), 'job.json');
  const functions = toFunctions(prompt.tools);
  writeFileSync(
    jobFile,
    JSON.stringify({ model: tiny.path, contextSize: CONTEXT_SIZE, maxTokens: MAX_TOKENS, history: toHistory(prompt.system, prompt.messages), ...(functions ? { functions } : {}) }),
  );
  const script = workFile('local-direct.mjs', DIRECT_SCRIPT);
  const config = {
    providers: { local: { models: { tiny: { model: tiny.path, contextSize: CONTEXT_SIZE, limit: { context: CONTEXT_SIZE, output: MAX_TOKENS } } } } },
    defaultModel: 'local/tiny',
    chat: { generateTitles: false },
    gateway: { port: 0 },
  };
  const promptChars = prompt.system.length + prompt.messages.reduce((n, m) => n + (m.role === 'user' ? m.content.length : 0), 0);
  log(
    `local: tiny model (${(tiny.bytes / 1e6).toFixed(1)} MB), ${MAX_TOKENS} tokens per reply; prompt of ${promptChars} chars + ${prompt.tools.length} tools; ` +
      `${COLD_RUNS} cold starts and ${WARM_RUNS} warm prompts each, through patchbay and node-llama-cpp directly…`,
  );

  // Disk cache warm-up (library, model file), discarded.
  const primer = new Direct(script, jobFile);
  try {
    await primer.cold();
  } finally {
    await primer.close();
  }

  const patchbay: LocalResult['patchbay'] = { cold: [], warm: [] };
  const direct: LocalResult['direct'] = { cold: [], warm: [] };
  for (let i = 0; i < COLD_RUNS; i++) {
    const s = new Server({ home, config, env: { PATCHBAY_LOCAL_MODEL: 'off' } });
    let d: Direct | undefined;
    try {
      await s.handshake(ws);
      // Rounds alternate which side starts first.
      if (i % 2 === 1) {
        d = new Direct(script, jobFile);
        direct.cold.push(await d.cold());
      }
      patchbay.cold.push(await patchbayPrompt(s));
      if (!d) {
        d = new Direct(script, jobFile);
        direct.cold.push(await d.cold());
      }
      if (i < COLD_RUNS - 1) continue;
      // The last round goes on warm: both have the model loaded; new chats / contexts, alternating.
      for (let r = 0; r < WARM_RUNS; r++) {
        const p = await patchbayPrompt(s);
        patchbay.warm.push(p);
        await s.request('chat/delete', { chatId: p.chatId });
        direct.warm.push(await d.warm());
      }
    } finally {
      await s.stop();
      await d?.close();
    }
  }

  const med = (runs: LocalRun[], f: (r: LocalRun) => number): number => median(runs.map(f));
  const first = (r: LocalRun): number => r.firstMs;
  const tps = (r: LocalRun): number => r.tokensPerSec;
  const input = (r: LocalRun): number => r.inputTokens;
  return {
    modelBytes: tiny.bytes,
    maxTokens: MAX_TOKENS,
    promptChars,
    tools: prompt.tools.length,
    patchbay,
    direct,
    coldMs: { patchbay: med(patchbay.cold, first), direct: med(direct.cold, first) },
    // Patchbay's load window starts before the import (the library loads on first use), so the
    // direct side's is import + getLlama + loadModel: its `loadMs` stage (time since the import began).
    loadMs: { patchbay: med(patchbay.cold, (r) => r.loadMs ?? Number.NaN), direct: median(direct.cold.map((r) => r.loadMs)) },
    warmMs: { patchbay: med(patchbay.warm, first), direct: med(direct.warm, first) },
    tokensPerSec: { patchbay: med(patchbay.warm, tps), direct: med(direct.warm, tps) },
    promptTokens: { patchbay: med([...patchbay.cold, ...patchbay.warm], input), direct: med([...direct.cold, ...direct.warm], input) },
    chunks: { patchbay: med([...patchbay.cold, ...patchbay.warm], (r) => r.chunks), direct: med([...direct.cold, ...direct.warm], (r) => r.chunks) },
    directStages: {
      importMs: median(direct.cold.map((r) => r.importMs)),
      llamaMs: median(direct.cold.map((r) => r.llamaMs)),
      loadMs: median(direct.cold.map((r) => r.loadMs)),
      contextMs: median(direct.cold.map((r) => r.contextMs)),
    },
  };
}

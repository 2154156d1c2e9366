/**
 * Inline completion (issue 17, point 6): `completion/inline` through the real `patchbay server`
 * over stdio against the fake LLM, vs. the same provider call made directly from this process
 * with fetch: the added latency is patchbay's p50 (p95) minus the direct p50 (p95). Two paths:
 * FIM (`fim: true`, `POST /v1/completions` with prompt and suffix) and the chat path (a model
 * without `fim`, a streamed `POST /v1/chat/completions`); each path checks on every call that the
 * fake saw patchbay's request on that endpoint (the fake answers both alike) and, for FIM, that it
 * sent what the direct call sends (the 16 KB / 4 KB window around the cursor). Documents of 200
 * lines, 1 MB and 5 MB: the editor sends the whole document every time, so what patchbay adds
 * grows with it (reading it off stdio, parsing, cutting the window). Calls alternate (direct,
 * patchbay) so both see the same machine load. Target: added p50 ≤ 5 ms (the 200-line rows).
 */
import { headOf, splitAt, tailOf } from '../src/core/assist/text.js';
import { FakeLlm } from '../test/fixtures/fake-llm.js';
import { now, Server, summarize, tempDir, type Summary } from './util.js';

const CALLS = Number(process.env.BENCH_INLINE_CALLS ?? 300);
const WARMUP = 30;
export const INLINE_TARGET_MS = 5;

/** A 200-line document, cursor in the middle: a realistic size for what an editor sends. */
const LINES = Array.from({ length: 200 }, (_, i) => `  const value${i} = compute(${i}, options); // line ${i + 1}`);
const DOC = `function main(options) {\n${LINES.join('\n')}\n}\n`;
const POSITION = { line: 101, character: 9 };
const ANSWER = 'value100 + 1;';

/** The same document's lines repeated to about `bytes`, the cursor on the middle copy of line 101. */
function bigDoc(bytes: number): Doc {
  const copies = Math.ceil(bytes / DOC.length);
  const middle = Math.floor(copies / 2);
  return {
    name: `${(bytes / (1024 * 1024)).toFixed(0)} MB`,
    text: DOC.repeat(copies),
    position: { line: middle * (DOC.split('\n').length - 1) + POSITION.line, character: POSITION.character },
    calls: bytes > 2 * 1024 * 1024 ? 20 : 60,
  };
}

interface Doc {
  name: string;
  text: string;
  position: { line: number; character: number };
  calls: number;
}

const DOCS: Doc[] = [{ name: '200 lines', text: DOC, position: POSITION, calls: CALLS }, bigDoc(1024 * 1024), ...(process.env.BENCH_INLINE_5MB === '0' ? [] : [bigDoc(5 * 1024 * 1024)])];

export interface InlinePath {
  /** Which path and document: "FIM, 200 lines", "chat, 1 MB"… */
  name: string;
  /** The 200-line document: the row the target applies to. */
  target: boolean;
  calls: number;
  direct: Summary;
  patchbay: Summary;
  addedP50: number;
  addedP95: number;
}

export interface InlineRun {
  rows: InlinePath[];
}

export async function runInline(log: (s: string) => void): Promise<InlineRun> {
  const fake = await FakeLlm.start();
  fake.onRequest = () => [{ text: ANSWER }];
  try {
    log(`inline completion: alternating direct and through patchbay, documents ${DOCS.map((d) => `${d.name} (${d.calls} calls)`).join(', ')}…`);
    const rows: InlinePath[] = [];
    for (const doc of DOCS) for (const fimPath of [true, false]) rows.push(await measure(fake, fimPath, doc, log));
    return { rows };
  } finally {
    await fake.close();
  }
}

async function measure(fake: FakeLlm, fimPath: boolean, doc: Doc, log: (s: string) => void): Promise<InlinePath> {
  const endpoint = fimPath ? '/v1/completions' : '/v1/chat/completions';
  const [prefix, suffix] = split(doc);
  const config = {
    providers: { fake: { api: 'openai-chat', url: `${fake.url}/v1`, key: 'x', models: { m1: fimPath ? { fim: true } : {} } } },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false },
    gateway: { port: 0 },
  };
  const s = new Server({ home: tempDir(), config, env: { PATCHBAY_LOCAL_MODEL: 'off' } });
  try {
    await s.handshake(tempDir('pb-bench-ws-'));
    const direct: number[] = [];
    const through: number[] = [];
    const call = fimPath ? () => directFim(fake.url, prefix, suffix) : () => directChat(fake.url, prefix, suffix);
    const params = { docText: doc.text, position: doc.position };
    for (let i = 0; i < WARMUP + doc.calls; i++) {
      const t0 = now();
      await call();
      const t1 = now();
      const r = await s.request('completion/inline', { ...params, docVersion: i });
      if (r.msg.result?.items?.[0]?.text !== ANSWER) throw new Error(`unexpected answer: ${JSON.stringify(r.msg.result)}`);
      checkSeen(fake, endpoint, fimPath ? { prompt: prefix, suffix } : undefined);
      if (i < WARMUP) continue;
      direct.push(t1 - t0);
      through.push(r.t - t1);
    }
    const d = summarize(direct);
    const p = summarize(through);
    const name = `${fimPath ? 'FIM' : 'chat'}, ${doc.name}`;
    log(`  ${name.padEnd(16)} direct    p50 ${d.p50.toFixed(3)} ms  p95 ${d.p95.toFixed(3)} ms  max ${d.max.toFixed(3)} ms`);
    log(
      `  ${name.padEnd(16)} patchbay  p50 ${p.p50.toFixed(3)} ms  p95 ${p.p95.toFixed(3)} ms  max ${p.max.toFixed(3)} ms  (added p50 ${(p.p50 - d.p50).toFixed(3)} ms, p95 ${(p.p95 - d.p95).toFixed(3)} ms)`,
    );
    return { name, target: doc.text === DOC, calls: doc.calls, direct: d, patchbay: p, addedP50: p.p50 - d.p50, addedP95: p.p95 - d.p95 };
  } finally {
    await s.stop();
  }
}

/**
 * The fake answers both endpoints alike: the row only measures its path if patchbay's request
 * (the last one, after the direct call's) went to `endpoint`, with the same prompt and suffix as
 * the direct call when given. The recorded requests are dropped (megabyte bodies add up).
 */
function checkSeen(fake: FakeLlm, endpoint: string, fim: { prompt: string; suffix: string } | undefined): void {
  const seen = fake.requests.slice(-2);
  fake.requests.length = 0;
  if (seen.length !== 2 || seen.some((r) => r.path !== endpoint)) throw new Error(`expected the direct call and patchbay's on ${endpoint}, the fake saw ${seen.map((r) => r.path).join(', ')}`);
  const body = seen[1].body as { prompt?: unknown; suffix?: unknown };
  if (fim && (body.prompt !== fim.prompt || body.suffix !== fim.suffix)) throw new Error("patchbay's FIM request is not the direct call's: the rows would compare different work");
}

/** The FIM request patchbay makes, made directly. */
async function directFim(url: string, prompt: string, suffix: string): Promise<void> {
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'm1', prompt, suffix, max_tokens: 256, stream: false }),
  });
  const json = (await res.json()) as { choices: Array<{ text: string }> };
  if (json.choices[0].text !== ANSWER) throw new Error('direct FIM: unexpected answer');
}

/** A streamed chat completion with the document window, read to its end, made directly. */
async function directChat(url: string, prefix: string, suffix: string): Promise<void> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'm1', stream: true, max_tokens: 256, messages: [{ role: 'user', content: `${prefix}<CURSOR>${suffix}` }] }),
  });
  const text = await res.text();
  if (!text.includes('[DONE]')) throw new Error('direct chat: the stream did not end');
}

/** The window patchbay sends (no model limit configured: 16 KB before, 4 KB after), cut the same way. */
function split(doc: Doc): [string, string] {
  const { prefix, suffix } = splitAt(doc.text, doc.position.line - 1, doc.position.character - 1);
  return [tailOf(prefix, 16 * 1024), headOf(suffix, 4 * 1024)];
}

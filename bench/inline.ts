/**
 * Inline completion (issue 17, point 6): `completion/inline` through the real `patchbay server`
 * over stdio against the fake LLM, vs. the same provider call made directly from this process
 * with fetch: the added latency is patchbay's p50 (p95) minus the direct p50 (p95). Two paths:
 * FIM (`fim: true`, `POST /v1/completions` with prompt and suffix) and the chat path (a model
 * without `fim`, a streamed `POST /v1/chat/completions`). Calls alternate (direct, patchbay) so
 * both see the same machine load. Target: added p50 ≤ 5 ms.
 */
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

export interface InlinePath {
  direct: Summary;
  patchbay: Summary;
  addedP50: number;
  addedP95: number;
}

export interface InlineRun {
  fim: InlinePath;
  chat: InlinePath;
  calls: number;
}

export async function runInline(log: (s: string) => void): Promise<InlineRun> {
  const fake = await FakeLlm.start();
  fake.onRequest = () => [{ text: ANSWER }];
  try {
    log(`inline completion: ${CALLS} calls per path, alternating direct and through patchbay…`);
    const fim = await measure(fake, true, log);
    const chat = await measure(fake, false, log);
    return { fim, chat, calls: CALLS };
  } finally {
    await fake.close();
  }
}

async function measure(fake: FakeLlm, fimPath: boolean, log: (s: string) => void): Promise<InlinePath> {
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
    const call = fimPath ? () => directFim(fake.url) : () => directChat(fake.url);
    for (let i = 0; i < WARMUP + CALLS; i++) {
      const t0 = now();
      await call();
      const t1 = now();
      const r = await s.request('completion/inline', { docText: DOC, docVersion: i, position: POSITION });
      if (r.msg.result?.items?.[0]?.text !== ANSWER) throw new Error(`unexpected answer: ${JSON.stringify(r.msg.result)}`);
      if (i < WARMUP) continue;
      direct.push(t1 - t0);
      through.push(r.t - t1);
    }
    const d = summarize(direct);
    const p = summarize(through);
    const name = fimPath ? 'FIM ' : 'chat';
    log(`  ${name} direct    p50 ${d.p50.toFixed(3)} ms  p95 ${d.p95.toFixed(3)} ms  max ${d.max.toFixed(3)} ms`);
    log(`  ${name} patchbay  p50 ${p.p50.toFixed(3)} ms  p95 ${p.p95.toFixed(3)} ms  max ${p.max.toFixed(3)} ms`);
    return { direct: d, patchbay: p, addedP50: p.p50 - d.p50, addedP95: p.p95 - d.p95 };
  } finally {
    await s.stop();
  }
}

/** The FIM request patchbay makes, made directly. */
async function directFim(url: string): Promise<void> {
  const [prefix, suffix] = split();
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'm1', prompt: prefix, suffix, max_tokens: 256, stream: false }),
  });
  const json = (await res.json()) as { choices: Array<{ text: string }> };
  if (json.choices[0].text !== ANSWER) throw new Error('direct FIM: unexpected answer');
}

/** A streamed chat completion with the document, read to its end, made directly. */
async function directChat(url: string): Promise<void> {
  const [prefix, suffix] = split();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer x' },
    body: JSON.stringify({ model: 'm1', stream: true, max_tokens: 256, messages: [{ role: 'user', content: `${prefix}<CURSOR>${suffix}` }] }),
  });
  const text = await res.text();
  if (!text.includes('[DONE]')) throw new Error('direct chat: the stream did not end');
}

function split(): [string, string] {
  const lines = DOC.split('\n');
  const before = lines.slice(0, POSITION.line - 1).join('\n') + '\n' + lines[POSITION.line - 1].slice(0, POSITION.character - 1);
  return [before, DOC.slice(before.length)];
}

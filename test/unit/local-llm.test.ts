/**
 * The local model provider through the real code path: node-llama-cpp loading the tiny GGUF
 * model that scripts/make-tiny-gguf.mjs writes, streamed through LocalClient exactly as the
 * agent loop consumes it; plus the pure history / schema mappings.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Llama } from 'node-llama-cpp';
import { writeTinyGguf } from '../../scripts/make-tiny-gguf.mjs';
import { isAbortError } from '../../src/peers/llm/errors.js';
import { LocalClient, LocalRuntime, toGbnfSchema, toHistory } from '../../src/peers/llm/local.js';
import type { LlmEvent, LlmRequest } from '../../src/shapes/llm.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-local-llm-'));
const tiny = writeTinyGguf(join(dir, 'tiny.gguf'));
const runtime = new LocalRuntime();
afterAll(async () => {
  await runtime.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function request(chatId: string, maxOutputTokens: number, signal = new AbortController().signal): LlmRequest {
  return { model: 'tiny', system: 'You are terse.', messages: [{ role: 'user', content: 'hello there' }], tools: [], maxOutputTokens, signal, chatId };
}

async function collect(stream: AsyncIterable<LlmEvent>, onEvent?: (ev: LlmEvent, texts: number) => void): Promise<{ events: LlmEvent[]; error?: unknown }> {
  const events: LlmEvent[] = [];
  let texts = 0;
  try {
    for await (const ev of stream) {
      events.push(ev);
      if (ev.type === 'text') texts++;
      onEvent?.(ev, texts);
    }
    return { events };
  } catch (error) {
    return { events, error };
  }
}

const textOf = (events: LlmEvent[]) => events.flatMap((e) => (e.type === 'text' ? [e.text] : [])).join('');

describe('LocalClient on the tiny model', () => {
  const client = new LocalClient({ spec: { model: tiny.path, contextSize: 2048 }, home: dir, runtime });

  it('streams tokens, then usage and finish: length at maxOutputTokens', async () => {
    const { events, error } = await collect(client.stream(request('chat-a', 24)));
    expect(error).toBeUndefined();
    const progress = events.filter((e) => e.type === 'progress').map((e) => (e as { text: string }).text);
    expect(progress[0]).toBe('Loading local model tiny.gguf…');
    // Loading, then (while the prompt is read) "Thinking…": the loading line does not stay up.
    expect(progress.slice(0, -1).every((t) => t.startsWith('Loading local model tiny.gguf…'))).toBe(true);
    expect(progress.at(-1)).toBe('Thinking…');
    expect(events.findIndex((e) => e.type === 'progress' && e.text === 'Thinking…')).toBeLessThan(events.findIndex((e) => e.type === 'text'));
    const text = textOf(events);
    expect(text).toMatch(/^[a-z ]+$/);
    expect(events.filter((e) => e.type === 'text').length).toBeGreaterThanOrEqual(20);
    const usage = events.find((e) => e.type === 'usage') as Extract<LlmEvent, { type: 'usage' }>;
    expect(usage.inputTokens).toBeGreaterThan(5);
    expect(usage.outputTokens).toBe(24);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'length' });
  });

  it('a second chat reuses the loaded model (no load) and gets its own context', async () => {
    const { events, error } = await collect(client.stream(request('chat-b', 8)));
    expect(error).toBeUndefined();
    expect(events.some((e) => e.type === 'progress')).toBe(false);
    expect(textOf(events)).toMatch(/^[a-z ]+$/);
    expect(runtime.contexts().sort()).toEqual(['chat-a', 'chat-b']);
  });

  it('at most two contexts: a third chat disposes the least recently used idle one; release frees a chat', async () => {
    await collect(client.stream(request('chat-c', 4)));
    expect(runtime.contexts().sort()).toEqual(['chat-b', 'chat-c']);
    client.release('chat-b');
    await expect.poll(() => runtime.contexts()).toEqual(['chat-c']);
  });

  it('abort stops the generation at once with an AbortError', async () => {
    const ac = new AbortController();
    let abortedAt = 0;
    const { events, error } = await collect(client.stream(request('chat-c', 4000, ac.signal)), (ev, texts) => {
      if (ev.type === 'text' && texts === 5) {
        abortedAt = Date.now();
        ac.abort();
      }
    });
    expect(isAbortError(error)).toBe(true);
    const texts = events.filter((e) => e.type === 'text').length;
    expect(texts).toBeGreaterThanOrEqual(5);
    expect(texts).toBeLessThan(200);
    // "At once": the stream ends well before the 4000 tokens asked for would take.
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    // The chat's context is free again: the next turn runs.
    const next = await collect(client.stream(request('chat-c', 4)));
    expect(next.error).toBeUndefined();
  });

  it('a missing model file is a clear, non-retryable error', async () => {
    const missing = new LocalClient({ spec: { model: join(dir, 'nope.gguf') }, home: dir, runtime });
    const { error } = await collect(missing.stream(request('chat-x', 4)));
    expect(String(error)).toMatch(/Could not get the local model .*nope\.gguf/);
    expect((error as { retryable?: boolean }).retryable).toBe(false);
  });
});

describe('LocalRuntime under concurrent requests', () => {
  const fresh = new LocalRuntime();
  afterAll(() => fresh.dispose());
  const client = new LocalClient({ spec: { model: tiny.path, contextSize: 1024 }, home: dir, runtime: fresh });
  const loads = (r: { events: LlmEvent[] }) => r.events.filter((e) => e.type === 'progress' && e.text === 'Loading local model tiny.gguf…').length;

  it('two chats arriving together on a cold runtime: one load, one context each', async () => {
    const [a, b] = await Promise.all([collect(client.stream(request('c1', 6))), collect(client.stream(request('c2', 6)))]);
    expect(a.error ?? b.error).toBeUndefined();
    expect(loads(a) + loads(b)).toBe(1);
    expect(fresh.contexts().sort()).toEqual(['c1', 'c2']);
  });

  it('never more than two contexts: a third chat waits for one, the same chat twice takes turns', async () => {
    const all = await Promise.all([
      collect(client.stream(request('c3', 8))),
      collect(client.stream(request('c4', 8))),
      collect(client.stream(request('c5', 8))),
      collect(client.stream(request('c5', 8))),
    ]);
    for (const r of all) expect(r.error).toBeUndefined();
    for (const r of all) expect(textOf(r.events)).toMatch(/^[a-z ]+$/);
    expect(fresh.contexts().length).toBeLessThanOrEqual(2);
  });

  it('a request without a chat gets a temporary context, freed when it is done', async () => {
    const r = await collect(client.stream({ ...request('x', 4), chatId: undefined }));
    expect(r.error).toBeUndefined();
    expect(fresh.contexts().some((k) => k.startsWith('~temporary'))).toBe(false);
  });

  it('a chat that ends while it generates has its context freed when the generation stops', async () => {
    const ac = new AbortController();
    const r = await collect(client.stream(request('ending', 4000, ac.signal)), (ev, n) => {
      if (ev.type === 'text' && n === 3) {
        client.release('ending');
        expect(fresh.contexts()).toContain('ending'); // still busy
        ac.abort();
      }
    });
    expect(isAbortError(r.error)).toBe(true);
    expect(fresh.contexts()).not.toContain('ending');
  });

  it('a request aborted while it waits for a context leaves the queue and says AbortError', async () => {
    const busy = new AbortController();
    const waiting = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const holders = [collect(client.stream(request('h1', 4000, busy.signal)), (ev) => ev.type === 'text' && started()), collect(client.stream(request('h2', 4000, busy.signal)))];
    await running;
    const third = collect(client.stream(request('h3', 4, waiting.signal)));
    await new Promise((r) => setTimeout(r, 50));
    waiting.abort();
    expect(isAbortError((await third).error)).toBe(true);
    busy.abort();
    await Promise.all(holders);
    const after = await collect(client.stream(request('h3', 4)));
    expect(after.error).toBeUndefined();
  });
});

describe("LocalClient tool calls through the library's function calling", () => {
  // A tiny model scripted to answer with a call in the syntax node-llama-cpp's ChatML wrapper
  // teaches the model; the library parses it (grammar-constrained) into a function call.
  const scripted = writeTinyGguf(join(dir, 'caller.gguf'), { reply: '||call: get_weather({"city":"Oslo"})' });
  const client = new LocalClient({ spec: { model: scripted.path, contextSize: 2048 }, home: dir, runtime });

  it('a call comes back as toolCallStart / toolCallDelta / toolCallEnd and finish: tool_calls', async () => {
    const req: LlmRequest = {
      ...request('chat-tools', 64),
      tools: [{ name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    };
    const { events, error } = await collect(client.stream(req));
    expect(error).toBeUndefined();
    const start = events.find((e) => e.type === 'toolCallStart') as Extract<LlmEvent, { type: 'toolCallStart' }>;
    expect(start.name).toBe('get_weather');
    const calls = events.filter((e) => e.type.startsWith('toolCall') || e.type === 'finish');
    // The params stream as the model writes them, then the parsed call, then the end of the turn.
    expect(calls[0]).toEqual({ type: 'toolCallStart', id: start.id, name: 'get_weather' });
    const deltas = calls.slice(1, -2);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.type === 'toolCallDelta' && d.id === start.id)).toBe(true);
    expect(JSON.parse(deltas.map((d) => (d as { argsDelta: string }).argsDelta).join(''))).toEqual({ city: 'Oslo' });
    expect(calls.slice(-2)).toEqual([
      { type: 'toolCallEnd', id: start.id, name: 'get_weather', args: { city: 'Oslo' } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    // The same model with the result in its history: the call and its result are rendered back.
    const again = await collect(
      client.stream({
        ...req,
        messages: [
          ...req.messages,
          { role: 'assistant', content: [{ type: 'toolCall', id: start.id, name: 'get_weather', args: { city: 'Oslo' } }] },
          { role: 'tool', toolCallId: start.id, name: 'get_weather', content: 'sunny, 21 °C', error: false },
        ],
      }),
    );
    expect(again.error).toBeUndefined();
    expect(again.events.some((e) => e.type === 'toolCallEnd')).toBe(true);
  });
});

describe('LocalClient with a model to download', () => {
  let server: Server;
  let url = '';
  beforeAll(async () => {
    const bytes = readFileSync(tiny.path);
    server = createServer((req, res) => {
      res.writeHead(200, { 'content-length': bytes.length, 'x-linked-etag': `"${tiny.sha256}"` });
      res.end(bytes);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tiny.gguf`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('shows download progress, then loads it and streams', async () => {
    const home = mkdtempSync(join(dir, 'home-'));
    const client = new LocalClient({ spec: { model: url }, home, runtime });
    const { events, error } = await collect(client.stream(request('chat-d', 4)));
    expect(error).toBeUndefined();
    const progress = events.flatMap((e) => (e.type === 'progress' ? [e.text] : []));
    expect(progress.some((t) => /^Downloading .*tiny\.gguf: 100% \(/.test(t))).toBe(true);
    expect(progress.at(-2)).toMatch(/^Loading local model/);
    expect(progress.at(-1)).toBe('Thinking…');
    expect(textOf(events)).toMatch(/^[a-z ]+$/);
  });
});

describe('mappings', () => {
  it('a tool result joins its call as the result; text and calls keep their order', () => {
    const h = toHistory('sys', [
      { role: 'user', content: 'read a.ts' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'toolCall', id: 't1', name: 'patchbay__read_file', args: { path: 'a.ts' } },
        ],
      },
      { role: 'tool', toolCallId: 't1', name: 'patchbay__read_file', content: 'export {}', error: false },
      { role: 'tool', toolCallId: 'unknown', name: 'x', content: 'orphan', error: true },
    ]);
    expect(h).toEqual([
      { type: 'system', text: 'sys' },
      { type: 'user', text: 'read a.ts' },
      { type: 'model', response: ['Reading.', { type: 'functionCall', name: 'patchbay__read_file', params: { path: 'a.ts' }, result: 'export {}' }] },
      { type: 'user', text: 'Result of x:\norphan' },
    ]);
  });

  it('JSON Schemas narrow to what the grammar supports', () => {
    expect(
      toGbnfSchema({
        type: 'object',
        properties: {
          path: { type: 'string', description: 'file', format: 'uri-reference' },
          mode: { enum: ['a', 'b', { no: 1 }] },
          n: { type: ['integer', 'object'] },
          items: { type: 'array', items: { anyOf: [{ type: 'number' }, { const: 'x' }] } },
          free: { $ref: '#/definitions/x' },
        },
        required: ['path', 'ghost'],
        additionalProperties: false,
      }),
    ).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'file' },
        mode: { oneOf: [{ enum: ['a', 'b'] }, { type: 'null' }] },
        n: { oneOf: [{ type: ['integer'] }, { type: 'null' }] },
        items: { oneOf: [{ type: 'array', items: { oneOf: [{ type: 'number' }, { const: 'x' }] } }, { type: 'null' }] },
        free: { oneOf: [{ type: ['string', 'number', 'boolean', 'null'] }, { type: 'null' }] },
      },
    });
    expect(toGbnfSchema({ type: 'object', description: 'anything' })).toEqual({ type: 'object', properties: {}, additionalProperties: true, description: 'anything' });
  });
});

describe('LocalRuntime: a load outlives the request that started it', () => {
  // Inline completion supersedes its request on every keystroke (src/core/assist/inline.ts): a
  // load aborted with it would restart each time and never finish.
  const own = new LocalRuntime();
  afterAll(() => own.dispose());
  const client = new LocalClient({ spec: { model: tiny.path, contextSize: 1024 }, home: dir, runtime: own });

  it('a request aborted during the load leaves the load going; the next request uses it (one load, no request signal given to it)', async () => {
    const calls: Array<Record<string, unknown>> = [];
    const inner = own as unknown as { getLlama(): Promise<Llama> };
    const getLlama = inner.getLlama.bind(own);
    inner.getLlama = async () => {
      const llama = await getLlama();
      return new Proxy(llama, {
        get: (t, k) => (k === 'loadModel' ? (opts: Record<string, unknown>) => (calls.push(opts), t.loadModel(opts as Parameters<Llama['loadModel']>[0])) : Reflect.get(t, k)),
      });
    };
    const first = new AbortController();
    const aborted = collect(client.stream(request('k1', 4, first.signal)), (ev) => {
      if (ev.type === 'progress' && ev.text.startsWith('Loading local model')) first.abort();
    });
    expect(isAbortError((await aborted).error)).toBe(true);
    const next = await collect(client.stream(request('k2', 4)));
    expect(next.error).toBeUndefined();
    expect(calls).toHaveLength(1);
    expect(calls[0].loadSignal).toBeUndefined();
  });
});

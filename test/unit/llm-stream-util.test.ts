/** The `<think>` splitter at every cut position, argument parsing, and error mapping. */
import { describe, expect, it } from 'vitest';
import { httpError, retryAfterMs, toLlmError } from '../../src/peers/llm/errors.js';
import { parseArgs, ReasoningTracker, ThinkTagSplitter } from '../../src/peers/llm/stream-util.js';
import { LlmError, type LlmEvent } from '../../src/shapes/llm.js';
import { reasoningOf, textOf } from './llm-helpers.js';

function splitAll(chunks: string[]): LlmEvent[] {
  const out: LlmEvent[] = [];
  const s = new ThinkTagSplitter(new ReasoningTracker());
  for (const c of chunks) s.feed(c, out);
  s.flush(out);
  return out;
}

describe('ThinkTagSplitter', () => {
  const input = '<think>plan: a < b, use <b>tags</b></think>\n\nThe answer is <think-ish> 42.';

  it('gives the same result wherever the stream is cut (two and three pieces)', () => {
    for (let i = 0; i <= input.length; i++) {
      const ev = splitAll([input.slice(0, i), input.slice(i)]);
      expect(reasoningOf(ev), `cut at ${i}`).toBe('plan: a < b, use <b>tags</b>');
      expect(textOf(ev), `cut at ${i}`).toBe('The answer is <think-ish> 42.');
      for (let j = i; j <= input.length; j += 7) {
        const ev3 = splitAll([input.slice(0, i), input.slice(i, j), input.slice(j)]);
        expect(textOf(ev3)).toBe('The answer is <think-ish> 42.');
      }
    }
  });

  it('one character at a time; reasoning closes before the text', () => {
    const ev = splitAll([...input]);
    expect(reasoningOf(ev)).toBe('plan: a < b, use <b>tags</b>');
    const types = ev.map((e) => e.type);
    expect(types.filter((t) => t === 'reasoningStart')).toHaveLength(1);
    expect(types.indexOf('reasoningEnd')).toBeLessThan(types.indexOf('text'));
  });

  it('flushes a held-back partial tag as text and closes an unterminated think block', () => {
    expect(textOf(splitAll(['hello <thi']))).toBe('hello <thi');
    const ev = splitAll(['<think>never closed']);
    expect(reasoningOf(ev)).toBe('never closed');
    expect(ev.at(-1)?.type).toBe('reasoningEnd');
  });
});

describe('parseArgs', () => {
  it('parses objects and turns anything else into {}', () => {
    expect(parseArgs('{"a":1}')).toEqual({ a: 1 });
    expect(parseArgs('')).toEqual({});
    expect(parseArgs('{"a":')).toEqual({});
    expect(parseArgs('[1]')).toEqual({});
    expect(parseArgs('null')).toEqual({});
  });
});

describe('error mapping', () => {
  it('reads retry-after-ms, retry-after seconds and dates', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    const date = retryAfterMs(new Headers({ 'retry-after': new Date(Date.now() + 5000).toUTCString() }))!;
    expect(date).toBeGreaterThan(3000);
    expect(date).toBeLessThanOrEqual(5000);
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it('classifies statuses and never leaks the key', () => {
    const key = 'sk-proj-SECRETSECRET1234';
    const e = httpError('openai', 429, new Headers({ 'retry-after': '1' }), JSON.stringify({ error: { message: `Rate limit for key ${key}` } }), key);
    expect(e).toMatchObject({ status: 429, retryable: true, retryAfterMs: 1000 });
    expect(e.message).toContain('HTTP 429');
    expect(e.message).toContain('Rate limit');
    expect(e.message).not.toContain('SECRETSECRET');
    for (const [status, retryable] of [
      [400, false],
      [401, false],
      [404, false],
      [408, true],
      [409, true],
      [500, true],
      [502, true],
      [529, true],
    ] as const) {
      expect(httpError('x', status, new Headers(), '').retryable, String(status)).toBe(retryable);
    }
  });

  it('passes aborts through and wraps unknown errors', () => {
    const abort = new Error('aborted');
    abort.name = 'AbortError';
    expect(toLlmError(abort, 'p').name).toBe('AbortError');
    const wrapped = toLlmError(new Error('weird'), 'p');
    expect(wrapped).toBeInstanceOf(LlmError);
    expect(wrapped.message).toContain('weird');
  });
});

import { coalesce, sseBatches } from '../../src/peers/llm/sse.js';

describe('sseBatches', () => {
  function body(parts: string[]): ReadableStream<Uint8Array> {
    const enc = new TextEncoder();
    return new ReadableStream({
      start(c) {
        for (const p of parts) c.enqueue(enc.encode(p));
        c.close();
      },
    });
  }
  async function all(parts: string[]) {
    const out = [];
    for await (const b of sseBatches(body(parts))) out.push(b);
    return out;
  }

  it('yields every event of one read as one batch, with event names and multi-line data', async () => {
    const batches = await all(['event: a\ndata: 1\n\ndata: x\ndata: y\n\n: comment\n\ndata: z\n\n']);
    expect(batches).toEqual([
      [
        { event: 'a', data: '1' },
        { event: undefined, data: 'x\ny' },
        { event: undefined, data: 'z' },
      ],
    ]);
  });

  it('handles events and CRLF line ends split across reads, and drops a half-received last event', async () => {
    const batches = await all(['data: he', 'llo\r\n\r', '\ndata: {"a"', ':1}\r\n\r\ndata: tail']);
    expect(batches.flat()).toEqual([
      { event: undefined, data: 'hello' },
      { event: undefined, data: '{"a":1}' },
    ]);
  });

  it('does not dispatch an event whose data is empty', async () => {
    const batches = await all(['data:\n\ndata: x\n\n']);
    expect(batches.flat()).toEqual([{ event: undefined, data: 'x' }]);
  });

  it('decodes multi-byte characters split across reads', async () => {
    const bytes = new TextEncoder().encode('data: héllo ✓\n\n');
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.slice(0, 8));
        c.enqueue(bytes.slice(8));
        c.close();
      },
    });
    const out = [];
    for await (const b of sseBatches(stream)) out.push(...b);
    expect(out).toEqual([{ event: undefined, data: 'héllo ✓' }]);
  });

  /** A body that offers `pieces` reads of `piece`, counting what was pulled and whether it was cancelled. */
  function endless(prefix: string, piece: string, pieces: number) {
    const enc = new TextEncoder();
    const state = { pulled: 0, cancelled: false };
    const stream = new ReadableStream<Uint8Array>(
      {
        start(c) {
          c.enqueue(enc.encode(prefix));
        },
        pull(c) {
          if (state.pulled++ >= pieces) return c.close();
          c.enqueue(enc.encode(piece));
        },
        cancel() {
          state.cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { stream, state };
  }

  it('stops at a line longer than 8 MB, cancelling the body instead of reading on', async () => {
    const { stream, state } = endless('data: ', 'x'.repeat(1024 * 1024), 64);
    const read = async () => {
      for await (const _ of sseBatches(stream, 'fake')) void _;
    };
    await expect(read()).rejects.toThrow('fake: the LLM sent a line longer than 8 MB; stream stopped');
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(12);
  });

  it('stops at an event whose data lines add up to more than 8 MB', async () => {
    const { stream, state } = endless('', `data: ${'y'.repeat(64 * 1024)}\n`, 1000);
    const read = async () => {
      for await (const _ of sseBatches(stream, 'fake')) void _;
    };
    await expect(read()).rejects.toThrow(/longer than 8 MB/);
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(200);
  });
});

describe('coalesce', () => {
  it('merges adjacent text and same-id reasoning deltas only', () => {
    const merged = coalesce([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
      { type: 'reasoningDelta', id: 'r1', text: 'x' },
      { type: 'reasoningDelta', id: 'r1', text: 'y' },
      { type: 'reasoningDelta', id: 'r2', text: 'z' },
      { type: 'toolCallDelta', id: 'c', argsDelta: '{' },
      { type: 'toolCallDelta', id: 'c', argsDelta: '}' },
      { type: 'text', text: 'c' },
    ] as never[]);
    expect(merged).toEqual([
      { type: 'text', text: 'ab' },
      { type: 'reasoningDelta', id: 'r1', text: 'xy' },
      { type: 'reasoningDelta', id: 'r2', text: 'z' },
      { type: 'toolCallDelta', id: 'c', argsDelta: '{' },
      { type: 'toolCallDelta', id: 'c', argsDelta: '}' },
      { type: 'text', text: 'c' },
    ]);
  });
});

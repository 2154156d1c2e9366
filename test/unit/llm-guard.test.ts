/**
 * streamWithRetry over real adapters and the fake server: retries, backoff with
 * retry-after, stall detection and prompt cancellation.
 */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { backoffDelay, streamWithRetry } from '../../src/peers/llm/guard.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import { type LlmClient, LlmError, type LlmEvent } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { collect, request, textOf } from './llm-helpers.js';

const fake = useFakeLlm();

const chat = (): LlmClient => new OpenAiChatClient({ url: `${fake().url}/v1`, key: 'sk-guard-test-0000' });
const noRetry = { onRetry: () => {}, stallMs: 5000, maxRetries: 0 };

describe('streamWithRetry: retries', () => {
  it('retries a 429 (retry-after: 0) and then streams the success', async () => {
    fake().script({ status: 429, headers: { 'retry-after': '0' } }, [{ text: 'after retry' }]);
    const retries: Array<{ attempt: number; delay: number; status: number | undefined }> = [];
    const events = await collect(
      streamWithRetry(chat(), request(), {
        maxRetries: 3,
        stallMs: 5000,
        onRetry: (attempt, delay, err) => retries.push({ attempt, delay, status: err.status }),
      }),
    );
    expect(textOf(events)).toBe('after retry');
    expect(retries).toEqual([{ attempt: 1, delay: 0, status: 429 }]);
    expect(fake().requests).toHaveLength(2);
  });

  it('retries Anthropic 529 overloaded with exponential backoff', async () => {
    fake().script({ status: 529 }, { status: 529 }, [{ text: 'finally' }]);
    const delays: number[] = [];
    const events = await collect(
      streamWithRetry(new AnthropicClient({ url: fake().url, key: 'k' }), request(), {
        maxRetries: 4,
        stallMs: 5000,
        baseDelayMs: 10,
        onRetry: (_a, d) => delays.push(d),
      }),
    );
    expect(textOf(events)).toBe('finally');
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeGreaterThanOrEqual(5);
    expect(delays[0]).toBeLessThanOrEqual(10);
    expect(delays[1]).toBeGreaterThanOrEqual(10);
    expect(delays[1]).toBeLessThanOrEqual(20);
  });

  it('throws the LlmError with its status once retries are used up', async () => {
    fake().script({ status: 500, body: { error: { message: 'kaboom', type: 'server_error' } } });
    const retries: number[] = [];
    const err = await collect(streamWithRetry(chat(), request(), { ...noRetry, onRetry: (a) => retries.push(a) })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ status: 500, retryable: true });
    expect((err as Error).message).toContain('kaboom');
    expect((err as Error).message).not.toContain('sk-guard-test');
    expect(retries).toEqual([]);
    expect(fake().requests).toHaveLength(1);
  });

  it('gives up after maxRetries attempts of a persistent 503', async () => {
    fake().script({ status: 503, headers: { 'retry-after-ms': '1' } }, { status: 503, headers: { 'retry-after-ms': '1' } }, { status: 503, headers: { 'retry-after-ms': '1' } });
    const retries: number[] = [];
    const err = await collect(streamWithRetry(chat(), request(), { ...noRetry, maxRetries: 2, onRetry: (a) => retries.push(a) })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', status: 503 });
    expect(retries).toEqual([1, 2]);
    expect(fake().requests).toHaveLength(3);
  });

  it('does not retry a 400', async () => {
    fake().script({ status: 400 });
    const err = await collect(streamWithRetry(chat(), request(), { ...noRetry, maxRetries: 3 })).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, retryable: false });
    expect(fake().requests).toHaveLength(1);
  });

  it('does not retry once events were yielded', async () => {
    fake().script([{ text: 'half' }, { streamError: { message: 'died', type: 'server_error' } }]);
    const got: LlmEvent[] = [];
    const err = await (async () => {
      for await (const e of streamWithRetry(chat(), request(), { ...noRetry, maxRetries: 3 })) got.push(e);
    })().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: true });
    expect(textOf(got)).toBe('half');
    expect(fake().requests).toHaveLength(1);
  });
});

describe('streamWithRetry: stalls and aborts', () => {
  it('declares a stall before the first event and retries it', async () => {
    fake().script([{ stall: 'forever' }], [{ text: 'fresh' }]);
    const retries: string[] = [];
    const events = await collect(streamWithRetry(chat(), request(), { maxRetries: 1, stallMs: 200, baseDelayMs: 1, onRetry: (_a, _d, e) => retries.push(e.message) }));
    expect(textOf(events)).toBe('fresh');
    expect(retries).toEqual(['LLM stream stalled: no data for 0.2s']);
  });

  it('throws the stall error after the first event without retrying', async () => {
    fake().script([{ text: 'start' }, { stall: 'forever' }]);
    const got: LlmEvent[] = [];
    const t0 = Date.now();
    const err = await (async () => {
      for await (const e of streamWithRetry(new AnthropicClient({ url: fake().url, key: 'k' }), request(), { ...noRetry, maxRetries: 3, stallMs: 200 })) got.push(e);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ retryable: true, status: undefined });
    expect((err as Error).message).toMatch(/^LLM stream stalled: no data for 0\.2s/);
    expect(textOf(got)).toBe('start');
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(fake().requests).toHaveLength(1);
  });

  it('a slow consumer is not a stall', async () => {
    fake().script([{ text: 'a' }, { delay: 30 }, { text: 'b' }]);
    const got: string[] = [];
    for await (const e of streamWithRetry(chat(), request(), { ...noRetry, stallMs: 100 })) {
      if (e.type === 'text') {
        got.push(e.text);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    expect(got).toEqual(['a', 'b']);
  });

  const clients: Array<[string, () => LlmClient]> = [
    ['openai-chat', chat],
    ['openai-responses', () => new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'k' })],
    ['anthropic', () => new AnthropicClient({ url: fake().url, key: 'k' })],
    ['ollama', () => new OllamaClient({ url: fake().url })],
  ];
  it.each(clients)('%s: abort during a forever-stall ends within 200 ms with an AbortError and closes the request', async (_n, make) => {
    fake().script([{ text: 'before' }, { stall: 'forever' }]);
    const ctl = new AbortController();
    const got: LlmEvent[] = [];
    let abortedAt = 0;
    const err = await (async () => {
      for await (const e of streamWithRetry(make(), request({ signal: ctl.signal }), { ...noRetry, maxRetries: 3, stallMs: 60_000 })) {
        got.push(e);
        if (e.type === 'text') {
          setTimeout(() => {
            abortedAt = Date.now();
            ctl.abort();
          }, 50);
        }
      }
    })().catch((e: unknown) => e);
    const took = Date.now() - abortedAt;
    expect((err as Error).name).toBe('AbortError');
    expect(took).toBeLessThan(200);
    expect(textOf(got)).toBe('before');
    // the HTTP request really ended: the server saw the client go away
    expect(fake().requests).toHaveLength(1);
    await expect.poll(() => fake().activeStreams, { timeout: 1000 }).toBe(0);
  });

  it('abort before the response arrives (server delaying) ends promptly', async () => {
    fake().script([{ delay: 10_000 }, { text: 'late' }]);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    const t0 = Date.now();
    const err = await collect(streamWithRetry(chat(), request({ signal: ctl.signal }), noRetry)).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(Date.now() - t0).toBeLessThan(250);
  });

  it('abort while waiting to retry ends promptly', async () => {
    fake().script({ status: 429, headers: { 'retry-after': '30' } });
    const ctl = new AbortController();
    const t0 = Date.now();
    const err = await collect(streamWithRetry(chat(), request({ signal: ctl.signal }), { ...noRetry, maxRetries: 2, onRetry: () => setTimeout(() => ctl.abort(), 20) })).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('an already-aborted signal never reaches the server', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const err = await collect(streamWithRetry(chat(), request({ signal: ctl.signal }), noRetry)).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(fake().requests).toHaveLength(0);
  });
});

describe('backoffDelay', () => {
  it('honours retry-after, capped, and otherwise doubles with jitter', () => {
    const e = (ms?: number): LlmError => new LlmError('x', 429, true, ms);
    expect(backoffDelay(1, e(1234), 1000, 60_000)).toBe(1234);
    expect(backoffDelay(1, e(10 * 60_000), 1000, 60_000)).toBe(60_000);
    for (let attempt = 1; attempt <= 4; attempt++) {
      const d = backoffDelay(attempt, e(), 100, 60_000);
      const full = 100 * 2 ** (attempt - 1);
      expect(d).toBeGreaterThanOrEqual(full / 2);
      expect(d).toBeLessThanOrEqual(full);
    }
    expect(backoffDelay(30, e(), 1000, 5000)).toBe(5000);
  });
});

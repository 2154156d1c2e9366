/** The fake server can stream 10,000 chunks quickly, and each adapter receives all of them. */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import { streamWithRetry } from '../../src/peers/llm/guard.js';
import type { LlmClient } from '../../src/shapes/llm.js';
import { chunkReply } from '../fixtures/fake-llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { collect, request, run } from './llm-helpers.js';

const fake = useFakeLlm({ reset: 'never' });

describe('10,000-chunk replies', () => {
  const clients: Array<[string, () => LlmClient]> = [
    ['openai-chat', () => new OpenAiChatClient({ url: `${fake().url}/v1` })],
    ['openai-responses', () => new OpenAiResponsesClient({ url: `${fake().url}/v1` })],
    ['anthropic', () => new AnthropicClient({ url: fake().url, key: 'k' })],
    ['ollama', () => new OllamaClient({ url: fake().url })],
  ];
  it.each(clients)('%s', async (_name, make) => {
    fake().script(chunkReply(10_000, 'tok '));
    const t0 = Date.now();
    const events = await run(make());
    const texts = events.filter((e) => e.type === 'text');
    // Adapters may merge the deltas of one network read; every chunk's text must arrive, in order.
    expect(texts.map((e) => (e.type === 'text' ? e.text : '')).join('')).toBe('tok '.repeat(10_000));
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('through streamWithRetry', () => {
  it('passes 10,000 chunks through the guard without loss', async () => {
    fake().script(chunkReply(10_000, 'x'));
    const t0 = Date.now();
    const events = await collect(streamWithRetry(new OpenAiChatClient({ url: `${fake().url}/v1` }), request(), { maxRetries: 0, stallMs: 5000, onRetry: () => {} }));
    expect(events.map((e) => (e.type === 'text' ? e.text : '')).join('')).toBe('x'.repeat(10_000));
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe('fake server', () => {
  it('script() replaces the queue; an empty queue answers "ok"', async () => {
    fake().script([{ text: 'stale' }], [{ text: 'stale 2' }]);
    expect(fake().pending).toBe(2);
    fake().script();
    expect(fake().pending).toBe(0);
    const events = await run(new OllamaClient({ url: fake().url }));
    expect(events.find((e) => e.type === 'text')).toEqual({ type: 'text', text: 'ok' });
  });

  it('scripts replies and lists requests over HTTP', async () => {
    const res = await fetch(`${fake().url}/__fake/script`, { method: 'POST', body: JSON.stringify([[{ text: 'scripted over http' }]]) });
    expect(await res.json()).toEqual({ queued: 1 });
    const events = await run(new OllamaClient({ url: fake().url }));
    expect(events.find((e) => e.type === 'text')).toEqual({ type: 'text', text: 'scripted over http' });
    const reqs = (await (await fetch(`${fake().url}/__fake/requests`)).json()) as Array<{ path: string }>;
    expect(reqs.at(-1)?.path).toBe('/api/chat');
  });
});

/**
 * The four adapters against the fake server speaking each real wire format, parsed by
 * the real SDKs: text, tool calls with streamed arguments, usage, finish reasons, and
 * what each request puts on the wire.
 */
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import type { LlmClient, LlmEvent } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { run, textOf, toolHistory, weatherTool } from './llm-helpers.js';

const fake = useFakeLlm();

const adapters: Array<{ name: string; path: string; make: () => LlmClient }> = [
  { name: 'openai-chat', path: '/v1/chat/completions', make: () => new OpenAiChatClient({ url: `${fake().url}/v1`, key: 'sk-test-chat-000000' }) },
  { name: 'openai-responses', path: '/v1/responses', make: () => new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'sk-test-resp-000000' }) },
  { name: 'anthropic', path: '/v1/messages', make: () => new AnthropicClient({ url: fake().url, key: 'sk-ant-test-000000' }) },
  { name: 'ollama', path: '/api/chat', make: () => new OllamaClient({ url: fake().url }) },
];

describe.each(adapters)('$name adapter', ({ name, path, make }) => {
  it('streams text chunk by chunk, then usage and finish', async () => {
    fake().script([{ text: 'Hel' }, { text: 'lo, ' }, { text: 'world' }, { usage: { input: 12, output: 3 } }]);
    const events = await run(make());
    const texts = events.filter((e) => e.type === 'text');
    // SSE adapters merge deltas that arrive in one network read; the text is the same.
    expect(texts.map((e) => (e as { text: string }).text).join('')).toBe('Hello, world');
    if (name === 'ollama') expect(texts).toHaveLength(3);
    const usage = events.find((e) => e.type === 'usage');
    expect(usage).toMatchObject({ inputTokens: 12, outputTokens: 3 });
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    // usage comes right before finish
    expect(events.at(-2)?.type).toBe('usage');
    expect(fake().requests.map((r) => r.path)).toEqual([path]);
    expect(fake().requests[0].body.model).toBe('test-model');
    expect(fake().requests[0].body.stream).toBe(true);
  });

  it('reports the output limit as finish length, and a refusal or content filter as finish refusal', async () => {
    fake().script([{ text: 'cut o' }, { finish: 'length' }]);
    expect((await run(make())).at(-1)).toEqual({ type: 'finish', reason: 'length' });
    // Ollama has no refusal on its wire.
    if (name === 'ollama') return;
    fake().script([{ text: 'I can' }, { finish: 'refusal' }]);
    expect((await run(make())).at(-1)).toEqual({ type: 'finish', reason: 'refusal' });
  });

  it('streams a tool call: start, argument deltas, end with parsed args, finish tool_calls', async () => {
    const args = { city: 'Paris', days: 3, units: { temp: 'C' } };
    fake().script([{ text: 'Let me check.' }, { toolCall: { id: 'call_abc', name: 'get_weather', args } }]);
    const events = await run(make(), { tools: [weatherTool] });
    expect(textOf(events)).toBe('Let me check.');
    const start = events.findIndex((e) => e.type === 'toolCallStart');
    const end = events.findIndex((e) => e.type === 'toolCallEnd');
    expect(events[start]).toEqual({ type: 'toolCallStart', id: 'call_abc', name: 'get_weather' });
    const deltas = events.filter((e): e is Extract<LlmEvent, { type: 'toolCallDelta' }> => e.type === 'toolCallDelta');
    // Ollama sends the call whole (one delta); the others stream the JSON in pieces.
    if (name === 'ollama') expect(deltas).toHaveLength(1);
    else expect(deltas.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(deltas.map((d) => d.argsDelta).join(''))).toEqual(args);
    expect(deltas.every((d) => d.id === 'call_abc')).toBe(true);
    expect(events[end]).toEqual({ type: 'toolCallEnd', id: 'call_abc', name: 'get_weather', args });
    expect(start).toBeLessThan(end);
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'tool_calls' });
  });

  it('sends the system prompt, tools and a tool round-trip in its own wire shape', async () => {
    fake().script([{ text: 'It is sunny.' }]);
    const events = await run(make(), { tools: [weatherTool], messages: toolHistory, maxOutputTokens: 500 });
    expect(textOf(events)).toBe('It is sunny.');
    const body = fake().requests[0].body;
    const wire = JSON.stringify(body);
    expect(wire).toContain('You are a test.');
    expect(wire).toContain('get_weather');
    expect(wire).toContain('sunny, 21C');
    if (name === 'openai-chat') {
      expect(body.stream_options).toEqual({ include_usage: true });
      expect(body.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
      expect(body.messages[2]).toMatchObject({
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      });
      expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21C' });
      expect(body.tools[0]).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      expect(body.max_tokens).toBe(500);
    } else if (name === 'openai-responses') {
      expect(body.instructions).toBe('You are a test.');
      expect(body.store).toBe(false);
      expect(body.input).toContainEqual({ type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' });
      expect(body.input).toContainEqual({ type: 'function_call_output', call_id: 'call_1', output: 'sunny, 21C' });
      expect(body.tools[0]).toMatchObject({ type: 'function', name: 'get_weather', strict: false });
      expect(body.max_output_tokens).toBe(500);
    } else if (name === 'anthropic') {
      // The system prompt goes as text blocks, its stable part marked for the prompt cache (anthropic-cache.ts).
      expect(body.system).toEqual([{ type: 'text', text: 'You are a test.', cache_control: { type: 'ephemeral' } }]);
      expect(body.max_tokens).toBe(500);
      expect(body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(body.messages[1].content).toContainEqual({ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } });
      expect(body.messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny, 21C', cache_control: { type: 'ephemeral' } });
      expect(body.tools[0]).toMatchObject({ name: 'get_weather', input_schema: { type: 'object' } });
      // This SDK version sends the key as a bearer token; older ones used x-api-key.
      const h = fake().requests[0].headers;
      expect(String(h['x-api-key'] ?? h.authorization)).toContain('sk-ant-test-000000');
    } else {
      expect(body.messages[0]).toEqual({ role: 'system', content: 'You are a test.' });
      expect(body.messages[2]).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }] });
      expect(body.messages[3]).toEqual({ role: 'tool', content: 'sunny, 21C', tool_name: 'get_weather' });
      expect(body.options).toEqual({ num_predict: 500 });
    }
  });

  it('streams reasoning as reasoningStart / Delta / End before the answer', async () => {
    fake().script([{ reasoning: 'Think first.', signature: 'sig-1' }, { text: 'Answer.' }]);
    const events = await run(make(), { reasoning: true });
    const kinds = events.map((e) => e.type);
    expect(kinds.indexOf('reasoningStart')).toBeLessThan(kinds.indexOf('reasoningEnd'));
    expect(kinds.indexOf('reasoningEnd')).toBeLessThan(kinds.indexOf('text'));
    expect(
      events
        .filter((e) => e.type === 'reasoningDelta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('Think first.');
    expect(textOf(events)).toBe('Answer.');
  });

  it('maps an HTTP error to an LlmError with the status and the provider message', async () => {
    fake().script({
      status: 400,
      body:
        name === 'anthropic'
          ? { type: 'error', error: { type: 'invalid_request_error', message: 'bad things' } }
          : name === 'ollama'
            ? { error: 'bad things' }
            : { error: { message: 'bad things', type: 'invalid_request_error' } },
    });
    const err = await run(make()).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', status: 400, retryable: false });
    expect((err as Error).message).toContain('400');
    expect((err as Error).message).toContain('bad things');
    expect((err as Error).message).not.toContain('sk-');
  });
});

describe('openai-chat reasoning', () => {
  const client = (): OpenAiChatClient => new OpenAiChatClient({ url: `${fake().url}/v1` });

  it('turns <think> tags split across chunks into reasoning and removes them from the text', async () => {
    fake().script([{ text: '<th' }, { text: 'ink>I should ' }, { text: 'greet.</thi' }, { text: 'nk>\n\nHi' }, { text: ' there <' }, { text: 'b>' }]);
    const events = await run(client());
    const types = events.map((e) => e.type);
    expect(textOf(events)).toBe('Hi there <b>');
    expect(
      events
        .filter((e) => e.type === 'reasoningDelta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('I should greet.');
    expect(types.filter((t) => t === 'reasoningStart')).toHaveLength(1);
    expect(types.indexOf('reasoningEnd')).toBeLessThan(types.indexOf('text'));
  });

  it('reads reasoning_content deltas', async () => {
    fake().script([{ reasoning: 'pondering' }, { text: 'done' }]);
    const events = await run(client());
    expect(
      events
        .filter((e) => e.type === 'reasoningDelta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('pondering');
    expect(textOf(events)).toBe('done');
  });

  it('turns an error chunk mid-stream into a retryable LlmError', async () => {
    fake().onRequest = () => [{ text: 'partial' }, { streamError: { message: 'upstream died', type: 'server_error' } }];
    const err = await run(client()).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: true });
    expect((err as Error).message).toContain('upstream died');
  });
});

describe('unreachable servers', () => {
  /** A loopback port nothing listens on: bound once to learn it is free, then closed. */
  let refused = 0;
  beforeAll(async () => {
    const s = createNetServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    refused = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
  });

  it.each([
    ['openai-chat', (port: number) => new OpenAiChatClient({ url: `http://127.0.0.1:${port}/v1` })],
    ['openai-responses', (port: number) => new OpenAiResponsesClient({ url: `http://127.0.0.1:${port}/v1` })],
    ['anthropic', (port: number) => new AnthropicClient({ url: `http://127.0.0.1:${port}`, key: 'k' })],
    ['ollama', (port: number) => new OllamaClient({ url: `http://127.0.0.1:${port}` })],
  ] as Array<[string, (port: number) => LlmClient]>)('%s: connection refused is a non-retryable LlmError naming the url and the cause', async (_n, make) => {
    const err = await run(make(refused)).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: false, status: undefined });
    expect((err as Error).message).toMatch(new RegExp(`^Could not reach http://127\\.0\\.0\\.1:${refused}(/v1)? \\(connection refused\\)\\. Check the provider's url`));
  });

  it('a port fetch blocks (1, 9…) is named as such, not retried', async () => {
    const err = await run(new OpenAiChatClient({ url: 'http://127.0.0.1:9/v1' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: false });
    expect((err as Error).message).toMatch(/^Could not reach http:\/\/127\.0\.0\.1:9\/v1 \(fetch refuses to connect to this port\)/);
  });

  it('an unknown host is not retried either; the query string of the url is not shown', async () => {
    const err = await run(new OpenAiChatClient({ url: 'https://no-such-host.invalid/v1?key=secret-in-query' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: false });
    expect((err as Error).message).toMatch(/^Could not reach https:\/\/no-such-host\.invalid\/v1\?… \((host not found|DNS lookup failed)/);
    expect((err as Error).message).not.toContain('secret-in-query');
  });

  it('a connection reset stays retryable', async () => {
    const s = createNetServer((sock) => sock.destroy());
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    try {
      const err = await run(new OpenAiChatClient({ url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1` })).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'LlmError', retryable: true });
    } finally {
      await new Promise((r) => s.close(r));
    }
  });
});

describe('anthropic thinking', () => {
  it('ends reasoning with the signature and replays the thinking block verbatim next turn', async () => {
    const client = new AnthropicClient({ url: fake().url, key: 'sk-ant-test-000000' });
    fake().script([{ reasoning: 'Let me think about Paris.', signature: 'EqQBCgIYAhIMsig==' }, { toolCall: { id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } } }]);
    const first = await run(client, { reasoning: true, tools: [weatherTool], maxOutputTokens: 4096 });
    const end = first.find((e) => e.type === 'reasoningEnd');
    expect(end).toMatchObject({ type: 'reasoningEnd', signature: 'EqQBCgIYAhIMsig==' });
    expect(fake().requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(fake().requests[0].body.max_tokens).toBe(4096);

    fake().script([{ text: 'Sunny.' }]);
    const second = await run(client, {
      reasoning: true,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Let me think about Paris.', signature: (end as { signature: string }).signature },
            { type: 'toolCall', id: 'toolu_1', name: 'get_weather', args: { city: 'Paris' } },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', name: 'get_weather', content: 'sunny', error: false },
      ],
    });
    expect(textOf(second)).toBe('Sunny.');
    const replayed = fake().requests[1].body.messages[1];
    expect(replayed.role).toBe('assistant');
    expect(replayed.content[0]).toEqual({ type: 'thinking', thinking: 'Let me think about Paris.', signature: 'EqQBCgIYAhIMsig==' });
    expect(replayed.content[1]).toMatchObject({ type: 'tool_use', id: 'toolu_1' });
  });

  it('replays redacted thinking and marks tool errors', async () => {
    const client = new AnthropicClient({ url: fake().url, key: 'k' });
    await run(client, {
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: '', redacted: 'opaque==' },
            { type: 'toolCall', id: 't1', name: 'x', args: {} },
          ],
        },
        { role: 'tool', toolCallId: 't1', name: 'x', content: 'boom', error: true },
        { role: 'user', content: 'and now?' },
      ],
    });
    const msgs = fake().requests[0].body.messages;
    expect(msgs[1].content[0]).toEqual({ type: 'redacted_thinking', data: 'opaque==' });
    // tool result and the next user text merge into one user turn, tool_result first
    expect(msgs).toHaveLength(3);
    expect(msgs[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true },
      // The last user turn carries the rolling cache breakpoint.
      { type: 'text', text: 'and now?', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('treats an in-stream overloaded_error as retryable', async () => {
    const client = new AnthropicClient({ url: fake().url, key: 'k' });
    fake().script([{ streamError: { type: 'overloaded_error', message: 'Overloaded' } }]);
    const err = await run(client).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: true });
    expect((err as Error).message).toContain('Overloaded');
  });
});

describe('openai-responses reasoning', () => {
  it('streams the reasoning summary and returns item id + encrypted content, replayed next turn', async () => {
    const client = new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'sk-x-000000' });
    fake().script([{ reasoning: 'Summary of thoughts.', signature: 'gAAAAencrypted' }, { text: 'Answer' }, { usage: { input: 50, output: 20 } }]);
    const events = await run(client, { reasoning: true });
    const body = fake().requests[0].body;
    expect(body.reasoning).toEqual({ summary: 'auto' });
    expect(body.include).toEqual(['reasoning.encrypted_content']);
    expect(body.store).toBe(false);
    const start = events.find((e) => e.type === 'reasoningStart') as { id: string };
    expect(start.id).toMatch(/^rs_/);
    expect(
      events
        .filter((e) => e.type === 'reasoningDelta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('Summary of thoughts.');
    const end = events.find((e) => e.type === 'reasoningEnd') as Extract<LlmEvent, { type: 'reasoningEnd' }>;
    expect(end).toMatchObject({ id: start.id, itemId: start.id, encrypted: 'gAAAAencrypted' });
    expect(events.find((e) => e.type === 'usage')).toMatchObject({ inputTokens: 50, outputTokens: 20 });

    await run(client, {
      reasoning: true,
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Summary of thoughts.', itemId: end.itemId, encrypted: end.encrypted },
            { type: 'text', text: 'Answer' },
          ],
        },
        { role: 'user', content: 'more' },
      ],
    });
    const input = fake().requests[1].body.input;
    expect(input[1]).toEqual({ type: 'reasoning', id: start.id, encrypted_content: 'gAAAAencrypted', summary: [{ type: 'summary_text', text: 'Summary of thoughts.' }] });
    expect(input[2]).toEqual({ type: 'message', role: 'assistant', content: 'Answer' });
  });

  it('turns an in-stream error event into an LlmError', async () => {
    const client = new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'k' });
    fake().script([{ text: 'x' }, { streamError: { type: 'server_error', message: 'The server had an error' } }]);
    const err = await run(client).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: true });
    expect((err as Error).message).toContain('The server had an error');
  });
});

describe('ollama', () => {
  it('reads the thinking field and sends think: true when reasoning', async () => {
    fake().script([{ reasoning: 'hmm' }, { text: 'ok!' }]);
    const events = await run(new OllamaClient({ url: fake().url }), { reasoning: true });
    expect(fake().requests[0].body.think).toBe(true);
    expect(
      events
        .filter((e) => e.type === 'reasoningDelta')
        .map((e) => (e as { text: string }).text)
        .join(''),
    ).toBe('hmm');
    expect(textOf(events)).toBe('ok!');
  });
});

/**
 * Cache-stable prompts (issue 18, point 7): where the Anthropic adapter puts its cache_control
 * breakpoints, the OpenAI prompt-cache key, cached tokens read into usage, the `cacheRetention`
 * setting, and tools offered in a stable order. The adapters run against the fake LLM server,
 * whose prompt cache (test/fixtures/fake-llm-cache.ts) reports reads the way the providers do.
 */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { cacheMarker, MAX_BREAKPOINTS } from '../../src/peers/llm/anthropic-cache.js';
import { resolveModels } from '../../src/peers/llm/models.js';
import { promptCacheKey } from '../../src/peers/llm/openai-cache.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import { systemPrompt } from '../../src/core/turn/system-prompt.js';
import { ToolRegistry } from '../../src/core/tool-calls/tool-registry.js';
import type { LlmEvent, LlmMessage, LlmRequest } from '../../src/shapes/llm.js';
import type { Tool } from '../../src/shapes/tool.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { anthropicMarkers, FakePromptCache } from '../fixtures/fake-llm-cache.js';
import { run, weatherTool } from './llm-helpers.js';

const fake = useFakeLlm();

/** Every block of a request body that carries a breakpoint, named by where it sits. */
function breakpoints(body: any): string[] {
  const out: string[] = [];
  (body.tools ?? []).forEach((t: any, i: number) => t.cache_control && out.push(`tool ${i}`));
  if (Array.isArray(body.system)) body.system.forEach((b: any, i: number) => b.cache_control && out.push(`system ${i}`));
  body.messages.forEach((m: any, i: number) => {
    if (Array.isArray(m.content)) m.content.forEach((b: any, j: number) => b.cache_control && out.push(`message ${i}.${j} ${m.role}`));
  });
  return out;
}

/** A tool loop three steps in: user, then (assistant call, tool result) twice. */
const loop: LlmMessage[] = [
  { role: 'user', content: 'weather in Paris and Rome?' },
  { role: 'assistant', content: [{ type: 'toolCall', id: 'c1', name: 'get_weather', args: { city: 'Paris' } }] },
  { role: 'tool', toolCallId: 'c1', name: 'get_weather', content: 'sunny', error: false },
  { role: 'assistant', content: [{ type: 'toolCall', id: 'c2', name: 'get_weather', args: { city: 'Rome' } }] },
  { role: 'tool', toolCallId: 'c2', name: 'get_weather', content: 'rainy', error: false },
];

const usageOf = (events: LlmEvent[]) => events.find((e): e is Extract<LlmEvent, { type: 'usage' }> => e.type === 'usage');

describe('Anthropic cache breakpoints', () => {
  const anthropic = (): AnthropicClient => new AnthropicClient({ url: fake().url, key: 'k' });
  const tools = [weatherTool, { ...weatherTool, name: 'get_time', description: 'Time in a city' }];

  it('marks the last tool, the stable system part and the last two user turns: four at most', async () => {
    await run(anthropic(), { system: 'STABLE PART\nDYNAMIC PART', systemStableLength: 'STABLE PART\n'.length, tools, messages: loop });
    const body = fake().requests[0].body;
    expect(breakpoints(body)).toEqual(['tool 1', 'system 0', 'message 2.0 user', 'message 4.0 user']);
    expect(breakpoints(body).length).toBeLessThanOrEqual(MAX_BREAKPOINTS);
    // The system prompt is split where the stable part ends; the dynamic rest is not marked.
    expect(body.system).toEqual([
      { type: 'text', text: 'STABLE PART\n', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'DYNAMIC PART' },
    ]);
  });

  it('a first request marks its one user turn; without tools or a dynamic part there is less to mark', async () => {
    await run(anthropic(), { system: 'All stable.', messages: [{ role: 'user', content: 'hi' }] });
    const body = fake().requests[0].body;
    expect(breakpoints(body)).toEqual(['system 0', 'message 0.0 user']);
    expect(body.system).toEqual([{ type: 'text', text: 'All stable.', cache_control: { type: 'ephemeral' } }]);
  });

  it("a payload's top-level cache_control (Anthropic's automatic caching) takes the last user turn's slot: never a fifth marker", async () => {
    // Anthropic's automatic caching marks the request's last block and counts against the four;
    // the fake answers a fifth marker with Anthropic's 400.
    const events = await run(anthropic(), { system: 'STABLE\nDYNAMIC', systemStableLength: 'STABLE\n'.length, tools, messages: loop, payload: { cache_control: { type: 'ephemeral' } } });
    expect(events.find((e) => e.type === 'finish')).toBeDefined();
    const body = fake().requests[0].body;
    expect(body.cache_control).toEqual({ type: 'ephemeral' });
    expect(breakpoints(body)).toEqual(['tool 1', 'system 0', 'message 2.0 user']);
    expect(anthropicMarkers(body)).toBe(MAX_BREAKPOINTS);
  });

  it("the fake's cache is per model, as the providers' are", () => {
    const cache = new FakePromptCache();
    const body = (model: string) => ({ model, system: [{ type: 'text', text: 'x'.repeat(8000), cache_control: { type: 'ephemeral' } }], messages: [{ role: 'user', content: 'hi' }] });
    expect(cache.anthropic(body('a'), 10_000).read).toBe(0);
    expect(cache.anthropic(body('a'), 10_000).read).toBeGreaterThan(1024);
    expect(cache.anthropic(body('b'), 10_000).read).toBe(0);
    const chat = (model: string) => ({ model, prompt_cache_key: 'k', messages: [{ role: 'system', content: 'y'.repeat(8000) }] });
    cache.openAi(chat('a'), 10_000);
    expect(cache.openAi(chat('a'), 10_000).read).toBeGreaterThan(1024);
    expect(cache.openAi(chat('b'), 10_000).read).toBe(0);
  });

  it('the fake refuses a fifth marker as Anthropic does', async () => {
    const res = await fetch(`${fake().url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 10,
        cache_control: { type: 'ephemeral' },
        tools: [{ name: 't', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }],
        system: [{ type: 'text', text: 's', cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'x', content: [{ type: 'text', text: 'r', cache_control: { type: 'ephemeral' } }] },
              { type: 'text', text: 'u', cache_control: { type: 'ephemeral' } },
            ],
          },
        ],
      }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.');
  });

  it('cacheRetention "none" sends no breakpoint and the system prompt as one string', async () => {
    await run(anthropic(), { system: 'S', systemStableLength: 1, tools, messages: loop, cacheRetention: 'none' });
    const body = fake().requests[0].body;
    expect(JSON.stringify(body)).not.toContain('cache_control');
    expect(body.system).toBe('S');
  });

  it('"long" asks for the 1-hour cache on Anthropic\'s own API only (as ECA does)', () => {
    expect(cacheMarker('long', 'https://api.anthropic.com')).toEqual({ type: 'ephemeral', ttl: '1h' });
    expect(cacheMarker('long', 'https://proxy.example.com/anthropic')).toEqual({ type: 'ephemeral' });
    expect(cacheMarker(undefined, 'https://api.anthropic.com')).toEqual({ type: 'ephemeral' });
    expect(cacheMarker('none', 'https://api.anthropic.com')).toBeUndefined();
  });

  it('reports cache reads and writes in usage, input tokens counting them', async () => {
    fake().promptCache.minTokens = 1;
    try {
      const system = `You are a test. ${'Stable instructions. '.repeat(200)}`;
      const first = usageOf(await run(anthropic(), { system, tools, messages: loop.slice(0, 3) }))!;
      expect(first.cacheReadTokens ?? 0).toBe(0);
      expect(first.cacheWriteTokens).toBeGreaterThan(1000);
      // The next step of the loop: the whole previous request is read back, the new step written.
      const second = usageOf(await run(anthropic(), { system, tools, messages: loop }))!;
      expect(second.cacheReadTokens).toBeGreaterThanOrEqual(first.cacheWriteTokens!);
      expect(second.cacheWriteTokens).toBeGreaterThan(0);
      const wire = fake().requests[1];
      expect(second.inputTokens).toBe(Math.ceil(JSON.stringify(wire.body).length / 4));
      expect(second.inputTokens).toBeGreaterThan(second.cacheReadTokens! + second.cacheWriteTokens!);
      // Off: nothing is cached, every token is plain input.
      const off = usageOf(await run(anthropic(), { system, tools, messages: loop, cacheRetention: 'none' }))!;
      expect(off.cacheReadTokens).toBeUndefined();
      expect(off.cacheWriteTokens).toBeUndefined();
    } finally {
      fake().promptCache.minTokens = 1024;
    }
  });
});

describe('OpenAI prompt_cache_key', () => {
  const chat = (url = `${fake().url}/v1`): OpenAiChatClient => new OpenAiChatClient({ url, key: 'k' });
  const responses = (): OpenAiResponsesClient => new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'k' });

  it('is a hash of the chat id: the same for every request of a chat, different between chats, no chat data in it', () => {
    expect(promptCacheKey('chat-1')).toBe(promptCacheKey('chat-1'));
    expect(promptCacheKey('chat-1')).not.toBe(promptCacheKey('chat-2'));
    expect(promptCacheKey('chat-1')).toMatch(/^patchbay-[0-9a-f]{32}$/);
    expect(promptCacheKey('chat-1')).not.toContain('chat-1');
  });

  it('the Responses API gets it on every request of a chat; none without a chat or with cacheRetention "none"', async () => {
    const c = responses();
    await run(c, { chatId: 'chat-a' });
    await run(c, { chatId: 'chat-a', messages: [...loop] });
    await run(c, { chatId: 'chat-b' });
    await run(c, {});
    await run(c, { chatId: 'chat-a', cacheRetention: 'none' });
    const keys = fake().requests.map((r) => r.body.prompt_cache_key);
    expect(keys).toEqual([promptCacheKey('chat-a'), promptCacheKey('chat-a'), promptCacheKey('chat-b'), undefined, undefined]);
  });

  it('chat completions: an OpenAI-compatible server gets it only when the config names cacheRetention', async () => {
    await run(chat(), { chatId: 'chat-a' });
    await run(chat(), { chatId: 'chat-a', cacheRetention: 'short' });
    expect(fake().requests.map((r) => r.body.prompt_cache_key)).toEqual([undefined, promptCacheKey('chat-a')]);
  });

  it.each([
    ['openai-chat', () => chat()],
    ['openai-responses', () => responses()],
  ])('%s reads cached_tokens into cacheReadTokens; input tokens count them', async (_name, make) => {
    fake().promptCache.minTokens = 1;
    try {
      const req: Partial<LlmRequest> = { chatId: 'chat-c', cacheRetention: 'short', system: `Sys ${'stable '.repeat(2000)}`, messages: loop };
      const first = usageOf(await run(make(), req))!;
      expect(first.cacheReadTokens).toBeUndefined();
      const second = usageOf(await run(make(), req))!;
      expect(second.cacheReadTokens).toBeGreaterThanOrEqual(2000);
      // OpenAI counts cached tokens inside prompt/input tokens.
      expect(second.inputTokens).toBe(first.inputTokens);
      expect(second.inputTokens).toBeGreaterThanOrEqual(second.cacheReadTokens!);
    } finally {
      fake().promptCache.minTokens = 1024;
    }
  });
});

describe('cacheRetention in the config', () => {
  it("a model takes its own, else its provider's", async () => {
    const models = await resolveModels({ providers: { p: { api: 'anthropic', url: 'http://127.0.0.1:9', key: 'k', cacheRetention: 'none', models: { a: {}, b: { cacheRetention: 'long' } } } } }, {});
    const of = (id: string) => models.find((m) => m.id === id)?.cacheRetention;
    expect([of('p/a'), of('p/b')]).toEqual(['none', 'long']);
  });
});

describe('tools in a stable order', () => {
  const tool = (server: string, name: string): Tool => ({
    name,
    server,
    origin: server === 'patchbay' ? 'native' : 'mcp',
    description: name,
    inputSchema: { type: 'object' },
    readOnly: true,
    mutates: false,
    call: () => Promise.resolve({ outputs: [], error: false }),
  });
  const names = (r: ToolRegistry, chatId?: string) => r.visible({ agent: 'code', approval: {}, disabled: [], chatId }).map((t) => `${t.server}__${t.name}`);

  it('sources keep the order they came in, each sorted by name; a server starting later is appended', () => {
    const r = new ToolRegistry();
    r.set('native', [tool('patchbay', 'read_file'), tool('patchbay', 'grep')]);
    r.set('mcp:zeta', [tool('zeta', 'b'), tool('zeta', 'a')]);
    const before = names(r);
    expect(before).toEqual(['patchbay__grep', 'patchbay__read_file', 'zeta__a', 'zeta__b']);
    r.set('mcp:alpha', [tool('alpha', 'y'), tool('alpha', 'x')]);
    expect(names(r)).toEqual([...before, 'alpha__x', 'alpha__y']);
    // A server listing its tools again in another order changes nothing.
    r.set('mcp:zeta', [tool('zeta', 'a'), tool('zeta', 'b')]);
    expect(names(r)).toEqual([...before, 'alpha__x', 'alpha__y']);
    // A chat's own tools come after the global ones.
    r.setForChat('c1', 'provider:p', [tool('p', 'z'), tool('p', 'k')]);
    expect(names(r, 'c1')).toEqual([...before, 'alpha__x', 'alpha__y', 'p__k', 'p__z']);
  });
});

describe('the stable system prompt prefix', () => {
  it('is the same bytes whatever the dynamic sections say, and ends where they begin', () => {
    const tools = [
      { server: 'patchbay', name: 'grep' },
      { server: 'patchbay', name: 'read_file' },
    ] as Tool[];
    const make = (dynamic: string) =>
      systemPrompt({
        agent: 'code',
        roots: ['/w'],
        tools,
        extra: 'House style.',
        sections: [
          { id: 'rule:a', text: 'Rule A.', stable: true },
          { id: 'hook', text: dynamic, stable: false },
        ],
      });
    const a = make('Files in play: a.ts');
    const b = make('Files in play: a.ts, b.ts');
    expect(a.text.slice(0, a.stableLength)).toBe(b.text.slice(0, b.stableLength));
    expect(a.text.slice(0, a.stableLength)).toContain('Rule A.');
    expect(a.text.slice(0, a.stableLength)).toContain('patchbay__grep, patchbay__read_file');
    expect(a.text.slice(a.stableLength)).toContain('Files in play: a.ts');
  });
});

/**
 * The credential each adapter sends, asked per request (AdapterOptions.auth): a login refreshed
 * while a client (and a turn holding it) lives is used by its next request, and an OAuth access
 * token for an Anthropic-API provider goes out as `Authorization: Bearer`, not `x-api-key`
 * (which the API refuses for OAuth tokens: ECA's llm_providers/anthropic.clj sends OAuth tokens
 * as a bearer token). Against the fake LLM server, which records the headers it got.
 */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import type { AdapterAuth } from '../../src/peers/llm/stream-util.js';
import type { LlmClient } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { run } from './llm-helpers.js';

const fake = useFakeLlm();

describe('the Anthropic adapter and OAuth tokens', () => {
  // ECA llm_providers/anthropic.clj (the request headers): OAuth → Authorization: Bearer + anthropic-beta oauth-2025-04-20.
  it('an OAuth token is sent as Authorization: Bearer with the OAuth beta and no x-api-key; an API key without the beta', async () => {
    let auth: AdapterAuth = { key: 'oauth-access-token-0123456789', bearer: true };
    const client = new AnthropicClient({ url: fake().url, auth: () => auth });
    fake().script([{ text: 'hi' }]);
    await run(client);
    expect(fake().requests[0].headers.authorization).toBe('Bearer oauth-access-token-0123456789');
    expect(fake().requests[0].headers['x-api-key']).toBeUndefined();
    expect(fake().requests[0].headers['anthropic-beta']).toBe('oauth-2025-04-20');
    auth = { key: 'sk-ant-api-key-0123456789' };
    fake().script([{ text: 'hi' }]);
    await run(client);
    // This SDK version sends API keys as a bearer token too (older ones used x-api-key).
    const h = fake().requests.at(-1)!.headers;
    expect(String(h['x-api-key'] ?? h.authorization)).toContain('sk-ant-api-key-0123456789');
    expect(h['anthropic-beta']).toBeUndefined();
  });
});

const adapters: Array<{ name: string; make: (auth: () => AdapterAuth) => LlmClient; sent: (h: Record<string, unknown>) => unknown }> = [
  { name: 'openai-chat', make: (auth) => new OpenAiChatClient({ url: `${fake().url}/v1`, auth }), sent: (h) => h.authorization },
  { name: 'openai-responses', make: (auth) => new OpenAiResponsesClient({ url: `${fake().url}/v1`, auth }), sent: (h) => h.authorization },
  { name: 'anthropic', make: (auth) => new AnthropicClient({ url: fake().url, auth }), sent: (h) => h.authorization },
  { name: 'ollama', make: (auth) => new OllamaClient({ url: fake().url, auth }), sent: (h) => h.authorization },
];

describe.each(adapters)('$name adapter', ({ make, sent }) => {
  it('reads the key before each request: one client, a refreshed token on its next request', async () => {
    let key = 'first-token-0123456789';
    const client = make(() => ({ key, bearer: true }));
    const seen: unknown[] = [];
    for (const next of ['refreshed-token-0123456789', '']) {
      fake().script([{ text: 'hi' }]);
      await run(client);
      seen.push(sent(fake().requests.at(-1)!.headers));
      key = next;
    }
    expect(seen).toEqual(['Bearer first-token-0123456789', 'Bearer refreshed-token-0123456789']);
  });
});

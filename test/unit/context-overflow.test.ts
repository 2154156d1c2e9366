/**
 * Context-overflow errors as each provider really sends them (the fake server's `contextLimit`
 * answers in each wire format), classified by the LLM layer as `kind: 'contextOverflow'`
 * (ECA llm_providers/errors.clj `classify-error` names the same cases `:context-overflow`).
 */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { errorKind, httpError } from '../../src/peers/llm/errors.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import type { LlmClient } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { run } from './llm-helpers.js';

const fake = useFakeLlm();

const adapters: Array<{ name: string; make: () => LlmClient }> = [
  { name: 'openai-chat', make: () => new OpenAiChatClient({ url: `${fake().url}/v1`, key: 'sk-test-chat-000000' }) },
  { name: 'openai-responses', make: () => new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'sk-test-resp-000000' }) },
  { name: 'anthropic', make: () => new AnthropicClient({ url: fake().url, key: 'sk-ant-test-000000' }) },
  { name: 'ollama', make: () => new OllamaClient({ url: fake().url }) },
];

describe.each(adapters)('$name: a request over the context window', ({ make }) => {
  it('is an LlmError of kind contextOverflow, not retried', async () => {
    fake().contextLimit = 10;
    const err = await run(make()).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', status: 400, retryable: false, kind: 'contextOverflow' });
    expect(fake().overflows).toBe(1);
  });

  it('fits when under the limit, and another 400 has no kind', async () => {
    fake().contextLimit = 1_000_000;
    await expect(run(make())).resolves.toBeDefined();
    fake().script({ status: 400 });
    const err = await run(make()).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', status: 400 });
    expect((err as { kind?: string }).kind).toBeUndefined();
  });
});

describe('overflow inside the stream', () => {
  it('is classified for an SSE provider (Anthropic `event: error`)', async () => {
    fake().script([{ streamError: { message: 'prompt is too long: 210000 tokens > 200000 maximum', type: 'invalid_request_error' } }]);
    const err = await run(new AnthropicClient({ url: fake().url, key: 'sk-ant-test-000000' })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', retryable: false, kind: 'contextOverflow' });
  });

  it('is classified for Ollama (an `error` line)', async () => {
    fake().script([{ streamError: { message: 'input length exceeds the maximum context length' } }]);
    const err = await run(new OllamaClient({ url: fake().url })).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'LlmError', kind: 'contextOverflow' });
  });
});

describe('errorKind', () => {
  it("reads the providers' wordings", () => {
    for (const m of [
      'prompt is too long: 210000 tokens > 200000 maximum',
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
      'context_length_exceeded',
      'the request exceeds the available context size, try increasing it',
      'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
    ])
      expect(errorKind(400, m), m).toBe('contextOverflow');
    expect(errorKind(413, 'Request Entity Too Large')).toBe('contextOverflow');
    expect(errorKind(undefined, 'prompt is too long')).toBe('contextOverflow');
  });

  it('keeps rate limits, auth failures and other errors apart', () => {
    expect(errorKind(429, 'Request too large: too many tokens per minute')).toBeUndefined();
    expect(errorKind(401, 'prompt is too long')).toBeUndefined();
    expect(errorKind(400, 'messages.0.content: field required')).toBeUndefined();
    expect(httpError('x', 400, new Headers(), '{"error":{"message":"bad"}}').kind).toBeUndefined();
  });
});

/**
 * Tool-result images on each wire API, through the real adapters against the fake server: two
 * parallel tool calls, one returning an image. Anthropic takes the image inside its tool_result
 * (eca anthropic.clj `normalize-messages`); the others keep the tool text and send the image in a
 * user message after the whole run of tool results (eca openai_chat.clj / openai.clj
 * `tool_call_output`): a message between two tool results would leave a tool call unanswered.
 */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import type { LlmMessage } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { run } from './llm-helpers.js';

const fake = useFakeLlm();
const IMG = { mediaType: 'image/png', base64: 'iVBORw0KGgo=' };

const history: LlmMessage[] = [
  { role: 'user', content: 'shoot both' },
  {
    role: 'assistant',
    content: [
      { type: 'toolCall', id: 'c1', name: 'cam__shot', args: {} },
      { type: 'toolCall', id: 'c2', name: 'cam__info', args: {} },
    ],
  },
  { role: 'tool', toolCallId: 'c1', name: 'cam__shot', content: 'a screenshot', error: false, images: [IMG] },
  { role: 'tool', toolCallId: 'c2', name: 'cam__info', content: '800x600', error: false },
];

async function bodyOf(client: OpenAiChatClient | OpenAiResponsesClient | AnthropicClient | OllamaClient): Promise<any> {
  fake().script([{ text: 'ok' }]);
  await run(client, { messages: history });
  return fake().requests.at(-1)!.body;
}

describe('tool-result images per wire API', () => {
  it('openai-chat: both tool messages, then one user message with the text and the image_url', async () => {
    const body = await bodyOf(new OpenAiChatClient({ url: `${fake().url}/v1`, key: 'sk-test' }));
    const roles = body.messages.map((m: any) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
    expect(body.messages[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'a screenshot' });
    expect(body.messages[5].content).toEqual([
      { type: 'text', text: 'The image output of cam__shot (tool results cannot carry images here):' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
  });

  it('openai-responses: both function_call_outputs, then a user message with input_image', async () => {
    const body = await bodyOf(new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'sk-test' }));
    const kinds = body.input.map((i: any) => (i.type === 'message' ? `message:${i.role}` : i.type));
    expect(kinds).toEqual(['message:user', 'function_call', 'function_call', 'function_call_output', 'function_call_output', 'message:user']);
    expect(body.input[5].content[1]).toEqual({ type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' });
  });

  it('anthropic: the image inside its tool_result, beside the text; the other result stays a string', async () => {
    const body = await bodyOf(new AnthropicClient({ url: fake().url, key: 'sk-ant-test' }));
    const results = body.messages.at(-1).content;
    expect(results).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'c1',
        content: [
          { type: 'text', text: 'a screenshot' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      // The last block of the last user turn carries the rolling prompt-cache breakpoint (anthropic-cache.ts).
      { type: 'tool_result', tool_use_id: 'c2', content: '800x600', cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('ollama: both tool messages, then a user message with images', async () => {
    const body = await bodyOf(new OllamaClient({ url: fake().url }));
    expect(body.messages.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'user']);
    expect(body.messages[5].images).toEqual(['iVBORw0KGgo=']);
    expect(body.messages[3].images).toBeUndefined();
  });
});

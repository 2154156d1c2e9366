/**
 * Which images each request carries (src/peers/llm/image-limits.ts), in request bodies built by
 * the real adapters against the fake server: an image over the API's per-image limit and any
 * older than the last 8 become a text placeholder in their message, for that request only.
 * Limits: Anthropic refuses an image whose base64 is over 5 MB (docs.claude.com "Vision");
 * OpenAI takes up to 20 MB per image and 50 MB of images per request (platform.openai.com
 * "Images and vision"); Ollama sets none.
 */
import { describe, expect, it } from 'vitest';
import { AnthropicClient } from '../../src/peers/llm/anthropic.js';
import { fitImages, KEEP_LAST_IMAGES } from '../../src/peers/llm/image-limits.js';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { OpenAiResponsesClient } from '../../src/peers/llm/openai-responses.js';
import type { LlmClient, LlmImage, LlmMessage } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { run } from './llm-helpers.js';

const fake = useFakeLlm();
const MB = 1024 * 1024;

/** A png of `bytes` bytes (all zero: the fake server does not decode it). */
const png = (bytes: number): LlmImage => ({ mediaType: 'image/png', base64: Buffer.alloc(bytes).toString('base64') });
/** A small png whose first byte says which it is, to tell images apart in a body. */
const tagged = (n: number): LlmImage => ({ mediaType: 'image/png', base64: Buffer.from([n, 0, 0]).toString('base64') });

async function bodyOf(client: LlmClient, messages: LlmMessage[]): Promise<any> {
  fake().script([{ text: 'ok' }]);
  await run(client, { messages });
  return fake().requests.at(-1)!.body;
}

const clients = {
  'openai-chat': () => new OpenAiChatClient({ url: `${fake().url}/v1`, key: 'sk-test' }),
  'openai-responses': () => new OpenAiResponsesClient({ url: `${fake().url}/v1`, key: 'sk-test' }),
  anthropic: () => new AnthropicClient({ url: fake().url, key: 'sk-ant-test' }),
  ollama: () => new OllamaClient({ url: fake().url }),
};

/** The image data and the text of a body, whatever the API's shape. */
function imagesIn(body: any): string[] {
  const found: string[] = [];
  JSON.stringify(body, (k, v) => {
    if (k === 'url' && typeof v === 'string' && v.startsWith('data:')) found.push(v.slice(v.indexOf(',') + 1));
    else if (k === 'image_url' && typeof v === 'string') found.push(v.slice(v.indexOf(',') + 1));
    else if (k === 'data' && typeof v === 'string') found.push(v);
    else if (k === 'images' && Array.isArray(v)) found.push(...v);
    return v;
  });
  return found;
}
const textIn = (body: any): string => JSON.stringify(body);

/** Ten screenshots, one per step of a tool loop, and a last question. */
function screenshotSession(): LlmMessage[] {
  const out: LlmMessage[] = [{ role: 'user', content: 'watch the screen', images: [tagged(0)] }];
  for (let i = 1; i <= 9; i++) {
    out.push({ role: 'assistant', content: [{ type: 'toolCall', id: `c${i}`, name: 'cam__shot', args: {} }] });
    out.push({ role: 'tool', toolCallId: `c${i}`, name: 'cam__shot', content: `shot ${i}`, error: false, images: [tagged(i)] });
  }
  out.push({ role: 'user', content: 'what changed?' });
  return out;
}

describe('the last 8 images of the history, per API', () => {
  it.each(Object.keys(clients) as Array<keyof typeof clients>)('%s: only the 8 newest images go; the 2 oldest are placeholders', async (api) => {
    const body = await bodyOf(clients[api](), screenshotSession());
    const sent = imagesIn(body);
    expect(sent).toEqual([2, 3, 4, 5, 6, 7, 8, 9].map((n) => tagged(n).base64));
    const text = textIn(body);
    expect(text.match(/omitted: older than the last 8/g)).toHaveLength(2);
    expect(text).toContain('watch the screen\\n\\n[image (image/png, 3 bytes) omitted: older than the last 8]');
    expect(text).toContain('shot 1\\n\\n[image (image/png, 3 bytes) omitted: older than the last 8]');
  });
});

describe('the per-image size limit, per API', () => {
  // 4 MB of bytes is 5.3 MB of base64: over Anthropic's limit, well within OpenAI's and Ollama's.
  const history = (): LlmMessage[] => [
    { role: 'user', content: 'look', images: [png(4 * MB), tagged(1)] },
    { role: 'assistant', content: [{ type: 'text', text: 'seen' }] },
    { role: 'user', content: 'and now?' },
  ];

  it('anthropic: the image over 5 MB of base64 is a placeholder saying why; the small one goes', async () => {
    const body = await bodyOf(clients.anthropic(), history());
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: "look\n\n[image (image/png, 4 MB) omitted: over the Anthropic API's limit of 5 MB per image (as base64)]" },
      // The last block of a user turn carries a prompt-cache breakpoint (anthropic-cache.ts).
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: tagged(1).base64 }, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it.each(['openai-chat', 'openai-responses', 'ollama'] as const)('%s: the same image is within its limit and goes', async (api) => {
    const body = await bodyOf(clients[api](), history());
    expect(imagesIn(body)).toEqual([png(4 * MB).base64, tagged(1).base64]);
    expect(textIn(body)).not.toContain('omitted');
  });

  it('openai-chat: an image over 20 MB is a placeholder', async () => {
    const body = await bodyOf(clients['openai-chat'](), [{ role: 'user', content: 'look', images: [png(21 * MB)] }]);
    expect(imagesIn(body)).toEqual([]);
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: "look\n\n[image (image/png, 21 MB) omitted: over the OpenAI API's limit of 20 MB per image]" });
  });
});

describe('fitImages', () => {
  it('keeps newer images first within the per-request budget, and changes nothing it was given', () => {
    const messages: LlmMessage[] = [
      { role: 'user', content: '', images: [png(3 * MB)] },
      { role: 'tool', toolCallId: 'c', name: 't', content: 'x', error: false, images: [png(3 * MB), tagged(1)] },
    ];
    const copy = structuredClone(messages);
    const out = fitImages(messages, { api: 'Test', measure: 'bytes', perRequest: 4 * MB });
    expect(messages).toEqual(copy);
    expect(out[0]).toEqual({ role: 'user', content: "[image (image/png, 3 MB) omitted: the newer images already fill the Test API's 4 MB per request]" });
    expect(out[1]).toMatchObject({ content: 'x', images: [png(3 * MB), tagged(1)] });
  });

  it('returns the very messages when every image fits', () => {
    const messages: LlmMessage[] = Array.from({ length: KEEP_LAST_IMAGES }, (_, i) => ({ role: 'user', content: `${i}`, images: [tagged(i)] }));
    expect(fitImages(messages, { api: 'Test', measure: 'bytes' })).toBe(messages);
  });
});

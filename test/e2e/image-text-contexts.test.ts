/**
 * Image and text contexts, and images in tool results, through the built server over stdio, with
 * the request bodies each wire API really gets from the fake LLM server.
 *
 * Follows ECA docs/protocol.md `ImageContext`, `TextContext`, `ChatImageContent`; eca
 * `src/eca/features/context.clj` `raw-contexts->refined` and `file->refined-context` (an image
 * file is an image context); `src/eca/features/chat.clj` `prompt-messages!` (images and text
 * contexts ride with the user message); the providers' `normalize-messages`
 * (`llm_providers/openai_chat.clj`, `openai.clj`, `anthropic.clj`: image parts, tool images);
 * `src/eca/features/chat/tool_calls.clj` `:send-toolCalled` (text outputs, then one
 * `ChatImageContent` per image); chat.clj `messages->client` (replayed user images).
 */
import { describe, expect, it } from 'vitest';
import { truncateSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ECA, EcaProc, fakeProviderConfig, tempDir as newTempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

// First, so its removal runs after every process is stopped.
const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const tempDir = () => scratch(newTempDir());
const EVERYTHING = resolve(import.meta.dirname, '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** Different bytes for the image file, so the two images can be told apart. */
const FILE_BYTES = Buffer.from('GIF89a-not-really-but-bytes');
const FILE_B64 = FILE_BYTES.toString('base64');

type Api = 'openai-chat' | 'openai-responses' | 'anthropic' | 'ollama';

function config(api: Api, vision: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const c = fakeProviderConfig(llm().url, api, extra) as { providers: { fake: { models: { m1: Record<string, unknown> } } } };
  if (vision) c.providers.fake.models.m1.imageInput = true;
  return c;
}

async function boot(cfg: Record<string, unknown>, home = tempDir(), root = workspaceWithImage()): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: cfg }));
  await p.initialize(root);
  return p;
}

function workspaceWithImage(): string {
  const root = scratch(workspace({ 'a.txt': 'a' }));
  writeFileSync(join(root, 'shot.gif'), FILE_BYTES);
  return root;
}

const CONTEXTS = [
  { type: 'image', mediaType: 'image/png', base64: PNG },
  { type: 'text', label: '*compilation*', content: 'error: missing semicolon at 3:14' },
  { type: 'file', path: 'shot.gif' },
];

async function prompt(p: EcaProc, params: Record<string, unknown>, nth = 1): Promise<string> {
  const res = await p.request(ECA.chatPrompt, params);
  expect(res.error).toBeUndefined();
  const chatId = res.result.chatId as string;
  await p.turnDone(chatId, nth);
  return chatId;
}

const systemTexts = (p: EcaProc, chatId: string) =>
  p
    .contents(chatId)
    .filter((c) => c.role === 'system' && c.content.type === 'text')
    .map((c) => c.content.text as string);

/** The last user message of a request body, per wire API. */
function lastUser(api: Api, body: any): any {
  const list = api === 'openai-responses' ? body.input : body.messages;
  return [...list].reverse().find((m: any) => m.role === 'user');
}

describe('image and text contexts reach the model with the user message', () => {
  it('openai-chat: text plus image_url parts (inline image, then the image file); the text context with its label', async () => {
    const p = await boot(config('openai-chat', true));
    llm().script([{ text: 'seen' }]);
    await prompt(p, { message: 'what is wrong?', contexts: CONTEXTS });
    const body = llm().requests[0].body;
    const user = lastUser('openai-chat', body);
    expect(user.content).toEqual([
      { type: 'text', text: expect.stringContaining('what is wrong?') },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: `data:image/gif;base64,${FILE_B64}` } },
    ]);
    expect(user.content[0].text).toMatch(/<text label="\*compilation\*">\nerror: missing semicolon at 3:14\n<\/text>/);
    // Delivered with the user message, never in the system prompt (docs/protocol.md TextContext).
    expect(body.messages[0].role).toBe('system');
    expect(body.messages[0].content).not.toContain('missing semicolon');
  });

  it('openai-responses: input_text plus input_image parts', async () => {
    const p = await boot(config('openai-responses', true));
    llm().script([{ text: 'seen' }]);
    await prompt(p, { message: 'look', contexts: CONTEXTS });
    const user = lastUser('openai-responses', llm().requests[0].body);
    expect(user.content).toEqual([
      { type: 'input_text', text: expect.stringMatching(/^look[\s\S]*<text label="\*compilation\*">/) },
      { type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto' },
      { type: 'input_image', image_url: `data:image/gif;base64,${FILE_B64}`, detail: 'auto' },
    ]);
  });

  it('anthropic: text plus base64 image blocks', async () => {
    const p = await boot(config('anthropic', true));
    llm().script([{ text: 'seen' }]);
    await prompt(p, { message: 'look', contexts: CONTEXTS });
    const user = lastUser('anthropic', llm().requests[0].body);
    expect(user.content).toEqual([
      { type: 'text', text: expect.stringMatching(/^look[\s\S]*<text label="\*compilation\*">/) },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      // The last block of the user turn carries the prompt-cache breakpoint (peers/llm/anthropic-cache.ts).
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: FILE_B64 }, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('ollama: the message images field', async () => {
    const p = await boot(config('ollama', true));
    llm().script([{ text: 'seen' }]);
    await prompt(p, { message: 'look', contexts: CONTEXTS });
    const user = lastUser('ollama', llm().requests[0].body);
    expect(user.images).toEqual([PNG, FILE_B64]);
    expect(user.content).toMatch(/<text label="\*compilation\*">/);
  });

  it('a model without image input gets no image, the user is told why, and the turn still runs', async () => {
    const p = await boot(config('openai-chat', false));
    llm().script([{ text: 'text only' }]);
    const chatId = await prompt(p, { message: 'look', contexts: CONTEXTS });
    const user = lastUser('openai-chat', llm().requests[0].body);
    expect(typeof user.content).toBe('string');
    expect(user.content).toContain('missing semicolon');
    expect(JSON.stringify(llm().requests[0].body)).not.toContain(PNG);
    expect(systemTexts(p, chatId)).toContainEqual(expect.stringMatching(/The 2 images were not sent: fake\/m1 does not take image input.*"imageInput": true under providers\.fake\.models\.m1/));
    expect(p.text(chatId)).toBe('text only');
  });

  it('later turns and a resumed chat keep the images; chat/open shows them with the user message', async () => {
    const home = tempDir();
    const root = workspaceWithImage();
    const p = await boot(config('anthropic', true), home, root);
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    const chatId = await prompt(p, { message: 'first', contexts: [CONTEXTS[0]] });
    await prompt(p, { chatId, message: 'second' }, 2);
    const second = llm().requests[1].body.messages;
    // (The previous request's user turn keeps its prompt-cache breakpoint, so this one reads it back.)
    expect(second[0].content).toContainEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG }, cache_control: { type: 'ephemeral' } });
    await p.stop();

    const q = await boot(config('anthropic', true), home, root);
    await q.request(ECA.chatOpen, { chatId });
    const replayed = q.contents(chatId).filter((c) => c.role === 'user');
    expect(replayed.map((c) => c.content)).toEqual([
      { type: 'text', text: 'first', contentId: expect.any(String) },
      { type: 'image', mediaType: 'image/png', base64: PNG },
      { type: 'text', text: 'second', contentId: expect.any(String) },
    ]);
    llm().script([{ text: 'three' }]);
    await prompt(q, { chatId, message: 'third' });
    expect(llm().requests[2].body.messages[0].content).toContainEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } });
  });

  it('an image over the size limit or not an image is skipped with a clear reason; the rest of the prompt goes on', async () => {
    const root = workspaceWithImage();
    // Sparse: 21 MB on paper, no bytes written; refused on its size before reading.
    writeFileSync(join(root, 'huge.png'), '');
    truncateSync(join(root, 'huge.png'), 21 * 1024 * 1024);
    const p = await boot(config('openai-chat', true), tempDir(), root);
    llm().script([{ text: 'ok' }]);
    const chatId = await prompt(p, {
      message: 'look',
      contexts: [
        { type: 'file', path: 'huge.png' },
        { type: 'image', mediaType: 'text/plain', base64: PNG },
        { type: 'image', mediaType: 'image/png', base64: `data:image/png;base64,${PNG}` },
        { type: 'text', label: 'term', content: 'still here' },
      ],
    });
    const notes = systemTexts(p, chatId);
    expect(notes).toContainEqual(`Image skipped: image ${join(root, 'huge.png')}: the image is 21 MB; the limit is 20 MB`);
    expect(notes).toContainEqual('Image skipped: image: "text/plain" is not an image media type (e.g. image/png)');
    expect(notes).toContainEqual('Image skipped: image: base64 must be the raw bytes, without a "data:" URL prefix');
    const user = lastUser('openai-chat', llm().requests[0].body);
    expect(user.content).toMatch(/still here/);
    expect(p.text(chatId)).toBe('ok');
  });

  it('an image context without its data is refused as invalid params, and the server goes on', async () => {
    const p = await boot(config('openai-chat', true));
    const res = await p.request(ECA.chatPrompt, { message: 'look', contexts: [{ type: 'image', mediaType: 'image/png' }] });
    expect(res.error?.code).toBe(-32602);
    expect(res.error?.message).toMatch(/base64/);
    llm().script([{ text: 'fine' }]);
    const chatId = await prompt(p, { message: 'again' });
    expect(p.text(chatId)).toBe('fine');
  });
});

describe('an MCP tool returning an image (server-everything get-tiny-image)', () => {
  async function bootMcp(api: Api, vision: boolean): Promise<EcaProc> {
    const p = await boot(
      config(api, vision, {
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
        toolCall: { approval: { allow: { everything: {} } } },
      }),
    );
    await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.type === 'mcp' && m.params.status === 'running', 'everything running', 30_000);
    return p;
  }

  function toolImageOf(p: EcaProc, chatId: string): { called: any; after: any } {
    const all = p.contents(chatId);
    const at = all.findIndex((c) => c.content.type === 'toolCalled');
    return { called: all[at]?.content, after: all[at + 1] };
  }

  it('anthropic: the editor gets toolCalled (text outputs) then a ChatImageContent; the next request has the image in the tool_result', async () => {
    const p = await bootMcp('anthropic', true);
    llm().script([{ toolCall: { id: 'i1', name: 'everything__get-tiny-image', args: {} } }], [{ text: 'a tiny image' }]);
    const chatId = await prompt(p, { message: 'img' });
    const { called, after } = toolImageOf(p, chatId);
    expect(called.outputs.every((o: any) => o.type === 'text')).toBe(true);
    expect(after).toEqual({ chatId, role: 'assistant', content: { type: 'image', mediaType: 'image/png', base64: expect.stringMatching(/^[A-Za-z0-9+/]{20,}={0,2}$/) } });
    const image = after.content.base64;
    const next = llm().requests[1].body.messages;
    const result = next.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_result');
    expect(result.tool_use_id).toBe('i1');
    expect(result.content).toContainEqual({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } });
    expect(result.content[0]).toMatchObject({ type: 'text' });
  });

  it('openai-chat: the tool message keeps its text and a user message with the image follows it', async () => {
    const p = await bootMcp('openai-chat', true);
    llm().script([{ toolCall: { id: 'i1', name: 'everything__get-tiny-image', args: {} } }], [{ text: 'ok' }]);
    const chatId = await prompt(p, { message: 'img' });
    const image = toolImageOf(p, chatId).after.content.base64;
    const msgs = llm().requests[1].body.messages;
    const at = msgs.findIndex((m: any) => m.role === 'tool');
    expect(typeof msgs[at].content).toBe('string');
    expect(msgs[at + 1].role).toBe('user');
    expect(msgs[at + 1].content).toContainEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } });
    expect(msgs[at + 1].content[0].text).toContain('everything__get-tiny-image');
  });

  it('a model without image input: the editor still sees the image; the model gets none and the user is told', async () => {
    const p = await bootMcp('openai-chat', false);
    llm().script([{ toolCall: { id: 'i1', name: 'everything__get-tiny-image', args: {} } }], [{ text: 'ok' }]);
    const chatId = await prompt(p, { message: 'img' });
    const image = toolImageOf(p, chatId).after.content.base64;
    expect(JSON.stringify(llm().requests[1].body)).not.toContain(image);
    expect(systemTexts(p, chatId)).toContainEqual(expect.stringMatching(/The image from everything__get-tiny-image was not sent: fake\/m1 does not take image input/));
    expect(p.text(chatId)).toBe('ok');
  });
});

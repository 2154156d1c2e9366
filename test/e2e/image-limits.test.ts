/**
 * One bad image must not break every later request of a chat: the history is sent again on each
 * step, so an image the API refuses would fail them all. The built binary over real stdio, a real
 * MCP server (test/fixtures/mcp-images.mjs), and the fake Anthropic endpoint made to refuse what
 * the Messages API refuses (docs.claude.com "Vision": over 5 MB of base64 per image; only jpeg,
 * png, gif, webp; data that decodes). Follows ECA chat.clj `prompt-messages!` (the history, images
 * included, on every request) and anthropic.clj `normalize-messages` (images in the user turn and
 * in tool_result content); ECA's own tool images ride in `ChatImageContent` after `toolCalled`
 * (chat/tool_calls.clj `:send-toolCalled`).
 */
import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ECA, EcaProc, fakeProviderConfig, tempDir as newTempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const tempDir = () => scratch(newTempDir());
const IMAGES = resolve(import.meta.dirname, '../fixtures/mcp-images.mjs');
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const MB = 1024 * 1024;

/** What the Messages API says about an image it will not take, or undefined when it takes them all. */
function refusal(body: any): string | undefined {
  const blocks = (body.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
  const images = [...blocks, ...blocks.flatMap((b: any) => (b.type === 'tool_result' && Array.isArray(b.content) ? b.content : []))].filter((b: any) => b.type === 'image');
  for (const img of images) {
    const { media_type, data } = img.source;
    if (!['image/jpeg', 'image/png', 'image/gif', 'image/webp'].includes(media_type)) return `image: unsupported media type ${media_type}`;
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 !== 0) return 'image: Could not process image';
    if (data.length > 5 * MB) return `image exceeds 5 MB maximum: ${data.length} bytes > ${5 * MB} bytes`;
  }
  return undefined;
}

async function boot(extra: Record<string, unknown> = {}, files: Record<string, Buffer> = {}): Promise<EcaProc> {
  const c = fakeProviderConfig(llm().url, 'anthropic', extra) as { providers: { fake: { models: { m1: Record<string, unknown> } } } };
  c.providers.fake.models.m1.imageInput = true;
  const root = scratch(workspace({ 'a.txt': 'a' }));
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(root, name), bytes);
  const p = track(new EcaProc({ home: tempDir(), config: c }));
  await p.initialize(root);
  llm().onRequest = (_path, body) => {
    const why = refusal(body);
    return why ? { status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: why } } } : undefined;
  };
  return p;
}

async function bootMcp(): Promise<EcaProc> {
  const p = await boot({ mcpServers: { images: { command: process.execPath, args: [IMAGES] } }, toolCall: { approval: { allow: { images: {} } } } });
  await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'images' && m.params.status === 'running', 'images running', 30_000);
  return p;
}

async function prompt(p: EcaProc, params: Record<string, unknown>, nth = 1): Promise<string> {
  const res = await p.request(ECA.chatPrompt, params);
  expect(res.error).toBeUndefined();
  const chatId = res.result.chatId as string;
  await p.turnDone(chatId, nth, 30_000);
  return chatId;
}

/** The text of every block of a request body, tool_result content included. */
function textOf(body: any): string {
  return JSON.stringify(body.messages);
}

describe('a chat with an image the API would refuse goes on answering', () => {
  it('a prompt image over the Anthropic 5 MB limit is a placeholder in every request; both prompts are answered', async () => {
    // 4 MB of bytes: within patchbay's 20 MB, but 5.3 MB of base64.
    const p = await boot({}, { 'shot.png': Buffer.alloc(4 * MB) });
    llm().script([{ text: 'first answer' }], [{ text: 'second answer' }]);
    const chatId = await prompt(p, { message: 'look', contexts: [{ type: 'file', path: 'shot.png' }] });
    await prompt(p, { chatId, message: 'and now?' }, 2);
    expect(p.text(chatId)).toBe('first answersecond answer');
    expect(llm().requests).toHaveLength(2);
    for (const r of llm().requests) {
      expect(textOf(r.body)).toContain("[image (image/png, 4 MB) omitted: over the Anthropic API's limit of 5 MB per image (as base64)]");
      expect(refusal(r.body)).toBeUndefined();
    }
  });

  it('MCP tool images of a type no model takes, or no image type at all, become text notes for the model and the editor', async () => {
    const p = await bootMcp();
    llm().script([{ toolCall: { id: 's1', name: 'images__shots', args: {} } }], [{ text: 'seen' }], [{ text: 'still here' }]);
    const chatId = await prompt(p, { message: 'shoot' });
    await prompt(p, { chatId, message: 'again?' }, 2);
    expect(p.text(chatId)).toBe('seenstill here');

    const all = p.contents(chatId);
    const at = all.findIndex((c) => c.content.type === 'toolCalled');
    const notes = ['[image omitted: image/svg+xml is not a type the models take (png, jpeg, gif or webp)]', '[image omitted: "text/plain" is not an image media type (e.g. image/png)]'];
    expect(all[at].content.outputs).toEqual([{ type: 'text', text: 'three shots' }, ...notes.map((text) => ({ type: 'text', text }))]);
    // The good image still reaches the editor and the model.
    expect(all[at + 1].content).toEqual({ type: 'image', mediaType: 'image/png', base64: PNG });
    for (const r of llm().requests.slice(1)) {
      const result = r.body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((b: any) => b.type === 'tool_result');
      expect(result.content).toEqual([
        { type: 'text', text: ['three shots', ...notes, `[image image/png, ${PNG.length} base64 chars]`].join('\n') },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      ]);
    }
  });

  it('an MCP tool image over the Anthropic limit reaches the editor, and the model gets a placeholder on every later request', async () => {
    const p = await bootMcp();
    llm().script([{ toolCall: { id: 'b1', name: 'images__big', args: { bytes: 4 * MB } } }], [{ text: 'big' }], [{ text: 'fine' }]);
    const chatId = await prompt(p, { message: 'shoot' });
    await prompt(p, { chatId, message: 'again?' }, 2);
    expect(p.text(chatId)).toBe('bigfine');
    const all = p.contents(chatId);
    expect(all.some((c) => c.content.type === 'image' && c.content.base64.length > 5 * MB)).toBe(true);
    for (const r of llm().requests.slice(1)) expect(textOf(r.body)).toContain("\\n\\n[image (image/png, 4 MB) omitted: over the Anthropic API's limit of 5 MB per image (as base64)]");
  });
});

/**
 * The local model re-uses its KV cache across the requests of a chat (issue 18, point 7): each chat
 * keeps one context sequence (local.ts `LocalRuntime`), and node-llama-cpp's LlamaChat evaluates
 * only the tokens after the first one that differs from what the sequence holds, so the next
 * request of the chat reads the common prefix back and reports it as cache reads. Runs the tiny
 * GGUF model (scripts/make-tiny-gguf.mjs) through LocalClient, as local-llm.test.ts does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTinyGguf } from '../../scripts/make-tiny-gguf.mjs';
import { LocalClient, LocalRuntime } from '../../src/peers/llm/local.js';
import type { LlmEvent, LlmMessage, LlmRequest } from '../../src/shapes/llm.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-local-kv-'));
const tiny = writeTinyGguf(join(dir, 'tiny.gguf'));
const runtime = new LocalRuntime();
afterAll(async () => {
  await runtime.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const client = new LocalClient({ spec: { model: tiny.path, contextSize: 2048 }, home: dir, runtime });
const SYSTEM = `You are terse. ${'Follow the project rules. '.repeat(20)}`;

async function turn(chatId: string, messages: LlmMessage[], system = SYSTEM): Promise<{ text: string; usage: Extract<LlmEvent, { type: 'usage' }> }> {
  const req: LlmRequest = { model: 'tiny', system, messages, tools: [], maxOutputTokens: 8, signal: new AbortController().signal, chatId };
  let text = '';
  let usage: Extract<LlmEvent, { type: 'usage' }> | undefined;
  for await (const ev of client.stream(req)) {
    if (ev.type === 'text') text += ev.text;
    if (ev.type === 'usage') usage = ev;
  }
  return { text, usage: usage! };
}

describe('local model KV cache per chat', () => {
  it('the next request of a chat reads the prefix it shares with the last one; a new chat reads nothing', async () => {
    const first = await turn('kv-a', [{ role: 'user', content: 'hello there' }]);
    expect(first.usage.cacheReadTokens ?? 0).toBe(0);

    const history: LlmMessage[] = [
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: [{ type: 'text', text: first.text }] },
      { role: 'user', content: 'and again' },
    ];
    const second = await turn('kv-a', history);
    // Everything the first request held up to its answer is read back, only the new turn is evaluated.
    expect(second.usage.cacheReadTokens).toBeGreaterThanOrEqual(first.usage.inputTokens - 2);
    expect(second.usage.cacheReadTokens).toBeLessThan(second.usage.inputTokens);

    const other = await turn('kv-b', history);
    expect(other.usage.cacheReadTokens ?? 0).toBe(0);
  });
});

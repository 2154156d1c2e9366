/**
 * How big a local model's context is: sized to the prompt when the config fixes no `contextSize`
 * (and grown when a later prompt of the chat needs more), the config's size otherwise, and a
 * prompt that cannot fit refused as a context overflow. Through the real code path on the tiny
 * GGUF model, whose tokenizer spends a token per two ASCII characters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeTinyGguf } from '../../scripts/make-tiny-gguf.mjs';
import { contextSizeFor, LocalClient, LocalRuntime, MAX_AUTO_CONTEXT_SIZE } from '../../src/peers/llm/local.js';
import { LlmError, type LlmEvent, type LlmRequest } from '../../src/shapes/llm.js';

const dir = mkdtempSync(join(tmpdir(), 'pb-local-ctx-'));
const tiny = writeTinyGguf(join(dir, 'tiny.gguf'));
const runtime = new LocalRuntime();
afterAll(async () => {
  await runtime.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** A request whose system prompt is about `tokens` tokens long. */
function request(chatId: string, tokens: number): LlmRequest {
  return { model: 'tiny', system: 'x'.repeat(tokens * 2), messages: [{ role: 'user', content: 'hi' }], tools: [], maxOutputTokens: 4, signal: new AbortController().signal, chatId };
}

async function run(client: LocalClient, req: LlmRequest): Promise<{ usage?: Extract<LlmEvent, { type: 'usage' }>; error?: unknown }> {
  try {
    let usage: Extract<LlmEvent, { type: 'usage' }> | undefined;
    for await (const ev of client.stream(req)) if (ev.type === 'usage') usage = ev;
    return { usage };
  } catch (error) {
    return { error };
  }
}

describe('contextSizeFor', () => {
  it('a fixed contextSize is asked for as it is (at most the trained context); the minimum is what the prompt needs', () => {
    expect(contextSizeFor({ fixed: 16384, start: 8192, needed: 9000, train: 32768 })).toEqual({ min: 9000, max: 16384 });
    expect(contextSizeFor({ fixed: 65536, start: 8192, needed: 9000, train: 32768 })).toEqual({ min: 9000, max: 32768 });
    // The prompt does not fit: the size stays; the request is then refused as an overflow.
    expect(contextSizeFor({ fixed: 4096, start: 8192, needed: 9000, train: 32768 })).toEqual({ min: 4096, max: 4096 });
  });

  it('otherwise the start size, grown in steps of 1024 to the prompt and its reply, at most MAX_AUTO_CONTEXT_SIZE and the trained context', () => {
    expect(contextSizeFor({ start: 8192, needed: 5000, train: 32768 })).toEqual({ min: 5000, max: 8192 });
    // The README's tiny-model prompt before tools were trimmed (8,360 tokens) and a 2048-token reply.
    expect(contextSizeFor({ start: 8192, needed: 8360 + 2048, train: 32768 })).toEqual({ min: 10408, max: 11264 });
    expect(contextSizeFor({ start: 8192, needed: 50_000, train: 131_072 })).toEqual({ min: MAX_AUTO_CONTEXT_SIZE, max: MAX_AUTO_CONTEXT_SIZE });
    expect(contextSizeFor({ start: 8192, needed: 9000, train: 4096 })).toEqual({ min: 4096, max: 4096 });
  });
});

describe('a local chat context on the tiny model', () => {
  it('without contextSize: sized to fit a prompt bigger than its start size, and grown when the next prompt needs more; usage reports the size it got', async () => {
    const client = new LocalClient({ spec: { model: tiny.path }, home: dir, runtime, name: 'tiny', startContextSize: 1024 });
    const first = await run(client, request('grow', 1500));
    expect(first.error).toBeUndefined();
    expect(first.usage?.inputTokens).toBeGreaterThan(1500);
    expect(first.usage?.contextWindow).toBe(2048);
    const second = await run(client, request('grow', 2500));
    expect(second.error).toBeUndefined();
    expect(second.usage?.contextWindow).toBe(3072);
    // A short prompt keeps the start size.
    const small = await run(client, request('small', 100));
    expect(small.usage?.contextWindow).toBe(1024);
  }, 60_000);

  it('with contextSize: that size, and a prompt too long for it is a context overflow that says which setting to raise', async () => {
    const client = new LocalClient({ spec: { model: tiny.path, contextSize: 1024 }, home: dir, runtime, name: 'tiny' });
    const fits = await run(client, request('fixed', 300));
    expect(fits.usage?.contextWindow).toBe(1024);
    const { error } = await run(client, request('fixed', 1500));
    expect(error).toBeInstanceOf(LlmError);
    expect((error as LlmError).kind).toBe('contextOverflow');
    expect((error as LlmError).message).toMatch(
      /^The prompt is \d+ tokens \(system prompt, tool definitions and messages\): with a reply it does not fit the local model's context of 1024 tokens; raise providers\.local\.models\.tiny\.contextSize \(this model was trained for \d+ tokens\)\.$/,
    );
  }, 60_000);
});

/**
 * Fill-in-the-middle through the LLM clients (src/peers/llm/fim.ts) against the fake server's
 * real endpoints: OpenAI-compatible `/completions` and Ollama `/api/generate`, their errors, a
 * garbage answer, one too big, and abort.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OllamaClient } from '../../src/peers/llm/ollama.js';
import { OpenAiChatClient } from '../../src/peers/llm/openai-chat.js';
import { LlmError, type FimRequest } from '../../src/shapes/llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';

const llm = useFakeLlm({ reset: 'beforeEach' });

const fim = (over: Partial<FimRequest> = {}): FimRequest => ({ model: 'coder', prompt: 'const a = ', suffix: ';\n', maxOutputTokens: 16, signal: new AbortController().signal, ...over });

/** A server answering every request with `body` (status 200). */
async function answering(body: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => res.end(body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))) };
}

describe('fill-in-the-middle', () => {
  it('OpenAI-compatible: prompt, suffix and max_tokens to /completions with the key; the first choice is the text', async () => {
    llm().script([{ text: '42' }]);
    const text = await new OpenAiChatClient({ url: `${llm().url}/v1`, key: 'k', provider: 'p' }).fillInMiddle(fim({ payload: { temperature: 0 } }));
    expect(text).toBe('42');
    const req = llm().requests[0];
    expect(req.path).toBe('/v1/completions');
    expect(req.body).toEqual({ model: 'coder', prompt: 'const a = ', suffix: ';\n', max_tokens: 16, stream: false, temperature: 0 });
    expect(req.headers.authorization).toBe('Bearer k');
  });

  it('Ollama: /api/generate with suffix and num_predict, not streamed', async () => {
    llm().script([{ text: '42' }]);
    expect(await new OllamaClient({ url: llm().url, provider: 'o' }).fillInMiddle(fim())).toBe('42');
    expect(llm().requests[0]).toMatchObject({ path: '/api/generate', body: { model: 'coder', prompt: 'const a = ', suffix: ';\n', stream: false, options: { num_predict: 16 } } });
  });

  it('an HTTP error is an LlmError with the status and the provider message, the key scrubbed', async () => {
    llm().script({ status: 404, body: { error: 'model "coder" not found, try pulling it first' } });
    const err = await new OllamaClient({ url: llm().url, key: 'sekret-key', provider: 'o' }).fillInMiddle(fim()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).status).toBe(404);
    expect((err as LlmError).message).toContain('not found');
    expect((err as LlmError).message).not.toContain('sekret-key');
  });

  it('an answer that is not JSON, or JSON of another shape, is a clear error', async () => {
    const s = await answering('<html>proxy error</html>');
    try {
      await expect(new OpenAiChatClient({ url: s.url, provider: 'p' }).fillInMiddle(fim())).rejects.toThrow(/^p: the answer is not JSON: <html>proxy error/);
    } finally {
      await s.close();
    }
    const t = await answering('{"choices":[]}');
    try {
      await expect(new OpenAiChatClient({ url: t.url, provider: 'p' }).fillInMiddle(fim())).rejects.toThrow(/^p: unexpected fill-in-the-middle answer/);
    } finally {
      await t.close();
    }
  });

  it('an answer past 1 MB is refused', async () => {
    const s = await answering(`{"response":"${'x'.repeat(2 * 1024 * 1024)}"}`);
    try {
      await expect(new OllamaClient({ url: s.url, provider: 'o' }).fillInMiddle(fim())).rejects.toThrow(/larger than 1048576 bytes/);
    } finally {
      await s.close();
    }
  });

  it('abort ends the call with an AbortError and the server sees the client go', async () => {
    llm().script([{ stall: 'forever' }]);
    const ac = new AbortController();
    const call = new OpenAiChatClient({ url: `${llm().url}/v1`, provider: 'p' }).fillInMiddle(fim({ signal: ac.signal }));
    await expect.poll(() => llm().requests.length).toBe(1);
    ac.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    await expect.poll(() => llm().fimAborted).toBe(1);
  });

  it('a provider URL with user:password: they go as Authorization Basic, not in the URL fetch refuses (and would quote)', async () => {
    llm().script([{ text: '42' }]);
    const withUser = llm().url.replace('http://', 'http://me:pa%3Ass@');
    expect(await new OpenAiChatClient({ url: `${withUser}/v1`, provider: 'p' }).fillInMiddle(fim())).toBe('42');
    expect(llm().requests[0].path).toBe('/v1/completions');
    expect(llm().requests[0].headers.authorization).toBe(`Basic ${Buffer.from('me:pa:ss').toString('base64')}`);
  });

  it('user:password in the URL and a key too: refused, the message names the URL without them', async () => {
    const withUser = llm().url.replace('http://', 'http://me:hunter2@');
    const err = (await new OpenAiChatClient({ url: `${withUser}/v1`, key: 'sekret-key', provider: 'p' }).fillInMiddle(fim()).catch((e: unknown) => e)) as LlmError;
    expect(err).toBeInstanceOf(LlmError);
    expect(err.message).toMatch(/^p: the provider URL http:\/\/127\.0\.0\.1:\d+\/v1 carries a user name and password/);
    expect(err.message).not.toContain('hunter2');
    expect(llm().requests).toEqual([]);
  });

  it("errors inside a 200 answer are scrubbed too: no key, no URL's user info or query", async () => {
    const s = await answering('{"error":"key sekret-key refused by http://me:hunter2@up.example/x?token=t0ken"}');
    try {
      const err = (await new OllamaClient({ url: s.url, key: 'sekret-key', provider: 'o' }).fillInMiddle(fim()).catch((e: unknown) => e)) as LlmError;
      expect(err.message).toContain('refused by http://up.example/x?…');
      expect(err.message).not.toMatch(/sekret-key|hunter2|t0ken/);
    } finally {
      await s.close();
    }
  });

  it("a model's extraPayload cannot make the FIM call streamed or chat-shaped: stream, messages and tools are dropped", async () => {
    llm().script([{ text: '42' }]);
    const payload = { stream: true, messages: [{ role: 'user', content: 'x' }], tools: [], temperature: 0.1 };
    expect(await new OpenAiChatClient({ url: `${llm().url}/v1`, provider: 'p' }).fillInMiddle(fim({ payload }))).toBe('42');
    const body = llm().requests[0].body as Record<string, unknown>;
    expect(body).toMatchObject({ stream: false, temperature: 0.1 });
    expect(body).not.toHaveProperty('messages');
    expect(body).not.toHaveProperty('tools');
  });
});

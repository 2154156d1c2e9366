/**
 * `completion/inline` over the built `patchbay server` and real stdio, against the fake LLM
 * server. The params are what eca-emacs sends (eca-completion.el `eca-completion--find-completion`:
 * `docText`, `docVersion`, `path`, a 1-based `position`), the answer what ECA gives
 * (src/eca/features/completion.clj `complete`: one item at the cursor with the request's docVersion).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RequestCancelled, RequestFailed } from '../../src/rpc/errors.js';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const DOC = 'function add(a, b) {\n  return \n}\n';
/** After "  return " on line 2 (1-based, as eca-emacs counts: `(1+ column)`). */
const POSITION = { line: 2, character: 10 };

/** A provider whose model `m1` fills in the middle (`fim: true`) on the given API. */
function fimConfig(api: 'openai-chat' | 'ollama'): Record<string, unknown> {
  const cfg = fakeProviderConfig(llm().url, api);
  const fake = (cfg.providers as Record<string, Record<string, unknown>>).fake;
  return { ...cfg, providers: { fake: { ...fake, models: { m1: { fim: true, limit: { context: 1000, output: 100 } } } } } };
}

async function started(config: Record<string, unknown>): Promise<EcaProc> {
  const p = track(new EcaProc({ home: tempDir(), config }));
  await p.initialize(workspace());
  return p;
}

const params = (docVersion: number): Record<string, unknown> => ({ docText: DOC, docVersion, path: '/tmp/add.js', position: POSITION });

describe('completion/inline', () => {
  it('FIM (OpenAI-compatible /completions): prefix and suffix split at the 1-based cursor; the item carries docVersion and an empty range at the cursor', async () => {
    llm().script([{ text: 'a + b;' }]);
    const p = await started(fimConfig('openai-chat'));
    const res = await p.request(ECA.completionInline, params(7));
    expect(res.error).toBeUndefined();
    expect(res.result).toEqual({ items: [{ text: 'a + b;', docVersion: 7, range: { start: POSITION, end: POSITION } }] });
    const req = llm().requests.find((r) => r.path === '/v1/completions');
    expect(req?.body).toMatchObject({ model: 'm1', prompt: 'function add(a, b) {\n  return ', suffix: '\n}\n', stream: false });
    expect(req?.headers.authorization).toBe('Bearer test-key');
    expect(llm().requests.some((r) => r.path === '/v1/chat/completions')).toBe(false);
  }, 30_000);

  it("eca-emacs's params as it puts them on the wire (kebab-case doc-text and doc-version, recorded from a real run): answered like camelCase ones", async () => {
    llm().script([{ text: 'and more notes' }]);
    const p = await started(fimConfig('openai-chat'));
    // scripts/eca-emacs/run.sh, wire.jsonl: `M-x eca-complete` at the end of notes.txt.
    const res = await p.request(ECA.completionInline, { 'doc-text': 'hello from the workspace\n', 'doc-version': 0, path: '/ws/notes.txt', position: { line: 2, character: 1 } });
    expect(res.result).toEqual({ items: [{ text: 'and more notes', docVersion: 0, range: { start: { line: 2, character: 1 }, end: { line: 2, character: 1 } } }] });
    expect(llm().requests.find((r) => r.path === '/v1/completions')?.body).toMatchObject({ prompt: 'hello from the workspace\n', suffix: '' });
  }, 30_000);

  it('FIM (Ollama /api/generate with suffix)', async () => {
    llm().script([{ text: 'a + b;' }]);
    const p = await started(fimConfig('ollama'));
    const res = await p.request(ECA.completionInline, params(1));
    expect(res.result.items[0].text).toBe('a + b;');
    const req = llm().requests.find((r) => r.path === '/api/generate');
    expect(req?.body).toMatchObject({ model: 'm1', prompt: 'function add(a, b) {\n  return ', suffix: '\n}\n', stream: false });
  }, 30_000);

  it('chat path (a model without fim): the document with a cursor tag, the answer taken out of its Markdown fence', async () => {
    llm().script([{ text: '```js\na + b;\n```' }]);
    const p = await started(fakeProviderConfig(llm().url, 'openai-chat', { completion: { model: 'fake/m1' } }));
    const res = await p.request(ECA.completionInline, params(3));
    expect(res.result).toEqual({ items: [{ text: 'a + b;', docVersion: 3, range: { start: POSITION, end: POSITION } }] });
    const req = llm().requests.find((r) => r.path === '/v1/chat/completions');
    const user = (req?.body.messages as Array<{ role: string; content: string }>).find((m) => m.role === 'user');
    expect(user?.content).toContain('function add(a, b) {\n  return <CURSOR>\n}\n');
    expect(user?.content).toContain('/tmp/add.js');
    expect(req?.body.tools).toBeUndefined();
  }, 30_000);

  it('a newer request aborts the older one: the fake server sees the first call hang up, the older answers -32800, the newer its item', async () => {
    llm().script([{ stall: 'forever' }], [{ text: 'second' }]);
    const p = await started(fimConfig('openai-chat'));
    const first = p.request(ECA.completionInline, params(1));
    // The second is sent once the first has reached the provider.
    await expect.poll(() => llm().requests.filter((r) => r.path === '/v1/completions').length, { timeout: 15_000 }).toBe(1);
    const second = await p.request(ECA.completionInline, params(2));
    expect(second.result.items).toEqual([{ text: 'second', docVersion: 2, range: { start: POSITION, end: POSITION } }]);
    const older = await first;
    expect(older.error).toMatchObject({ code: RequestCancelled, message: expect.stringContaining('newer completion') });
    expect(older.error).not.toHaveProperty('type');
    await expect.poll(() => llm().fimAborted, { timeout: 15_000 }).toBe(1);
  }, 30_000);

  it("the editor's $/cancelRequest aborts the provider call and the request answers -32800", async () => {
    llm().script([{ stall: 'forever' }]);
    const p = await started(fimConfig('openai-chat'));
    // An id of our own, to name it in $/cancelRequest (LSP "Cancellation Support", which ECA's JSON-RPC library follows).
    const id = 9001;
    p.send({ id, method: ECA.completionInline.method, params: params(1) });
    await expect.poll(() => llm().requests.filter((r) => r.path === '/v1/completions').length, { timeout: 15_000 }).toBe(1);
    p.notify('$/cancelRequest', { id });
    const res = await p.waitFor((m) => m.id === id && m.method === undefined, 'the cancelled answer');
    expect(res.error).toMatchObject({ code: RequestCancelled, message: 'Cancelled by the editor' });
    await expect.poll(() => llm().fimAborted, { timeout: 15_000 }).toBe(1);
  }, 30_000);

  it('an LLM error is a clear JSON-RPC error (type warning) and the server goes on answering', async () => {
    llm().script({ status: 400, body: { error: { message: 'bad suffix', type: 'invalid_request_error' } } }, [{ text: 'ok now' }]);
    const p = await started(fimConfig('openai-chat'));
    const res = await p.request(ECA.completionInline, params(1));
    // eca-emacs eca-completion.el `eca-completion--find-completion` error-callback: `(plist-get error :type)`, top level.
    expect(res.error).toMatchObject({ code: RequestFailed, type: 'warning', data: { type: 'warning' } });
    expect(res.error?.message).toMatch(/^Completion failed: .*HTTP 400.*bad suffix/);
    expect(res.error?.message).not.toContain('test-key');
    const again = await p.request(ECA.completionInline, params(2));
    expect(again.result.items[0].text).toBe('ok now');
  }, 30_000);

  it('no completion.model and a reasoning default model (gpt-5): the completion goes to gpt-4.1 of the same provider, as ECA defaults to', async () => {
    // ECA src/eca/features/completion.clj: default model openai/gpt-4.1, `:reason? false`.
    llm().script([{ text: 'a + b;' }]);
    const cfg = {
      providers: { fake: { api: 'openai-responses', url: `${llm().url}/v1`, key: 'test-key', models: { 'gpt-5': {}, 'gpt-4.1': {} } } },
      defaultModel: 'fake/gpt-5',
      chat: { generateTitles: false },
    };
    const p = await started(cfg);
    const res = await p.request(ECA.completionInline, params(1));
    expect(res.result.items[0].text).toBe('a + b;');
    expect(llm().requests.find((r) => r.path === '/v1/responses')?.body.model).toBe('gpt-4.1');
  }, 30_000);

  it('a reasoning model that stays gets minimal effort; an empty answer cut at the output limit is a warning, not an empty list', async () => {
    llm().script([{ reasoning: 'hmm' }, { finish: 'length' }]);
    const cfg = { providers: { fake: { api: 'openai-responses', url: `${llm().url}/v1`, key: 'test-key', models: { 'gpt-5': {} } } }, defaultModel: 'fake/gpt-5', chat: { generateTitles: false } };
    const p = await started(cfg);
    const res = await p.request(ECA.completionInline, params(1));
    expect(res.error).toMatchObject({ code: RequestFailed, type: 'warning', message: expect.stringContaining('output tokens without answering') });
    expect(llm().requests.find((r) => r.path === '/v1/responses')?.body).toMatchObject({ model: 'gpt-5', reasoning: { effort: 'minimal' } });
  }, 30_000);

  it('a 1 MB document: only the 16 KB before the cursor and 4 KB after it, at line boundaries, reach the provider', async () => {
    llm().script([{ text: 'x' }]);
    const line = `${'y'.repeat(63)}\n`;
    const doc = `${line.repeat(8192)}  return \n${line.repeat(8192)}`;
    const cfg = fimConfig('openai-chat');
    const fake = (cfg.providers as Record<string, Record<string, unknown>>).fake;
    const p = await started({ ...cfg, providers: { fake: { ...fake, models: { m1: { fim: true } } } } });
    const res = await p.request(ECA.completionInline, { docText: doc, docVersion: 1, position: { line: 8193, character: 10 } });
    expect(res.result.items[0].text).toBe('x');
    const body = llm().requests.find((r) => r.path === '/v1/completions')?.body;
    expect(body.prompt).toBe(`${line.repeat(255)}  return `);
    expect(body.suffix).toBe(`\n${line.repeat(63)}`);
  }, 30_000);

  it('a completion waiting for model discovery when shutdown arrives is cancelled (-32800) and never reaches the provider', async () => {
    // An Ollama whose model list never comes: discovery (and so the request) waits until its timeout.
    const hanging = http.createServer(() => {});
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    try {
      const cfg = fimConfig('openai-chat');
      const slow = { api: 'ollama', url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}` };
      const p = await started({ ...cfg, providers: { ...(cfg.providers as Record<string, unknown>), slow } });
      const pending = p.request(ECA.completionInline, params(1));
      const down = await p.request(ECA.shutdown, {});
      expect(down.error).toBeUndefined();
      const res = await pending;
      expect(res.error).toMatchObject({ code: RequestCancelled });
      expect(llm().requests.filter((r) => r.path === '/v1/completions')).toEqual([]);
    } finally {
      hanging.closeAllConnections();
      await new Promise((r) => hanging.close(r));
    }
  }, 30_000);

  it('a completion model that is not configured is refused with the reason', async () => {
    const p = await started(fakeProviderConfig(llm().url, 'openai-chat', { completion: { model: 'fake/nope' } }));
    const res = await p.request(ECA.completionInline, params(1));
    expect(res.error).toMatchObject({ code: RequestFailed, type: 'error', message: expect.stringContaining('"fake/nope" is not among the available models') });
  }, 30_000);

  it('malformed params: -32602 naming the field, and nothing reaches the provider', async () => {
    const p = await started(fimConfig('openai-chat'));
    const noVersion = await p.request(ECA.completionInline, { docText: DOC, position: POSITION });
    expect(noVersion.error).toMatchObject({ code: -32602, message: expect.stringContaining('docVersion') });
    const badPosition = await p.request(ECA.completionInline, { docText: DOC, docVersion: 1, position: { line: 'two', character: 1 } });
    expect(badPosition.error).toMatchObject({ code: -32602, message: expect.stringContaining('position.line') });
    expect(llm().requests.filter((r) => r.path === '/v1/completions')).toEqual([]);
  }, 30_000);
});

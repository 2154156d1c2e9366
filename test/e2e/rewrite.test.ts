/**
 * `rewrite/prompt` and `rewrite/contentReceived` over the built `patchbay server` and real stdio,
 * against the fake LLM server. The params are what eca-vscode sends (src/rewrite.ts
 * `startRewrite`: id, text, prompt, path, a range with 1-based lines) and eca-emacs
 * (eca-rewrite.el `eca-rewrite`); the order of contents is ECA's (src/eca/features/rewrite.clj
 * `prompt`: `started` on the first response, `reasoning`, `text` pieces, `replace` when fences were
 * stripped, `finished`; `error` instead). eca-emacs maps the rewrite id to its buffer only in the
 * request's success callback (eca-rewrite.el), so the answer must come before any content.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RequestFailed } from '../../src/rpc/errors.js';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function started(config: Record<string, unknown>, root = workspace()): Promise<EcaProc> {
  const p = track(new EcaProc({ home: tempDir(), config }));
  await p.initialize(root);
  return p;
}

const contents = (p: EcaProc, id: string): Array<Record<string, unknown>> =>
  p.messages.filter((m) => m.method === ECA.rewriteContentReceived.method && m.params.rewriteId === id).map((m) => m.params.content);

/** Waits for the rewrite's last content (`finished` or `error`). */
const ended = (p: EcaProc, id: string): Promise<Msg> =>
  p.waitFor((m) => m.method === ECA.rewriteContentReceived.method && m.params.rewriteId === id && ['finished', 'error'].includes(m.params.content.type), `end of rewrite ${id}`);

const range = { start: { line: 2, character: 2 }, end: { line: 2, character: 13 } };

describe('rewrite/prompt', () => {
  it('answers {status: prompting, model} first, then streams started, reasoning, the text pieces and finished; the model gets the file, the selection and its range', async () => {
    // The pause makes the two pieces two reads on our side (pieces read together arrive as one).
    llm().script([{ reasoning: 'thinking it over' }, { text: 'const y' }, { delay: 200 }, { text: ' = 2;' }]);
    const root = workspace({ 'a.ts': 'line one\n  const x = 1;\nline three\n' });
    const p = await started(fakeProviderConfig(llm().url), root);
    const res = await p.request(ECA.rewritePrompt, { id: 'rw-1', text: 'const x = 1;', prompt: 'rename x to y and make it 2', path: join(root, 'a.ts'), range });
    expect(res.result).toEqual({ status: 'prompting', model: 'fake/m1' });
    await ended(p, 'rw-1');
    const firstContent = p.messages.findIndex((m) => m.method === ECA.rewriteContentReceived.method);
    expect(firstContent).toBeGreaterThan(p.messages.indexOf(res));
    const got = contents(p, 'rw-1');
    expect(got.map((c) => c.type)).toEqual(['started', 'reasoning', 'text', 'text', 'finished']);
    expect(
      got
        .filter((c) => c.type === 'text')
        .map((c) => c.text)
        .join(''),
    ).toBe('const y = 2;');
    expect(got.at(-1)?.totalTimeMs).toEqual(expect.any(Number));

    const body = llm().requests.find((r) => r.path === '/v1/chat/completions')?.body;
    const system = body.messages.find((m: { role: string }) => m.role === 'system').content as string;
    expect(system).toContain(join(root, 'a.ts'));
    expect(system).toContain('line one\n  const x = 1;\nline three');
    expect(system).toContain('From line 2, character 2 to line 2, character 13.');
    expect(body.messages.at(-1)).toEqual({ role: 'user', content: 'rename x to y and make it 2' });
    expect(body.tools).toBeUndefined();
  }, 30_000);

  it('an answer wrapped in a Markdown fence: the pieces as they came, then replace with the bare code, then finished', async () => {
    llm().script([{ text: '```ts\nconst y' }, { delay: 200 }, { text: ' = 2;\n```' }]);
    const p = await started(fakeProviderConfig(llm().url));
    await p.request(ECA.rewritePrompt, { id: 'rw-2', text: 'const x = 1;', prompt: 'y', range });
    await ended(p, 'rw-2');
    const got = contents(p, 'rw-2');
    expect(got.map((c) => c.type)).toEqual(['started', 'text', 'text', 'replace', 'finished']);
    expect(got[3]).toEqual({ type: 'replace', text: 'const y = 2;' });
  }, 30_000);

  it('the rewrite model from config (rewrite.model) answers, not the default; a large file (a path relative to the workspace) is cut to rewrite.fullFileMaxLines around the selection', async () => {
    llm().script([{ text: 'ok' }]);
    const cfg = fakeProviderConfig(llm().url);
    const fake = (cfg.providers as Record<string, Record<string, unknown>>).fake;
    const root = workspace();
    const file = join(root, 'big.txt');
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join('\n'));
    const p = await started({ ...cfg, providers: { fake: { ...fake, models: { m1: {}, m2: {} } } }, rewrite: { model: 'fake/m2', fullFileMaxLines: 10 } }, root);
    const res = await p.request(ECA.rewritePrompt, { id: 'rw-3', text: 'row 50', prompt: 'x', path: 'big.txt', range: { start: { line: 50, character: 0 }, end: { line: 50, character: 6 } } });
    expect(res.result).toEqual({ status: 'prompting', model: 'fake/m2' });
    await ended(p, 'rw-3');
    const body = llm().requests.find((r) => r.path === '/v1/chat/completions')?.body;
    expect(body.model).toBe('m2');
    const system = body.messages[0].content as string;
    expect(system).toContain('[file truncated: lines 45-54 of 100]\nrow 45\n');
    expect(system).toContain('row 54\n');
    expect(system).not.toContain('row 44\n');
    expect(system).not.toContain('row 55');
  }, 30_000);

  it('a file over 2 MB on one line (minified) is windowed around the selection by characters, not dropped nor sent whole', async () => {
    // ECA's rewrite.clj sends the file (windowed by fullFileMaxLines); one line of megabytes passes
    // that window whole, so patchbay also bounds it by characters.
    llm().script([{ text: 'ok' }]);
    const root = workspace();
    writeFileSync(join(root, 'app.min.js'), `${'a'.repeat(1_500_000)}TARGET${'b'.repeat(1_500_000)}`);
    // A model with a 1000-token context: the window is its floor (4096 characters).
    const config = fakeProviderConfig(llm().url);
    Object.assign(config, { providers: { fake: { api: 'openai-chat', url: `${llm().url}/v1`, key: 'test-key', models: { m1: { limit: { context: 1000, output: 100 } } } } } });
    const p = await started(config, root);
    const sel = { start: { line: 1, character: 1_500_000 }, end: { line: 1, character: 1_500_006 } };
    await p.request(ECA.rewritePrompt, { id: 'rw-big', text: 'TARGET', prompt: 'x', path: 'app.min.js', range: sel });
    await ended(p, 'rw-big');
    expect(contents(p, 'rw-big').map((c) => c.type)).toEqual(['started', 'text', 'finished']);
    const system = llm().requests.find((r) => r.path === '/v1/chat/completions')?.body.messages[0].content as string;
    // The fake model's context is 1000 tokens: the window is its floor of 4096 characters.
    expect(system).toMatch(/\[file truncated: lines 1-1 of 1, 4096 of 3000006 characters\]\na+TARGETb+\n/);
    expect(system.length).toBeLessThan(10_000);
  }, 30_000);

  it('an LLM error is an error content (no finished), and the server goes on', async () => {
    llm().script({ status: 400, body: { error: { message: 'context too long', type: 'invalid_request_error' } } }, [{ text: 'fine' }]);
    const p = await started(fakeProviderConfig(llm().url));
    const res = await p.request(ECA.rewritePrompt, { id: 'rw-4', text: 't', prompt: 'p', range });
    expect(res.result.status).toBe('prompting');
    await ended(p, 'rw-4');
    const got = contents(p, 'rw-4');
    expect(got).toEqual([{ type: 'error', message: expect.stringMatching(/HTTP 400.*context too long/) }]);
    expect(JSON.stringify(got)).not.toContain('test-key');
    await p.request(ECA.rewritePrompt, { id: 'rw-5', text: 't', prompt: 'p', range });
    await ended(p, 'rw-5');
    expect(contents(p, 'rw-5').map((c) => c.type)).toEqual(['started', 'text', 'finished']);
  }, 30_000);

  it('malformed params: -32602 naming the field; no model configured: a clear error', async () => {
    const p = await started(fakeProviderConfig(llm().url));
    const noId = await p.request(ECA.rewritePrompt, { text: 't', prompt: 'p', range });
    expect(noId.error).toMatchObject({ code: -32602, message: expect.stringContaining('id') });
    const noRange = await p.request(ECA.rewritePrompt, { id: 'x', text: 't', prompt: 'p' });
    expect(noRange.error).toMatchObject({ code: -32602, message: expect.stringContaining('range') });
    expect(llm().requests.filter((r) => r.path === '/v1/chat/completions')).toEqual([]);

    const q = await started({ providers: {}, chat: { generateTitles: false } });
    const none = await q.request(ECA.rewritePrompt, { id: 'y', text: 't', prompt: 'p', range });
    expect(none.error).toMatchObject({ code: RequestFailed, message: expect.stringContaining('No model available for rewrite') });
  }, 30_000);
});

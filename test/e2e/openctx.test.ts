/** OpenCtx through `patchbay server`: mentions in queryContext, items into the LLM input, the host. */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const fixture = (f: string) => resolve(import.meta.dirname, '../fixtures/openctx', f);

async function boot(openctx: Record<string, unknown>, files: Record<string, string> = { 'a.ts': 'const a = 1; // TODO tidy\n' }) {
  const home = tempDir();
  const root = workspace(files);
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { openctx }) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  return { p, root, home };
}

const userText = (i: number) =>
  llm()
    .requests[i].body.messages.filter((m: any) => m.role === 'user')
    .at(-1).content as string;

describe('OpenCtx in chats', () => {
  it("offers mentions in chat/queryContext, and a prompt carrying one gives the LLM the item's ai.content", async () => {
    const { p } = await boot({ providers: { [fixture('notes-provider.mjs')]: { team: 'core' } } });
    const res = await p.request('chat/queryContext', { query: 'alpha', contexts: [] });
    const mention = res.result.contexts.find((c: any) => c.type === 'mcpResource' && c.uri === 'notes://alpha');
    expect(mention).toMatchObject({ name: 'Alpha note', description: 'first', server: 'openctx:notes' });
    llm().script([{ text: 'noted' }]);
    const chatId = (await p.request('chat/prompt', { message: 'use this', contexts: [mention] })).result.chatId;
    await p.turnDone(chatId);
    expect(userText(0)).toContain('content of Alpha note (id 1)');
  });

  it('a hanging provider does not hold back the others past the deadline', async () => {
    const { p } = await boot({ providers: { [fixture('hang-provider.mjs')]: true, [fixture('notes-provider.mjs')]: true }, timeoutMs: 400 });
    const t0 = Date.now();
    const res = await p.request('chat/queryContext', { query: 'note', contexts: [] });
    expect(Date.now() - t0).toBeLessThan(400 + 400);
    expect(res.result.contexts.filter((c: any) => c.server === 'openctx:notes').map((c: any) => c.uri)).toEqual(['notes://alpha', 'notes://beta', 'notes://gamma']);
  });

  it('auto-include providers add items for the message; file contexts carry their annotations', async () => {
    const { p, root } = await boot({ providers: { [fixture('notes-provider.mjs')]: true }, autoInclude: ['notes'] });
    llm().script([{ text: 'ok' }]);
    const chatId = (await p.request('chat/prompt', { message: 'hello there', contexts: [{ type: 'file', path: join(root, 'a.ts') }] })).result.chatId;
    await p.turnDone(chatId);
    const text = userText(0);
    expect(text).toContain('you said: hello there');
    expect(text).toContain('A TODO');
    expect(text).toContain('const a = 1;');
  });

  it("serves patchbay's own providers over token-protected loopback HTTP", async () => {
    const { home } = await boot({}, { 'src/hello.ts': 'export const hello = 1;\n' });
    const dir = join(home, '.patchbay', 'openctx');
    const deadline = Date.now() + 10_000;
    while (!existsSync(join(dir, 'address')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const url = readFileSync(join(dir, 'address'), 'utf8').trim();
    const token = readFileSync(join(dir, 'token'), 'utf8').trim();
    const call = (body: unknown, auth = token) =>
      fetch(`${url.replace(/\/$/, '')}/providers/files`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` }, body: JSON.stringify(body) });
    expect((await call({ method: 'meta' }, 'wrong')).status).toBe(401);
    const meta: any = await (await call({ method: 'meta' })).json();
    expect(meta.result.name).toBe('patchbay files');
    const mentions: any = await (await call({ method: 'mentions', params: { query: 'hello' } })).json();
    expect(mentions.result[0].title).toBe('src/hello.ts');
    const items: any = await (await call({ method: 'items', params: { mention: mentions.result[0] } })).json();
    expect(items.result[0].ai.content).toContain('export const hello = 1;');
  });
});

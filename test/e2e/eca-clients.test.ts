/** What today's ECA editor plugins (Emacs, VS Code, Neovim) send beyond the seed spec. */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(config: Record<string, unknown> = fakeProviderConfig(llm().url)) {
  const root = workspace({ 'a.ts': 'const a = 1;\nconst bb = 2;\n' });
  const p = track(new EcaProc({ home: tempDir(), config }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root };
}

const userText = (body: any) => body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content);

describe('ECA plugin compatibility', () => {
  it("accepts Emacs' null fields as absent", async () => {
    const { p } = await boot();
    llm().script([{ text: 'hi from emacs' }]);
    const res = await p.request(ECA.chatPrompt, { chatId: null, message: 'hello', model: null, agent: null, contexts: [], 'request-id': 3 });
    expect(res.error).toBeUndefined();
    await p.turnDone(res.result.chatId);
    expect(p.text(res.result.chatId)).toBe('hi from emacs');
    const q = await p.request(ECA.chatQueryContext, { chatId: null, query: 'a.t', contexts: [] });
    expect(q.result.contexts.length).toBeGreaterThan(0);
    const c = await p.request(ECA.chatQueryCommands, { chatId: null, query: '' });
    expect(c.result.commands.length).toBeGreaterThan(0);
  });

  it('an unknown agent name falls back to the default agent instead of failing', async () => {
    const { p } = await boot();
    llm().script([{ text: 'ok' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'hi', agent: 'my-custom-agent' });
    expect(res.result.status).toBe('prompting');
    await p.turnDone(res.result.chatId);
    const tools = llm().requests[0].body.tools.map((t: any) => t.function.name);
    expect(tools).toContain('patchbay__write_file');
  });

  it('with no model, the chat gets the instructions and the turn ends', async () => {
    const { p } = await boot({ chat: { generateTitles: false } });
    const res = await p.request(ECA.chatPrompt, { message: 'hi' });
    expect(res.result.status).toBe('login');
    expect(res.result.chatId).toMatch(/\w{8}-/);
    await p.turnDone(res.result.chatId);
    expect(p.text(res.result.chatId, 'system')).toMatch(/ANTHROPIC_API_KEY/);
  });

  it('sends the generated title as metadata content, not a second chat/opened', async () => {
    const cfg = fakeProviderConfig(llm().url);
    (cfg.chat as Record<string, unknown>).generateTitles = true;
    const { p } = await boot(cfg);
    llm().script([{ text: 'answer' }], [{ text: 'Parser fix' }]);
    const chatId = (await p.request(ECA.chatPrompt, { chatId: 'c-1', message: 'fix the parser' })).result.chatId;
    await p.turnDone(chatId);
    const meta = await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.content.type === 'metadata');
    expect(meta.params).toEqual({ chatId: 'c-1', role: 'system', content: { type: 'metadata', title: 'Parser fix' } });
    expect(p.messages.filter((m) => m.method === ECA.chatOpened.method)).toHaveLength(1);
  });

  it('chat/clear forgets the history; chat/queryFiles lists files', async () => {
    const { p, root } = await boot();
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'first' })).result.chatId;
    await p.turnDone(chatId);
    expect((await p.request(ECA.chatClear, { chatId, messages: true })).result).toEqual({});
    await p.waitFor((m) => m.method === ECA.chatCleared.method && m.params.chatId === chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'second' });
    await p.turnDone(chatId, 2);
    expect(userText(llm().requests[1].body)).toEqual(['second']);
    const files = await p.request(ECA.chatQueryFiles, { chatId, query: 'a.ts' });
    expect(files.result.files[0]).toEqual({ type: 'file', path: join(root, 'a.ts') });
  });

  it('renders a 1-based cursor selection and a text context into the prompt', async () => {
    const { p, root } = await boot();
    llm().script([{ text: 'seen' }]);
    const chatId = (
      await p.request(ECA.chatPrompt, {
        message: 'explain',
        contexts: [
          { type: 'cursor', path: join(root, 'a.ts'), position: { start: { line: 2, character: 7 }, end: { line: 2, character: 9 } } },
          { type: 'text', label: 'notes', content: 'remember this' },
        ],
      })
    ).result.chatId;
    await p.turnDone(chatId);
    const user = userText(llm().requests[0].body)[0];
    expect(user).toMatch(/<cursor [^>]*line="2" character="7"[^>]*>\nbb\n<\/cursor>/);
    expect(user).toContain('<text label="notes">\nremember this\n</text>');
  });

  it('normalizes editor diagnostics with other severity names and missing messages', async () => {
    const root = workspace({ 'a.ts': 'x' });
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    p.onServerRequest = (m) =>
      p.send({
        id: m.id,
        result: {
          diagnostics: [
            { uri: 'file:///x/a.ts', severity: 'information', message: null, range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } } },
            { uri: 'file:///x/a.ts', severity: 'error', message: 'bad', range: { start: { line: 1, character: 0 }, end: { line: 1, character: 1 } } },
            'garbage',
          ],
        },
      });
    await p.initialize(root, { capabilities: { codeAssistant: { chat: true, editor: { diagnostics: true } } } });
    llm().script([{ toolCall: { id: 'd', name: 'patchbay__editor_diagnostics', args: {} } }], [{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'diag' })).result.chatId;
    await p.turnDone(chatId);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content;
    expect(called.error).toBe(false);
    const text: string = called.outputs[0].text;
    expect(text.indexOf('error')).toBeLessThan(text.indexOf('info'));
    expect(text).toContain('bad');
  });
});

import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync, writeFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(opts: { api?: string; extra?: Record<string, unknown>; files?: Record<string, string>; home?: string } = {}) {
  const root = workspace(opts.files ?? { 'a.txt': 'alpha\nbeta\n', 'src/main.ts': 'export const x = 1;\n' });
  const p = track(new EcaProc({ home: opts.home ?? tempDir(), config: fakeProviderConfig(llm().url, opts.api ?? 'openai-chat', opts.extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root };
}

function content(p: EcaProc, chatId: string, type: string) {
  return p
    .contents(chatId)
    .filter((c) => c.content.type === type)
    .map((c) => c.content);
}

describe.each(['openai-chat', 'openai-responses', 'anthropic', 'ollama'])('text streaming over %s', (api) => {
  it('streams the scripted text to the editor in order', async () => {
    const { p } = await boot({ api });
    llm().script([{ text: 'Hel' }, { text: 'lo ' }, { text: 'world' }, { usage: { input: 10, output: 3 } }]);
    const res = await p.request(ECA.chatPrompt, { message: 'hi' });
    expect(res.result.status).toBe('prompting');
    expect(res.result.model).toBe('fake/m1');
    const chatId = res.result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('Hello world');
    expect(p.text(chatId, 'user')).toBe('hi');
    const usage = content(p, chatId, 'usage')[0];
    expect(usage.sessionTokens).toBe(13);
    expect(usage.limit).toEqual({ context: 100_000, output: 100 });
    expect(Number(usage.sessionCost)).toBeCloseTo((10 * 1 + 3 * 2) / 1e6, 8);
    const statuses = p.messages.filter((m) => m.method === ECA.chatStatusChanged.method && m.params.chatId === chatId).map((m) => m.params.status);
    expect(statuses).toEqual(['running', 'idle']);
  });
});

describe('chat over the fake LLM', () => {
  it('streams reasoning and replays the Anthropic signature on the next turn', async () => {
    const { p } = await boot({ api: 'anthropic' });
    llm().script([{ reasoning: 'Let me think', signature: 'sig-123' }, { text: 'Answer' }], [{ text: 'Second' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'q1' })).result.chatId;
    await p.turnDone(chatId);
    const kinds = p.contents(chatId).map((c) => c.content.type);
    expect(kinds).toEqual(expect.arrayContaining(['reasonStarted', 'reasonText', 'reasonFinished']));
    expect(
      content(p, chatId, 'reasonText')
        .map((c) => c.text)
        .join(''),
    ).toBe('Let me think');
    await p.request(ECA.chatPrompt, { chatId, message: 'q2' });
    await p.turnDone(chatId, 2);
    const second = llm()
      .requests.filter((r) => r.path === '/v1/messages')
      .at(-1)!.body;
    const assistant = second.messages.find((m: any) => m.role === 'assistant');
    expect(assistant.content[0]).toMatchObject({ type: 'thinking', thinking: 'Let me think', signature: 'sig-123' });
  });

  it('runs an allowed read-only tool call and feeds the result back', async () => {
    const { p } = await boot();
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read it' })).result.chatId;
    await p.turnDone(chatId);
    const run = content(p, chatId, 'toolCallRun')[0];
    expect(run).toMatchObject({ id: 'c1', name: 'read_file', server: 'eca', origin: 'native', manualApproval: false });
    const called = content(p, chatId, 'toolCalled')[0];
    expect(called.error).toBe(false);
    expect(called.outputs[0].text).toContain('alpha');
    expect(content(p, chatId, 'toolCallPrepare').length).toBeGreaterThan(0);
    const toolMsg = llm()
      .requests.at(-1)!
      .body.messages.find((m: any) => m.role === 'tool');
    expect(toolMsg.content).toContain('beta');
    expect(p.text(chatId)).toBe('done');
  });

  it('asks before write_file; approve writes the file with fileChange details', async () => {
    const { p, root } = await boot();
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'new.txt', content: 'one\ntwo\n' } } }], [{ text: 'written' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'write' })).result.chatId;
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun', 'toolCallRun');
    expect(run.params.content.manualApproval).toBe(true);
    expect(run.params.content.details).toMatchObject({ type: 'fileChange', linesAdded: 2, linesRemoved: 0 });
    expect(existsSync(join(root, 'new.txt'))).toBe(false);
    p.notify(ECA.chatToolCallApprove, { chatId, toolCallId: 'w1' });
    await p.turnDone(chatId);
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(content(p, chatId, 'toolCalled')[0].details.diff).toContain('+one');
  });

  it('ask → reject: the tool does not run, the LLM is told, the turn continues', async () => {
    const { p, root } = await boot();
    llm().script([{ toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: 'no.txt', content: 'x' } } }], [{ text: 'ok, not writing' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'write' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun');
    p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'w2' });
    await p.turnDone(chatId);
    expect(existsSync(join(root, 'no.txt'))).toBe(false);
    expect(content(p, chatId, 'toolCallRejected')[0].reason).toBe('user');
    const toolMsg = llm()
      .requests.at(-1)!
      .body.messages.find((m: any) => m.role === 'tool');
    expect(toolMsg.content).toMatch(/rejected/);
    expect(p.text(chatId)).toBe('ok, not writing');
  });

  it('a deny rule hides the tool and rejects a call to it', async () => {
    const { p } = await boot({ extra: { toolCall: { approval: { deny: { shell_command: {} } } } } });
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'echo hi' } } }], [{ text: 'fine' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'run' })).result.chatId;
    await p.turnDone(chatId);
    const offered = llm().requests[0].body.tools.map((t: any) => t.function.name);
    expect(offered).not.toContain('patchbay__shell_command');
    expect(offered).toContain('patchbay__read_file');
    expect(content(p, chatId, 'toolCallRejected')[0].reason).toBe('userConfigDeny');
    expect(content(p, chatId, 'toolCalled')).toHaveLength(0);
  });

  it('the plan agent cannot write files', async () => {
    const { p, root } = await boot();
    llm().script([{ toolCall: { id: 'p1', name: 'patchbay__write_file', args: { path: 'plan.txt', content: 'x' } } }], [{ text: 'planned' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'do it', agent: 'plan' })).result.chatId;
    await p.turnDone(chatId);
    expect(existsSync(join(root, 'plan.txt'))).toBe(false);
    const offered = llm().requests[0].body.tools.map((t: any) => t.function.name);
    expect(offered).not.toContain('patchbay__write_file');
    expect(offered).not.toContain('patchbay__shell_command');
    expect(content(p, chatId, 'toolCallRejected')[0].reason).toBe('userConfigDeny');
    expect(llm().requests[0].body.messages[0].content).toMatch(/PLAN mode/);
  });

  it('a path outside the workspace forces ask, even for read_file; a symlink escape too', async () => {
    const outside = tempDir('pb-outside-');
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    const { p, root } = await boot();
    symlinkSync(outside, join(root, 'link'));
    llm().script(
      [{ toolCall: { id: 'e1', name: 'patchbay__read_file', args: { path: join(outside, 'secret.txt') } } }],
      [{ toolCall: { id: 'e2', name: 'patchbay__read_file', args: { path: 'link/secret.txt' } } }],
      [{ toolCall: { id: 'e3', name: 'patchbay__read_file', args: { path: '../x.txt' } } }],
      [{ text: 'end' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read' })).result.chatId;
    for (const id of ['e1', 'e2', 'e3']) {
      const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === id, id);
      expect(run.params.content.manualApproval).toBe(true);
      p.notify(ECA.chatToolCallReject, { chatId, toolCallId: id });
    }
    await p.turnDone(chatId);
    expect(content(p, chatId, 'toolCalled')).toHaveLength(0);
  });

  it('promptStop ends a stalled stream promptly and keeps the partial text', async () => {
    const { p } = await boot({ extra: { chat: { generateTitles: false, stallTimeoutSeconds: 60 } } });
    llm().script([{ text: 'partial answer' }, { stall: 'forever' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.type === 'text' && m.params.role === 'assistant');
    const t0 = Date.now();
    p.notify(ECA.chatPromptStop, { chatId });
    await p.turnDone(chatId);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(2000); // the stream would otherwise never end
    expect(p.text(chatId)).toBe('partial answer');
    const statuses = p.messages.filter((m) => m.method === ECA.chatStatusChanged.method && m.params.chatId === chatId).map((m) => m.params.status);
    expect(statuses).toEqual(['running', 'stopping', 'idle']);
    // The partial text is part of the history the next turn sends.
    llm().script([{ text: 'next' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'again' });
    await p.turnDone(chatId, 2);
    const msgs = llm().requests.at(-1)!.body.messages;
    expect(msgs.find((m: any) => m.role === 'assistant').content).toBe('partial answer');
  });

  it('retries a 429 with progress text, then answers', async () => {
    const { p } = await boot();
    llm().script({ status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'slow down', type: 'rate_limit' } } }, [{ text: 'after retry' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('after retry');
    const progress = content(p, chatId, 'progress').map((c) => c.text);
    expect(progress.some((t) => /retrying/i.test(t) && /429/.test(t))).toBe(true);
  });

  it('runs two chats at once', async () => {
    const { p } = await boot();
    llm().onRequest = (_path, body) => {
      const user = body.messages.filter((m: any) => m.role === 'user').at(-1).content;
      const last = user === 'first' ? 'one' : 'two';
      return [{ delay: 100 }, { text: `answer ${last}` }];
    };
    try {
      const [a, b] = await Promise.all([p.request(ECA.chatPrompt, { message: 'first' }), p.request(ECA.chatPrompt, { message: 'second' })]);
      expect(a.result.chatId).not.toBe(b.result.chatId);
      await Promise.all([p.turnDone(a.result.chatId), p.turnDone(b.result.chatId)]);
      expect(p.text(a.result.chatId)).toBe('answer one');
      expect(p.text(b.result.chatId)).toBe('answer two');
    } finally {
      llm().onRequest = undefined;
    }
  });

  it('answers chat/queryContext with fuzzy file and directory matches', async () => {
    const { p, root } = await boot({ files: { 'src/components/Button.tsx': '', 'src/util.ts': '', 'README.md': '', 'ignored/x.ts': '', '.gitignore': 'ignored/\n' } });
    const res = await p.request(ECA.chatQueryContext, { query: 'button', contexts: [] });
    expect(res.result.contexts[0]).toMatchObject({ type: 'file', path: join(root, 'src/components/Button.tsx') });
    const dirs = await p.request(ECA.chatQueryContext, { query: 'compon', contexts: [] });
    expect(dirs.result.contexts.some((c: any) => c.type === 'directory' && c.path === join(root, 'src/components'))).toBe(true);
    const ign = await p.request(ECA.chatQueryContext, { query: 'ignored/x', contexts: [] });
    expect(ign.result.contexts.some((c: any) => String(c.path).includes('ignored'))).toBe(false);
  });

  it('answers chat/queryCommands and runs native commands', async () => {
    const { p } = await boot();
    const res = await p.request(ECA.chatQueryCommands, { query: '' });
    const names = res.result.commands.map((c: any) => c.name);
    for (const n of ['compact', 'costs', 'doctor', 'prompt-show', 'repo-map-show']) expect(names).toContain(n);
    const filtered = await p.request(ECA.chatQueryCommands, { query: 'cos' });
    expect(filtered.result.commands.map((c: any) => c.name)).toEqual(['costs']);
    const chatId = (await p.request(ECA.chatPrompt, { message: '/doctor' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId, 'system')).toMatch(/Default model: fake\/m1/);
    expect(llm().requests).toHaveLength(0);
  });

  it('sends contexts to the LLM: file with linesRange', async () => {
    const { p, root } = await boot({ files: { 'f.txt': 'l1\nl2\nl3\nl4\n' } });
    llm().script([{ text: 'seen' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'look', contexts: [{ type: 'file', path: join(root, 'f.txt'), linesRange: { start: 2, end: 3 } }] })).result.chatId;
    await p.turnDone(chatId);
    const user = llm().requests[0].body.messages.find((m: any) => m.role === 'user').content;
    expect(user).toContain('l2\nl3');
    // Lines of the file, not substrings: the random temp path may contain "l1" or "l4".
    expect(user).not.toMatch(/^l[14]$/m);
  });

  it('no model: chat/prompt answers login and says how to configure one', async () => {
    const home = tempDir();
    const p = track(new EcaProc({ home, config: { chat: { generateTitles: false } } }));
    await p.initialize(workspace());
    const res = await p.request(ECA.chatPrompt, { message: 'hi' });
    expect(res.result.status).toBe('login');
    const msg = await p.waitFor((m) => m.method === ECA.showMessage.method);
    expect(msg.params.message).toMatch(/OPENAI_API_KEY/);
    expect(msg.params.message).toMatch(/ANTHROPIC_API_KEY/);
  });

  it('chat/list and chat/open replay a chat after the server was killed mid-turn', async () => {
    const home = tempDir();
    const { p } = await boot({ home });
    llm().script([{ text: 'first answer' }], [{ text: 'partial ' }, { stall: 'forever' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'one' })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'two' });
    await p.waitFor((m) => m.params?.content?.type === 'text' && m.params.content.text === 'partial ');
    p.child.kill('SIGKILL');
    await p.exited;

    const { p: q } = await boot({ home });
    const list = await q.request(ECA.chatList, {});
    const chat = list.result.chats.find((c: any) => c.id === chatId);
    expect(chat).toBeDefined();
    expect(chat.status).toBe('idle');
    expect(chat.messageCount).toBeGreaterThanOrEqual(3);
    const opened = await q.request(ECA.chatOpen, { chatId });
    expect(opened.result).toMatchObject({ found: true, chatId });
    await q.waitFor((m) => m.method === ECA.chatCleared.method && m.params.chatId === chatId);
    await q.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.content.type === 'text' && /interrupted/.test(m.params.content.text));
    const replay = q.contents(chatId).map((c) => `${c.role}:${c.content.text ?? c.content.type}`);
    expect(replay).toEqual(expect.arrayContaining(['user:one', 'assistant:first answer', 'user:two']));
    expect((await q.request(ECA.chatOpen, { chatId: 'nope' })).result.found).toBe(false);
  });

  it('a client-minted chatId creates the chat and announces it; delete removes it', async () => {
    const { p } = await boot();
    llm().script([{ text: 'hey' }]);
    const res = await p.request(ECA.chatPrompt, { chatId: 'client-id-1', message: 'hi', contentId: 'c-1' });
    expect(res.result.chatId).toBe('client-id-1');
    await p.waitFor((m) => m.method === ECA.chatOpened.method && m.params.chatId === 'client-id-1');
    await p.turnDone('client-id-1');
    expect((await p.request(ECA.chatDelete, { chatId: 'client-id-1' })).result).toEqual({});
    await p.waitFor((m) => m.method === ECA.chatDeleted.method && m.params.chatId === 'client-id-1');
    expect((await p.request(ECA.chatList, {})).result.chats).toEqual([]);
  });
});

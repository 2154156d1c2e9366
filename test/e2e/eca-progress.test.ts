/**
 * What the ECA clients are told while patchbay starts up and while a tool call waits: `$/progress`
 * start-up tasks (ECA handlers.clj `initialized`), the "Waiting for tool call approval" progress
 * (ECA chat/tool_calls.clj), and config errors said in the chat as well as in `$/showMessage`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();
const FIXTURES = resolve(import.meta.dirname, '../fixtures');

const progress = (p: EcaProc): Array<{ type: string; taskId: string; title: string }> => p.messages.filter((m) => m.method === ECA.progress.method).map((m) => m.params);
const indexOf = (p: EcaProc, m: Msg): number => p.messages.indexOf(m);

describe('start-up tasks as $/progress', () => {
  it('every task ECA reports that patchbay does has one start and, after it, one finish; MCP servers finish once each has started or failed', async () => {
    const p = track(
      new EcaProc({
        home: tempDir(),
        config: fakeProviderConfig(llm().url, 'openai-chat', {
          mcpTimeoutSeconds: 2,
          mcpServers: {
            good: { command: process.execPath, args: [join(FIXTURES, 'mcp-crash.mjs')] },
            // Reads and never answers (and ends with its stdin): the task still finishes, once it has timed out.
            silent: { command: process.execPath, args: ['-e', 'process.stdin.resume()'] },
            missing: { command: 'definitely-not-a-command-xyz' },
          },
        }),
      }),
    );
    await p.initialize(workspace());
    const mcpDone = await p.waitFor((m) => m.method === ECA.progress.method && m.params.taskId === 'mcp-servers' && m.params.type === 'finish', 'mcp-servers finish', 20_000);
    await p.waitFor((m) => m.method === ECA.progress.method && m.params.taskId === 'models' && m.params.type === 'finish', 'models finish');

    // ECA's ids and titles for the same work (handlers.clj `initialized`).
    expect(progress(p)).toEqual(
      expect.arrayContaining([
        { type: 'start', taskId: 'models', title: 'Syncing models' },
        { type: 'finish', taskId: 'models', title: 'Syncing models' },
        { type: 'start', taskId: 'mcp-servers', title: 'Initializing MCP servers' },
        { type: 'finish', taskId: 'mcp-servers', title: 'Initializing MCP servers' },
      ]),
    );
    for (const id of ['models', 'mcp-servers']) {
      const mine = progress(p).filter((x) => x.taskId === id);
      expect(
        mine.map((x) => x.type),
        id,
      ).toEqual(['start', 'finish']);
    }

    // Nothing before the editor's `initialized` (ECA sends them from its handler).
    const firstProgress = p.messages.findIndex((m) => m.method === ECA.progress.method);
    const initAnswer = p.messages.findIndex((m) => m.id === 1 && m.method === undefined);
    expect(firstProgress).toBeGreaterThan(initAnswer);

    // The MCP task ends after every server has left "starting" (tool/serverUpdated says each).
    for (const [name, status] of [
      ['good', 'running'],
      ['silent', 'failed'],
      ['missing', 'failed'],
    ]) {
      const upd = p.messages.find((m) => m.method === ECA.toolServerUpdated.method && m.params.name === name && m.params.status === status);
      expect(upd, `${name} ${status}`).toBeDefined();
      expect(indexOf(p, upd!), name).toBeLessThan(indexOf(p, mcpDone));
    }

    // eca-desktop src/main/server.ts `recordInitProgress` / `maybeTransitionToRunning`: the app
    // leaves "Initializing" the first time no recorded task is in 'start'. That must be at the
    // last $/progress, not while a task is still to come.
    const tasks = new Map<string, string>();
    const all = progress(p);
    all.forEach((x, i) => {
      tasks.set(x.taskId, x.type);
      const done = [...tasks.values()].every((t) => t === 'finish');
      expect(done, `initialization looks done after ${JSON.stringify(x)}`).toBe(i === all.length - 1);
    });
  });

  it('with no MCP server both tasks still start and finish (eca-emacs eca--handle-progress: the mode line hides once none is "start")', async () => {
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === ECA.progress.method && m.params.taskId === 'mcp-servers' && m.params.type === 'finish', 'mcp-servers finish');
    await p.waitFor((m) => m.method === ECA.progress.method && m.params.taskId === 'models' && m.params.type === 'finish', 'models finish');
    const last = new Map(progress(p).map((x) => [x.taskId, x.type]));
    expect([...last]).toEqual(
      expect.arrayContaining([
        ['models', 'finish'],
        ['mcp-servers', 'finish'],
      ]),
    );
    expect(progress(p)).toHaveLength(4);
  });
});

describe('a tool call waiting for approval', () => {
  it('says "Waiting for tool call approval" right after toolCallRun (manualApproval) and "Calling tool" once approved', async () => {
    // ECA chat/tool_calls.clj: [:check-approval :approval-ask] → :send-progress with
    // "Waiting for tool call approval"; [:execution-approved :execution-start] →
    // :send-toolCallRunning then :send-progress "Calling tool". eca-chat.el
    // `eca-chat-content-received` ("progress" "running") shows the text as the chat's spinner.
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'anthropic') }));
    await p.initialize(workspace());
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'n.txt', content: 'x\n' } } }], [{ text: 'ok' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'write', contentId: 'u1' });
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w1', 'toolCallRun');
    expect(run.params.content.manualApproval).toBe(true);
    const waiting = await p.waitFor((m) => m.params?.content?.type === 'progress' && m.params.content.text === 'Waiting for tool call approval', 'the waiting text');
    expect(waiting.params).toEqual({ chatId: 'c1', role: 'system', content: { type: 'progress', state: 'running', text: 'Waiting for tool call approval' } });
    // Right after toolCallRun: nothing of the chat in between.
    const chatAfterRun = p.contents('c1').slice(p.contents('c1').indexOf(run.params) + 1);
    expect(chatAfterRun[0]).toBe(waiting.params);
    const approvedAt = p.messages.length;
    p.notify(ECA.chatToolCallApprove, { chatId: 'c1', toolCallId: 'w1' });
    await p.turnDone('c1');
    expect(indexOf(p, waiting)).toBeLessThan(approvedAt);
    const after = p.contents('c1').slice(p.contents('c1').indexOf(waiting.params) + 1);
    expect(after[0].content.type).toBe('toolCallRunning');
    expect(after[1]).toEqual({ chatId: 'c1', role: 'system', content: { type: 'progress', state: 'running', text: 'Calling tool' } });
    expect(p.contents('c1').filter((c) => c.content.text === 'Waiting for tool call approval')).toHaveLength(1);
  });

  it('an allowed call gets no waiting text', async () => {
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'anthropic') }));
    await p.initialize(workspace({ 'a.txt': 'alpha\n' }));
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'read', contentId: 'u1' });
    await p.turnDone('c1');
    expect(p.contents('c1').find((c) => c.content.type === 'toolCallRun')?.content.manualApproval).toBe(false);
    expect(p.contents('c1').filter((c) => c.content.text === 'Waiting for tool call approval')).toEqual([]);
  });
});

describe('config errors', () => {
  it('are said in the first chat too (VS Code and the desktop app never show $/showMessage), once', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    const file = join(home, '.config', 'patchbay', 'config.json');
    writeFileSync(file, '{\n  "welcomeMessage": "x"\n  "defaultModel": "y"\n}\n');
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    const shown = await p.waitFor((m) => m.method === ECA.showMessage.method, 'the $/showMessage');
    const expected = `Invalid config in ${file}: Invalid JSON at line 3, column 3: expected ','; file ignored`;
    expect(shown.params.message).toBe(expected);
    llm().script([{ text: 'one' }], [{ text: 'two' }], [{ text: 'three' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'hi', contentId: 'u1' });
    await p.turnDone('c1');
    // Before the user's message, as a system text of that chat (eca-chat.el renders any system text).
    const contents = p.contents('c1');
    expect(contents[0]).toEqual({ chatId: 'c1', role: 'system', content: { type: 'text', text: expected } });
    expect(contents[1]).toMatchObject({ role: 'user', content: { type: 'text', text: 'hi' } });
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'again', contentId: 'u2' });
    await p.turnDone('c1', 2);
    await p.request(ECA.chatPrompt, { chatId: 'c2', message: 'other', contentId: 'u3' });
    await p.turnDone('c2');
    const said = p.messages.filter((m) => m.method === ECA.chatContentReceived.method && m.params.content.text === expected);
    expect(said).toHaveLength(1);
  });

  it('a valid config says nothing in the chat', async () => {
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    llm().script([{ text: 'one' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'hi', contentId: 'u1' });
    await p.turnDone('c1');
    expect(p.contents('c1').filter((c) => c.role === 'system' && c.content.type === 'text')).toEqual([]);
  });
});

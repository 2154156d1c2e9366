import { describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

function start(config: Record<string, unknown>, home = tempDir()): EcaProc {
  return track(new EcaProc({ home, config }));
}

describe('more of the ECA surface', () => {
  it('uses editor/getDiagnostics only when the client declares it', async () => {
    const root = workspace({ 'a.ts': 'const x: number = "s";\n' });
    const p = start(fakeProviderConfig(llm().url));
    const uri = pathToFileURL(join(root, 'a.ts')).href;
    p.onServerRequest = (m) =>
      p.send({
        id: m.id,
        result: {
          diagnostics: [
            { uri, severity: 'error', source: 'tsserver', message: "Type 'string' is not assignable to type 'number'.", range: { start: { line: 0, character: 6 }, end: { line: 0, character: 7 } } },
          ],
        },
      });
    await p.initialize(root, { capabilities: { codeAssistant: { chat: true, editor: { diagnostics: true } } } });
    llm().script([{ toolCall: { id: 'd1', name: 'patchbay__editor_diagnostics', args: {} } }], [{ text: 'fixed' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'check' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.messages.some((m) => m.method === ECA.editorGetDiagnostics.method)).toBe(true);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content;
    expect(called.outputs[0].text).toMatch(/not assignable/);
    expect(called.outputs[0].text).toMatch(/a\.ts:1:7/);

    // Without the capability the server never sends the request.
    const q = start(fakeProviderConfig(llm().url));
    await q.initialize(root);
    llm().script([{ toolCall: { id: 'd2', name: 'patchbay__editor_diagnostics', args: {} } }], [{ text: 'ok' }]);
    const chat2 = (await q.request(ECA.chatPrompt, { message: 'check' })).result.chatId;
    await q.turnDone(chat2);
    expect(q.messages.some((m) => m.method === ECA.editorGetDiagnostics.method)).toBe(false);
    expect(q.contents(chat2).find((c) => c.content.type === 'toolCalled')!.content.outputs[0].text).toMatch(/diagnostics/i);
  });

  it("approve with save: 'session' stops asking for that tool in the chat", async () => {
    const root = workspace();
    const p = start(fakeProviderConfig(llm().url));
    await p.initialize(root);
    llm().script(
      [{ toolCall: { id: 's1', name: 'patchbay__write_file', args: { path: 'one.txt', content: '1' } } }],
      [{ toolCall: { id: 's2', name: 'patchbay__write_file', args: { path: 'two.txt', content: '2' } } }],
      [{ text: 'both written' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'write two files' })).result.chatId;
    const first = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 's1');
    expect(first.params.content.manualApproval).toBe(true);
    p.notify(ECA.chatToolCallApprove, { chatId, toolCallId: 's1', save: 'session' });
    const second = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 's2');
    expect(second.params.content.manualApproval).toBe(false);
    await p.turnDone(chatId);
    expect(readFileSync(join(root, 'two.txt'), 'utf8')).toBe('2');
  });

  it('edit_file reports a fileChange with the diff and counts', async () => {
    const root = workspace({ 'm.ts': 'const a = 1;\nconst b = 2;\n' });
    const p = start(fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { allow: { edit_file: {} } } } }));
    await p.initialize(root);
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'm.ts', original_content: 'const b = 2;', new_content: 'const b = 3;\nconst c = 4;' } } }], [{ text: 'edited' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'edit' })).result.chatId;
    await p.turnDone(chatId);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content;
    expect(called.details).toMatchObject({ type: 'fileChange', linesAdded: 2, linesRemoved: 1 });
    expect(called.details.diff).toContain('-const b = 2;');
    expect(readFileSync(join(root, 'm.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\nconst c = 4;\n');
  });

  it('an invalid workspace config names the file and key, and the rest still applies', async () => {
    const root = workspace();
    mkdirSync(join(root, '.patchbay'));
    const file = join(root, '.patchbay', 'config.json');
    writeFileSync(file, JSON.stringify({ welcomeMessage: 'Hello from the workspace', toolCall: { approval: { byDefault: 'sometimes' } } }));
    const p = start(fakeProviderConfig(llm().url));
    const init = await p.initialize(root);
    expect(init.result.chatWelcomeMessage).toBe('Hello from the workspace');
    const msg = await p.waitFor((m) => m.method === ECA.showMessage.method);
    expect(msg.params.message).toContain(file);
    expect(msg.params.message).toContain('toolCall.approval.byDefault');
    llm().script([{ text: 'still works' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still works');
  });

  it('a broken JSON config file is reported and skipped', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    const file = join(home, '.config', 'patchbay', 'config.json');
    // Comments and trailing commas are fine (JSONC); a missing comma is not.
    writeFileSync(file, '{ "defaultModel": "x" "logLevel": "debug" }');
    const p = start(fakeProviderConfig(llm().url), home);
    await p.initialize(workspace());
    const msg = await p.waitFor((m) => m.method === ECA.showMessage.method);
    expect(msg.params.message).toContain(file);
    const cfg = await p.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(cfg.params.chat.selectModel).toBe('fake/m1');
  });

  it('pureConfig ignores PATCHBAY_CONFIG', async () => {
    const p = start(fakeProviderConfig(llm().url));
    await p.initialize(workspace(), { initializationOptions: { pureConfig: true, welcomeMessage: 'pure', gateway: { port: 0 } } });
    const cfg = await p.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(cfg.params.chat.models).not.toContain('fake/m1');
    expect(cfg.params.chat.welcomeMessage).toBe('pure');
  });

  it('a failing tool is a result the LLM reads, not a crash', async () => {
    const root = workspace();
    const p = start(fakeProviderConfig(llm().url));
    await p.initialize(root);
    llm().script([{ toolCall: { id: 'f1', name: 'patchbay__read_file', args: { path: 'missing.txt' } } }], [{ text: 'it is missing' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read' })).result.chatId;
    await p.turnDone(chatId);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content;
    expect(called.error).toBe(true);
    const toolMsg = llm()
      .requests.at(-1)!
      .body.messages.find((m: any) => m.role === 'tool');
    expect(toolMsg.content).toMatch(/missing\.txt/);
    expect(p.text(chatId)).toBe('it is missing');
  });

  it('an LLM error after retries shows in the chat and the server keeps serving', async () => {
    const p = start(fakeProviderConfig(llm().url, 'openai-chat', { chat: { generateTitles: false, maxRetries: 1 } }));
    await p.initialize(workspace());
    llm().script({ status: 500, body: { error: { message: 'boom' } } }, { status: 500, body: { error: { message: 'boom' } } }, [{ text: 'recovered' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId, 'system')).toMatch(/500/);
    await p.request(ECA.chatPrompt, { chatId, message: 'again' });
    await p.turnDone(chatId, 2);
    expect(p.text(chatId)).toBe('recovered');
  });

  it('a stalled stream times out with a clear error, and the log file records the session', async () => {
    const home = tempDir();
    const p = start(fakeProviderConfig(llm().url, 'openai-chat', { chat: { generateTitles: false, maxRetries: 0, stallTimeoutSeconds: 0.3 } }), home);
    await p.initialize(workspace());
    llm().script([{ text: 'start ' }, { stall: 'forever' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('start ');
    expect(p.text(chatId, 'system')).toMatch(/stalled/i);
    const log = readFileSync(join(home, '.patchbay', 'logs', 'server.log'), 'utf8');
    expect(log).toMatch(/initialized by test/);
    expect(log).not.toContain('test-key');
  });

  it('shutdown during a stalled turn answers promptly, exits 0 and keeps the partial answer', async () => {
    const home = tempDir();
    const p = start(fakeProviderConfig(llm().url), home);
    await p.initialize(workspace());
    llm().script([{ text: 'half an answer' }, { stall: 'forever' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.type === 'text' && m.params.role === 'assistant');
    const res = await p.request(ECA.shutdown);
    expect(res.result).toBeNull();
    p.notify(ECA.exit);
    expect(await p.exited).toBe(0);

    const q = start(fakeProviderConfig(llm().url), home);
    await q.initialize(workspace());
    const list = await q.request(ECA.chatList, {});
    expect(list.result.chats.find((c: { id: string }) => c.id === chatId)).toMatchObject({ status: 'idle', messageCount: 2 });
    await q.request(ECA.chatOpen, { chatId });
    await q.waitFor((m) => m.params?.content?.type === 'text' && m.params.content.text === 'half an answer');
  });
});

/**
 * `chat/update` (rename, trust) and trust mode, as the ECA server does them: eca
 * `src/eca/features/chat.clj` `update-chat` (title → a `metadata` content and the store; trust applies
 * at once) and `prompt` (`trust` on `chat/prompt`; a new chat without it takes `chat.defaultTrust`),
 * `src/eca/features/tools.clj` `approval-decision` (trust promotes ask to allow, never overrides deny).
 * eca-webview `src/protocol.ts` sends `chat/update` with `{chatId, title}` and `{chatId, trust}`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(opts: { extra?: Record<string, unknown>; home?: string; root?: string } = {}) {
  const root = opts.root ?? workspace({ 'a.txt': 'alpha\n' });
  const p = track(new EcaProc({ home: opts.home ?? tempDir(), config: fakeProviderConfig(llm().url, 'openai-chat', opts.extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root };
}

/** A turn whose model writes `file` with write_file, then answers; returns the toolCallRun content. */
async function writeTurn(p: EcaProc, params: Record<string, unknown>, file: string, id = 'w1') {
  llm().script([{ toolCall: { id, name: 'patchbay__write_file', args: { path: file, content: 'x\n' } } }], [{ text: 'done' }]);
  const res = await p.request(ECA.chatPrompt, { message: 'write it', ...params });
  const chatId = res.result.chatId as string;
  const run = await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && m.params.content.type === 'toolCallRun' && m.params.content.id === id);
  return { chatId, run: run.params.content };
}

describe('chat/update and trust mode', () => {
  it('renames a chat: a metadata content, the list and a restart show the title; an unknown chat is answered {} and nothing changes', async () => {
    const home = tempDir();
    const { p } = await boot({ home });
    llm().script([{ text: 'hi' }]);
    const { chatId } = (await p.request(ECA.chatPrompt, { message: 'hello' })).result;
    await p.turnDone(chatId);
    expect((await p.request(ECA.chatUpdate, { chatId, title: '  My   chat ' })).result).toEqual({});
    const meta = await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.content.type === 'metadata');
    expect(meta.params).toMatchObject({ chatId, role: 'system', content: { type: 'metadata', title: 'My chat' } });
    expect((await p.request(ECA.chatUpdate, { chatId: 'no-such-chat', title: 'x' })).result).toEqual({});
    await p.stop();
    const again = await boot({ home });
    const list = (await again.p.request(ECA.chatList, {})).result.chats;
    expect(list).toEqual([expect.objectContaining({ id: chatId, title: 'My chat' })]);
  });

  it('trust on: a call that would ask runs at once; off again: it asks', async () => {
    const { p, root } = await boot();
    llm().script([{ text: 'hi' }]);
    const { chatId } = (await p.request(ECA.chatPrompt, { message: 'hello' })).result;
    await p.turnDone(chatId);
    await p.request(ECA.chatUpdate, { chatId, trust: true });
    const trusted = await writeTurn(p, { chatId }, 'b.txt');
    expect(trusted.run).toMatchObject({ id: 'w1', name: 'write_file', manualApproval: false });
    await p.turnDone(chatId, 2);
    expect(existsSync(join(root, 'b.txt'))).toBe(true);
    // Resume says so too (eca chat.clj open-chat!: `selection.trust`, and a chat-scoped selectTrust).
    const opened = await p.request(ECA.chatOpen, { chatId });
    expect(opened.result.selection).toMatchObject({ trust: true });
    expect(p.messages.some((m) => m.method === ECA.configUpdated.method && m.params.chatId === chatId && m.params.chat.selectTrust === true)).toBe(true);

    await p.request(ECA.chatUpdate, { chatId, trust: false });
    const asked = await writeTurn(p, { chatId }, 'c.txt', 'w2');
    expect(asked.run).toMatchObject({ manualApproval: true });
    p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'w2' });
    await p.turnDone(chatId, 3);
    expect(existsSync(join(root, 'c.txt'))).toBe(false);
  });

  it('trust never overrides deny, and a path outside the workspace still asks', async () => {
    const { p } = await boot({ extra: { toolCall: { approval: { deny: { shell_command: {} } } } } });
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'echo hi' } } }], [{ text: 'ok' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'run', trust: true });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.contents(chatId).find((c) => c.content.type === 'toolCallRejected')?.content).toMatchObject({ id: 's1', reason: 'userConfigDeny' });

    const outside = join(tempDir(), 'outside.txt');
    const o = await writeTurn(p, { chatId }, outside);
    expect(o.run).toMatchObject({ manualApproval: true });
    p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'w1' });
    await p.turnDone(chatId, 2);
    expect(existsSync(outside)).toBe(false);
  });

  it('chat.defaultTrust: a new chat starts trusted, and stays so after a restart', async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'alpha\n' });
    const { p } = await boot({ home, root, extra: { chat: { generateTitles: false, maxRetries: 3, defaultTrust: true } } });
    const first = await writeTurn(p, {}, 'd.txt');
    expect(first.run).toMatchObject({ manualApproval: false });
    await p.turnDone(first.chatId);
    await p.stop();
    // Without the default now: the chat keeps the trust it was given.
    const again = await boot({ home, root });
    const second = await writeTurn(again.p, { chatId: first.chatId }, 'e.txt', 'w2');
    expect(second.run).toMatchObject({ manualApproval: false });
    await again.p.turnDone(first.chatId);
    expect(existsSync(join(root, 'e.txt'))).toBe(true);
  });
});

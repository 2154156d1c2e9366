/**
 * `chat/rollback` with file checkpoints, over the built binary's stdio.
 *
 * Follows eca `src/eca/features/chat.clj` `rollback-chat` (messages before the one whose contentId
 * matches are kept; files first, then `chat/cleared {messages: true}` and the kept contents, all
 * before the answer `{}`; an empty include means both) and `src/eca/features/tools/filesystem.clj`
 * `:rollback-changes` (each change undone, newest first, back to the content before it), as
 * eca-emacs `eca-chat.el` `eca-chat--rollback` sends it (`{chatId, contentId, include}`, include
 * `["messages","tools"]`, `["messages"]` or `["tools"]`, a synchronous request) and eca-webview
 * `rollbackChat` (`{chatId, contentId}`). patchbay's own additions: a file changed by hand since
 * is reported (`notRestored` and a system text) instead of overwritten, and refusals are errors.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, useFakeLlmSuite, workspace, type Msg } from './harness.js';
import { rollbackSupport } from './rollback-support.js';

const { llm, track } = useFakeLlmSuite();

/** Not valid UTF-8, CRLF line ends, no trailing newline: a text round trip would change it. */
const ODD = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x01]), Buffer.from('line one\r\nline two\r\nend', 'latin1'), Buffer.from([0xe9, 0x80])]);

const { boot, turn } = rollbackSupport(llm, track);

/** The index in `p.messages` of the first message matching `pred` at or after `from`. */
function indexOf(p: EcaProc, pred: (m: Msg) => boolean, from = 0): number {
  return p.messages.findIndex((m, i) => i >= from && pred(m));
}

async function historyLabels(p: EcaProc, chatId: string): Promise<string[]> {
  const h = (await p.request(ECA.chatHistory, { chatId })).result;
  return h.contents.filter((c: any) => c.content.type === 'text').map((c: any) => `${c.role} ${c.content.text}`);
}

/** Turn 1 talks; turn 2 creates new.txt, edits odd.bin, moves old.txt; turn 3 edits odd.bin again. */
async function changes(p: EcaProc, chatId: string, root: string): Promise<void> {
  await turn(p, chatId, 1, 'u1', 'first question', [], 'first answer');
  await turn(
    p,
    chatId,
    2,
    'u2',
    'make changes',
    [
      { id: 'w1', name: 'write_file', args: { path: 'new.txt', content: 'brand new\n' } },
      { id: 'e1', name: 'edit_file', args: { path: 'odd.bin', original_content: 'line two', new_content: 'LINE TWO' } },
      { id: 'm1', name: 'move_file', args: { source: join(root, 'old.txt'), destination: join(root, 'sub', 'moved.txt') } },
    ],
    'changed',
  );
  await turn(p, chatId, 3, 'u3', 'edit again', [{ id: 'e2', name: 'edit_file', args: { path: 'odd.bin', original_content: 'end', new_content: 'the end\n' } }], 'edited');
  expect(readFileSync(join(root, 'odd.bin'))).not.toEqual(ODD);
  expect(existsSync(join(root, 'new.txt'))).toBe(true);
  expect(existsSync(join(root, 'old.txt'))).toBe(false);
}

function oddWorkspace(): string {
  const root = workspace({ 'old.txt': 'old content\n' });
  writeFileSync(join(root, 'odd.bin'), ODD);
  return root;
}

function expectRestored(root: string): void {
  expect(existsSync(join(root, 'new.txt'))).toBe(false);
  expect(readFileSync(join(root, 'odd.bin')).equals(ODD)).toBe(true);
  expect(readFileSync(join(root, 'old.txt'), 'utf8')).toBe('old content\n');
  expect(existsSync(join(root, 'sub', 'moved.txt'))).toBe(false);
}

describe('chat/rollback', () => {
  it('restores files and messages: cleared and replayed before the answer {}, and the next LLM request lacks the removed turns', async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    await changes(p, 'c1', root);

    const from = p.messages.length;
    const res = await p.request(ECA.chatRollback, { chatId: 'c1', contentId: 'u2', include: ['messages', 'tools'] });
    expect(res.result).toEqual({});
    expectRestored(root);

    // chat.clj rollback-chat: chat/cleared {messages: true}, then the kept contents, then the answer.
    const cleared = indexOf(p, (m) => m.method === ECA.chatCleared.method && m.params.chatId === 'c1', from);
    const answered = indexOf(p, (m) => m.id === res.id && m.method === undefined, from);
    expect(cleared).toBeGreaterThan(-1);
    expect(p.messages[cleared].params).toEqual({ chatId: 'c1', messages: true });
    const replayed = p.messages.slice(cleared + 1, answered).filter((m) => m.method === ECA.chatContentReceived.method && m.params.content.type === 'text');
    expect(replayed.map((m) => `${m.params.role} ${m.params.content.text}`)).toEqual(['user first question', 'assistant first answer']);
    expect(replayed[0].params.content.contentId).toBe('u1');
    expect(await historyLabels(p, 'c1')).toEqual(['user first question', 'assistant first answer']);

    llm().reset();
    await turn(p, 'c1', 4, 'u4', 'after rollback', [], 'fresh');
    const sent = (llm().requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role !== 'system');
    expect(sent).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'after rollback' },
    ]);
  });

  it('a file the user changed by hand since is reported (answer and chat) and left alone; the rest is restored', async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    await changes(p, 'c2', root);
    writeFileSync(join(root, 'new.txt'), 'the user wrote this\n');

    // eca-webview sends no include: both.
    const res = await p.request(ECA.chatRollback, { chatId: 'c2', contentId: 'u2' });
    expect(res.result.notRestored).toEqual([{ path: join(root, 'new.txt'), reason: expect.stringMatching(/changed after the tool call/) }]);
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('the user wrote this\n');
    expect(readFileSync(join(root, 'odd.bin')).equals(ODD)).toBe(true);
    expect(readFileSync(join(root, 'old.txt'), 'utf8')).toBe('old content\n');

    // Every plugin shows a system text: after the replay, before the answer, and kept in the chat.
    const answered = indexOf(p, (m) => m.id === res.id && m.method === undefined);
    const said = indexOf(p, (m) => m.method === ECA.chatContentReceived.method && m.params.role === 'system' && /Rollback left these files/.test(m.params.content.text ?? ''));
    expect(said).toBeGreaterThan(indexOf(p, (m) => m.method === ECA.chatCleared.method));
    expect(said).toBeLessThan(answered);
    expect(p.messages[said].params.content.text).toContain(join(root, 'new.txt'));
    expect((await historyLabels(p, 'c2')).at(-1)).toMatch(/^system Rollback left these files/);
  });

  it("include ['messages'] leaves the files; include ['tools'] restores them and keeps the messages (no chat/cleared)", async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    await changes(p, 'c3', root);
    const changed = readFileSync(join(root, 'odd.bin'));

    const tools = await p.request(ECA.chatRollback, { chatId: 'c3', contentId: 'u3', include: ['tools'] });
    expect(tools.result).toEqual({});
    // Only turn 3's edit is undone: odd.bin is as turn 2 left it.
    expect(readFileSync(join(root, 'odd.bin')).equals(changed)).toBe(false);
    expect(readFileSync(join(root, 'odd.bin'), 'latin1')).toContain('LINE TWO');
    expect(readFileSync(join(root, 'odd.bin'), 'latin1')).not.toContain('the end');
    expect(p.messages.some((m) => m.method === ECA.chatCleared.method)).toBe(false);
    expect(await historyLabels(p, 'c3')).toContain('user edit again');

    const messages = await p.request(ECA.chatRollback, { chatId: 'c3', contentId: 'u2', include: ['messages'] });
    expect(messages.result).toEqual({});
    expect(existsSync(join(root, 'new.txt'))).toBe(true);
    expect(readFileSync(join(root, 'odd.bin'), 'latin1')).toContain('LINE TWO');
    expect(await historyLabels(p, 'c3')).toEqual(['user first question', 'assistant first answer']);
  });

  it('survives a restart: checkpoints and the truncated chat are in SQLite', async () => {
    const root = oddWorkspace();
    const first = await boot(root);
    await changes(first.p, 'c4', root);
    await first.p.stop();

    const second = await boot(root, first.home);
    const res = await second.p.request(ECA.chatRollback, { chatId: 'c4', contentId: 'u2', include: ['messages', 'tools'] });
    expect(res.result).toEqual({});
    expectRestored(root);
    await second.p.stop();

    const third = await boot(root, first.home);
    expect(await historyLabels(third.p, 'c4')).toEqual(['user first question', 'assistant first answer']);
  });

  it('a fork keeps the checkpoints of the calls it keeps: rolling the fork back restores the files', async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    await changes(p, 'c5', root);
    expect((await p.request(ECA.chatFork, { chatId: 'c5', contentId: 'e2' })).result).toEqual({ chatId: expect.any(String) });
    const opened = await p.waitFor((m) => m.method === ECA.chatOpened.method && m.params.chatId !== 'c5');
    const res = await p.request(ECA.chatRollback, { chatId: opened.params.chatId, contentId: 'u2', include: ['tools'] });
    expect(res.result).toEqual({});
    expectRestored(root);
  });

  it('refuses an unknown chat, an unknown content id, a bad include and a rollback while a turn runs, changing nothing', async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    await changes(p, 'c6', root);
    const before = readFileSync(join(root, 'odd.bin'));
    const labels = await historyLabels(p, 'c6');

    const noChat = await p.request(ECA.chatRollback, { chatId: 'nope', contentId: 'u2' });
    expect(noChat.error).toMatchObject({ code: -32602, message: expect.stringContaining('Chat nope not found') });
    const noContent = await p.request(ECA.chatRollback, { chatId: 'c6', contentId: 'no-such-id' });
    expect(noContent.error).toMatchObject({ code: -32602, message: expect.stringContaining('no message with content id no-such-id') });
    const badInclude = await p.request(ECA.chatRollback, { chatId: 'c6', contentId: 'u2', include: ['everything'] });
    expect(badInclude.error).toMatchObject({ code: -32602 });

    // A turn waiting for approval (no trust) is a running turn.
    llm().script([{ toolCall: { id: 'w9', name: 'patchbay__write_file', args: { path: 'late.txt', content: 'late\n' } } }], [{ text: 'ok' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c6', message: 'one more', contentId: 'u9', trust: false });
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w9');
    const busy = await p.request(ECA.chatRollback, { chatId: 'c6', contentId: 'u2' });
    expect(busy.error).toMatchObject({ code: -32602, message: expect.stringContaining('is answering a prompt') });
    p.notify(ECA.chatToolCallReject, { chatId: 'c6', toolCallId: 'w9' });
    await p.turnDone('c6', 4);

    // A prompt accepted but not started yet counts too: both requests go out in one write, so the
    // rollback is read before the queued turn begins (it would otherwise run on a cut history).
    llm().script([{ text: 'queued answer' }]);
    const [queued, early] = await Promise.all([p.request(ECA.chatPrompt, { chatId: 'c6', message: 'queued one', contentId: 'u10' }), p.request(ECA.chatRollback, { chatId: 'c6', contentId: 'u2' })]);
    expect(queued.result.status).toBe('prompting');
    expect(early.error).toMatchObject({ code: -32602, message: expect.stringContaining('is answering a prompt') });
    await p.turnDone('c6', 5);

    expect(readFileSync(join(root, 'odd.bin')).equals(before)).toBe(true);
    expect(existsSync(join(root, 'new.txt'))).toBe(true);
    expect((await historyLabels(p, 'c6')).slice(0, labels.length)).toEqual(labels);
    expect(p.messages.some((m) => m.method === ECA.chatCleared.method)).toBe(false);
  });

  it('rolls back to a flag (chat/addFlag): the flag and what follows go, files changed after it are restored', async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    await turn(p, 'c7', 1, 'u1', 'first question', [], 'first answer');
    // As in ECA (chat.clj `find-last-message-idx`), a flag on a user message's id sits right after
    // that message, so the rollback to it also takes the answer that followed.
    await p.request(ECA.chatAddFlag, { chatId: 'c7', contentId: 'u1', text: 'before changes' });
    const flag = p.contents('c7').find((c) => c.content.type === 'flag')!.content;
    await turn(p, 'c7', 2, 'u2', 'make a file', [{ id: 'w1', name: 'write_file', args: { path: 'new.txt', content: 'brand new\n' } }], 'made');
    expect(existsSync(join(root, 'new.txt'))).toBe(true);

    const r = await p.request(ECA.chatRollback, { chatId: 'c7', contentId: flag.contentId });
    expect(r.error).toBeUndefined();
    expect(existsSync(join(root, 'new.txt'))).toBe(false);
    const h = (await p.request(ECA.chatHistory, { chatId: 'c7' })).result;
    expect(
      h.contents.map((c: any) => (c.content.type === 'text' ? `${c.role} ${c.content.text}` : c.content.type)).filter((x: string) => !x.startsWith('system') && x !== 'progress' && x !== 'usage'),
    ).toEqual(['user first question']);
  });

  it('the user message id is unique in the chat: a repeated client id or a requestId numbered from 0 again (eca-vscode after a reload) never makes a rollback cut at the wrong message', async () => {
    const root = oddWorkspace();
    const { p } = await boot(root);
    // eca-webview sends `requestId` (its per-chat counter, 0 again after a reload) and reads the id
    // back from the echoed user message (redux/slices/chat.ts `contentId: content.contentId`).
    const echoed = (text: string): string => p.contents('c8').find((c) => c.role === 'user' && c.content.text === text)!.content.contentId;
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'first.txt', content: '1\n' } } }], [{ text: 'one' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c8', message: 'first', requestId: 0, trust: true });
    await p.turnDone('c8', 1);
    llm().script([{ toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: 'second.txt', content: '2\n' } } }], [{ text: 'two' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c8', message: 'second', requestId: 0, trust: true });
    await p.turnDone('c8', 2);
    llm().script([{ text: 'three' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c8', message: 'third', contentId: echoed('second'), trust: true });
    await p.turnDone('c8', 3);

    const ids = ['first', 'second', 'third'].map(echoed);
    expect(new Set(ids).size).toBe(3);
    expect(ids).not.toContain('0');

    // Two prompts queued together with one id: checked against each other when each turn starts.
    llm().script([{ text: 'q1' }], [{ text: 'q2' }]);
    await Promise.all([p.request(ECA.chatPrompt, { chatId: 'c8', message: 'queued a', contentId: 'dup' }), p.request(ECA.chatPrompt, { chatId: 'c8', message: 'queued b', contentId: 'dup' })]);
    await p.turnDone('c8', 5);
    expect(echoed('queued a')).toBe('dup');
    expect(echoed('queued b')).not.toBe('dup');

    // Rollback on the FIRST message goes back to before it: both files go, all three prompts go.
    const r = await p.request(ECA.chatRollback, { chatId: 'c8', contentId: ids[0] });
    expect(r.error).toBeUndefined();
    expect(existsSync(join(root, 'first.txt'))).toBe(false);
    expect(existsSync(join(root, 'second.txt'))).toBe(false);
    expect(await historyLabels(p, 'c8')).toEqual([]);
  });
});

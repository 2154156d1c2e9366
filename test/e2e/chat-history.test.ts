/**
 * `chat/history` (paged, opaque cursors) and `chat/fork`, with ECA's shapes, order and errors.
 *
 * History follows eca `src/eca/features/chat/history.clj` `window-messages` and `chat.clj`
 * `fetch-history`, as eca-emacs `eca-chat.el` `eca-chat-load-older-history` uses them: it sends
 * `{chatId, before: beforeCursor, limit}`, prepends `contents`, keeps `meta.beforeCursor` for the
 * next page (none left when null), and reads a failure from `error.code` ("cursor_expired").
 * Fork follows eca `chat.clj` `fork-chat` (`find-last-message-idx`, `commands.clj` `fork-title`),
 * as eca-emacs `eca-chat--fork-from-flag` sends it: `{chatId, contentId}`, answered `{chatId}` of the new chat.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(): Promise<EcaProc> {
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
  await p.initialize(workspace());
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** A chat of three turns: prompts "q1".."q3" (content ids u1..u3), answers "a1".."a3". */
async function threeTurns(p: EcaProc, chatId: string): Promise<void> {
  for (const n of [1, 2, 3]) {
    llm().script([{ text: `a${n}` }]);
    await p.request(ECA.chatPrompt, { chatId, message: `q${n}`, contentId: `u${n}` });
    await p.turnDone(chatId, n);
  }
}

/** A page's contents as short labels. */
function labels(contents: Array<{ role: string; content: any }>): string[] {
  return contents.map((c) => `${c.role} ${c.content.type} ${c.content.text ?? c.content.title ?? ''}`.trim());
}

describe('chat/history', () => {
  it('pages newest-first with before cursors until none is left, with meta as ECA counts it', async () => {
    const p = await boot();
    await threeTurns(p, 'c-h');

    // eca-emacs asks with the page size as `limit`; the first page is the newest.
    const first = (await p.request(ECA.chatHistory, { chatId: 'c-h', limit: 2 })).result;
    expect(labels(first.contents)).toEqual(['user text q3', 'assistant text a3']);
    expect(first.contents[0]).toEqual({ chatId: 'c-h', role: 'user', content: { type: 'text', text: 'q3', contentId: 'u3' } });
    expect(first.meta).toMatchObject({ total: 6, returned: 2, afterCursor: null, compactionCursor: null });
    expect(typeof first.meta.beforeCursor).toBe('string');

    const second = (await p.request(ECA.chatHistory, { chatId: 'c-h', before: first.meta.beforeCursor, limit: 2 })).result;
    expect(labels(second.contents)).toEqual(['user text q2', 'assistant text a2']);
    expect(second.meta).toMatchObject({ total: 6, returned: 2 });
    expect(typeof second.meta.afterCursor).toBe('string');

    const third = (await p.request(ECA.chatHistory, { chatId: 'c-h', before: second.meta.beforeCursor, limit: 2 })).result;
    expect(labels(third.contents)).toEqual(['user text q1', 'assistant text a1']);
    // At the start: eca-emacs removes its "Load older messages" control.
    expect(third.meta).toMatchObject({ total: 6, returned: 2, beforeCursor: null });

    // An `after` cursor alone pages forward (history.clj: the oldest `limit` after it).
    const forward = (await p.request(ECA.chatHistory, { chatId: 'c-h', after: third.meta.afterCursor, limit: 2 })).result;
    expect(labels(forward.contents)).toEqual(['user text q2', 'assistant text a2']);

    // No window: the whole chat, in order.
    const all = (await p.request(ECA.chatHistory, { chatId: 'c-h' })).result;
    expect(labels(all.contents)).toEqual(['user text q1', 'assistant text a1', 'user text q2', 'assistant text a2', 'user text q3', 'assistant text a3']);
    expect(all.meta).toEqual({ total: 6, returned: 6, beforeCursor: null, afterCursor: null, compactionCursor: null });
  });

  it('a cursor into a cleared chat is cursor_expired, an unknown chat chat_not_found, both in the result', async () => {
    const p = await boot();
    await threeTurns(p, 'c-x');
    const page = (await p.request(ECA.chatHistory, { chatId: 'c-x', limit: 2 })).result;
    await p.request(ECA.chatClear, { chatId: 'c-x' });
    // New messages take the cleared ones' positions (the cursor's among them): it must still not point at them.
    for (const [n, text] of [
      [4, 'fresh'],
      [5, 'again'],
      [6, 'third'],
    ] as const) {
      llm().script([{ text: `${text} answer` }]);
      await p.request(ECA.chatPrompt, { chatId: 'c-x', message: text });
      await p.turnDone('c-x', n);
    }
    expect((await p.request(ECA.chatHistory, { chatId: 'c-x' })).result.meta.total).toBe(6);

    const stale = await p.request(ECA.chatHistory, { chatId: 'c-x', before: page.meta.beforeCursor, limit: 2 });
    expect(stale.error).toBeUndefined();
    expect(stale.result).toEqual({ error: { code: 'cursor_expired', message: expect.stringMatching(/refetch the latest page/) } });
    const junk = await p.request(ECA.chatHistory, { chatId: 'c-x', before: 'not-a-cursor' });
    expect(junk.result.error.code).toBe('cursor_expired');

    const unknown = await p.request(ECA.chatHistory, { chatId: 'nope' });
    expect(unknown.result).toEqual({ error: { code: 'chat_not_found', message: 'Chat nope not found' } });
    // Bad params are the client's fault: −32602, and the server goes on.
    expect((await p.request(ECA.chatHistory, { chatId: 'c-x', limit: 'ten' })).error?.code).toBe(-32602);
    expect(labels((await p.request(ECA.chatHistory, { chatId: 'c-x', limit: 2 })).result.contents)).toEqual(['user text third', 'assistant text third answer']);
  });
});

describe('chat/open with a window', () => {
  // eca-emacs `eca-chat-resume` opens with `limit` (eca-chat-history-page-size) and pages older
  // from `meta.beforeCursor` through `chat/history` (`eca-chat-load-older-history`).
  it('replays only the newest page and answers meta to page older with', async () => {
    const p = await boot();
    await threeTurns(p, 'c-o');
    const from = p.messages.length;
    const res = await p.request(ECA.chatOpen, { chatId: 'c-o', limit: 2 });
    const replayed = p.messages.slice(from).filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === 'c-o');
    expect(labels(replayed.map((m) => m.params))).toEqual(['user text q3', 'assistant text a3', 'system metadata']);
    expect(res.result.meta).toMatchObject({ total: 6, returned: 2, afterCursor: null, compactionCursor: null });
    const older = (await p.request(ECA.chatHistory, { chatId: 'c-o', before: res.result.meta.beforeCursor, limit: 50 })).result;
    expect(labels(older.contents)).toEqual(['user text q1', 'assistant text a1', 'user text q2', 'assistant text a2']);
    expect(older.meta.beforeCursor).toBeNull();
  });

  it('a stale cursor is answered cursor_expired, with no replay (ECA open-chat!)', async () => {
    const p = await boot();
    await threeTurns(p, 'c-s');
    const first = (await p.request(ECA.chatHistory, { chatId: 'c-s', limit: 2 })).result;
    await p.request(ECA.chatClear, { chatId: 'c-s' });
    const from = p.messages.length;
    const res = await p.request(ECA.chatOpen, { chatId: 'c-s', before: first.meta.beforeCursor });
    expect(res.result).toEqual({ found: true, chatId: 'c-s', error: { code: 'cursor_expired', message: expect.any(String) } });
    expect(p.messages.slice(from).some((m) => m.method === ECA.chatOpened.method || m.method === ECA.chatContentReceived.method)).toBe(false);
  });
});

/** What came from the server after message `from` up to the answer, as short labels. */
function sequence(p: EcaProc, from: number, answer: Msg): string[] {
  const out: string[] = [];
  for (const m of p.messages.slice(from)) {
    if (m === answer) return [...out, 'answer'];
    if (m.method === ECA.chatContentReceived.method) out.push(`${m.params.chatId} ${labels([m.params])[0]}`);
    else if (m.method?.startsWith('chat/')) out.push(`${m.method} ${JSON.stringify(m.params)}`);
  }
  throw new Error('the answer is not among the messages');
}

describe('chat/fork', () => {
  it('makes a chat of the messages up to the content id, announces it as ECA does, and its next prompt sends only those', async () => {
    const p = await boot();
    await threeTurns(p, 'c-f');
    await p.request(ECA.chatUpdate, { chatId: 'c-f', title: 'Parser' });

    const from = p.messages.length;
    const res = await p.request(ECA.chatFork, { chatId: 'c-f', contentId: 'u2' });
    const opened = p.messages.slice(from).find((m) => m.method === ECA.chatOpened.method);
    const forkId: string = opened?.params.chatId;
    // ECA 0.157 answers the new chat's id.
    expect(res.result).toEqual({ chatId: forkId });
    expect(forkId).not.toBe('c-f');
    expect(sequence(p, from, res)).toEqual([
      `chat/opened {"chatId":"${forkId}","title":"Parser (2)"}`,
      `${forkId} user text q1`,
      `${forkId} assistant text a1`,
      `${forkId} user text q2`,
      `${forkId} system metadata Parser (2)`,
      'c-f system text Chat forked to: Parser (2)',
      'answer',
    ]);

    const list = (await p.request(ECA.chatList, {})).result.chats;
    expect(list.find((c: any) => c.id === forkId)).toMatchObject({ title: 'Parser (2)', messageCount: 3, model: 'fake/m1' });
    expect(list.find((c: any) => c.id === 'c-f')).toMatchObject({ messageCount: 6 });
    expect(labels((await p.request(ECA.chatHistory, { chatId: forkId })).result.contents)).toEqual(['user text q1', 'assistant text a1', 'user text q2']);

    // The fork's next prompt carries only the kept messages to the model.
    llm().reset();
    llm().script([{ text: 'forked answer' }]);
    await p.request(ECA.chatPrompt, { chatId: forkId, message: 'q-fork' });
    await p.turnDone(forkId);
    const sent = llm()
      .requests[0].body.messages.filter((m: any) => m.role !== 'system')
      .map((m: any) => `${m.role} ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
    expect(sent).toEqual(['user q1', 'assistant a1', 'user q2', 'user q-fork']);
    // The original chat is untouched.
    expect((await p.request(ECA.chatHistory, { chatId: 'c-f' })).result.meta.total).toBe(6);
  });

  it('an unknown content id or chat is a clear error, and no chat is made', async () => {
    const p = await boot();
    await threeTurns(p, 'c-e');
    const badId = await p.request(ECA.chatFork, { chatId: 'c-e', contentId: 'nope' });
    expect(badId.error).toMatchObject({ code: -32602, message: 'Chat c-e has no message with content id nope' });
    const badChat = await p.request(ECA.chatFork, { chatId: 'gone', contentId: 'u1' });
    expect(badChat.error).toMatchObject({ code: -32602, message: 'Chat gone not found' });
    expect((await p.request(ECA.chatList, {})).result.chats.map((c: any) => c.id)).toEqual(['c-e']);
    expect(p.messages.some((m) => m.method === ECA.chatOpened.method && m.params.chatId !== 'c-e')).toBe(false);
  });

  it('is refused while a turn runs: its messages are still coming', async () => {
    const p = await boot();
    llm().script([{ text: 'a1' }], [{ stall: 'forever' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c-r', message: 'q1', contentId: 'u1' });
    await p.turnDone('c-r');
    await p.request(ECA.chatPrompt, { chatId: 'c-r', message: 'q2', contentId: 'u2' });
    await p.waitFor((m) => m.method === ECA.chatStatusChanged.method && m.params.chatId === 'c-r' && m.params.status !== 'idle', 'the second turn to run');
    const busy = await p.request(ECA.chatFork, { chatId: 'c-r', contentId: 'u1' });
    expect(busy.error).toMatchObject({ code: -32602, message: 'Chat c-r is answering a prompt: stop it or let it finish before forking' });
    p.notify(ECA.chatPromptStop, { chatId: 'c-r' });
    await p.turnDone('c-r', 2);
    // Once stopped, the same fork is made.
    expect((await p.request(ECA.chatFork, { chatId: 'c-r', contentId: 'u1' })).result).toEqual({ chatId: expect.any(String) });
  });
});

/**
 * `chat/addFlag` / `chat/removeFlag` and `flag` contents, with ECA's order and shapes.
 *
 * Follows eca `src/eca/features/chat.clj`: `add-flag` (the flag goes after the LAST message the
 * content id names, `find-last-message-idx`: a user message's contentId or a content's id such as
 * a tool call's; it is persisted, then `chat/cleared {messages: true}` and the whole chat are sent
 * before the `{}` answer), `remove-flag` (answered `{}`, nothing sent), and
 * `message-content->chat-content` (a flag replays as a `system` content `{type: 'flag', text,
 * contentId}`). Clients: eca-emacs `eca-chat.el` `eca-chat-add-flag` (sends `{chatId, contentId,
 * text}` synchronously), `eca-chat--remove-flag` (removes the flag from its buffer itself),
 * `eca-chat--fork-from-flag` (`chat/fork` to the flag's contentId); eca-webview
 * `src/redux/thunks/chat.ts` `addFlag` / `removeFlag` and `ChatFlag.tsx`.
 * Where ECA answers `{}` and does nothing (unknown chat, unknown content id, not a flag),
 * patchbay answers −32602 with the reason, and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(home = tempDir(), root = workspace()): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** Prompts "q1".."qN" (content ids u1..uN), answered "a1".."aN". */
async function turns(p: EcaProc, chatId: string, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    llm().script([{ text: `a${i}` }]);
    await p.request(ECA.chatPrompt, { chatId, message: `q${i}`, contentId: `u${i}` });
    await p.turnDone(chatId, i);
  }
}

function label(c: { role: string; content: any }): string {
  return `${c.role} ${c.content.type} ${c.content.text ?? c.content.title ?? c.content.id ?? ''}`.trim();
}

/** What came from the server after message `from` up to `answer`, as short labels. */
function sequence(p: EcaProc, from: number, answer: Msg): string[] {
  const out: string[] = [];
  for (const m of p.messages.slice(from)) {
    if (m === answer) return [...out, 'answer'];
    if (m.method === ECA.chatContentReceived.method) out.push(`${m.params.chatId} ${label(m.params)}`);
    else if (m.method) out.push(`${m.method} ${JSON.stringify(m.params)}`);
  }
  throw new Error('the answer is not among the messages');
}

async function history(p: EcaProc, chatId: string, window: Record<string, unknown> = {}): Promise<any> {
  return (await p.request(ECA.chatHistory, { chatId, ...window })).result;
}

async function historyLabels(p: EcaProc, chatId: string): Promise<string[]> {
  return (await history(p, chatId)).contents.map(label);
}

/** The contentId of the flag with this text, as the last replay showed it. */
function flagId(p: EcaProc, chatId: string, text: string): string {
  const flags = p.contents(chatId).filter((c) => c.content.type === 'flag' && c.content.text === text);
  expect(flags.length).toBeGreaterThan(0);
  return flags[flags.length - 1].content.contentId;
}

describe('chat/addFlag', () => {
  it('puts the flag after a user message, clears and replays the chat before answering {}, and the LLM never reads it', async () => {
    const p = await boot();
    await turns(p, 'c1', 2);

    const from = p.messages.length;
    const res = await p.request(ECA.chatAddFlag, { chatId: 'c1', contentId: 'u1', text: 'before refactor' });
    expect(res.error).toBeUndefined();
    expect(res.result).toEqual({});
    // chat.clj add-flag: chat-cleared {messages true}, send-chat-contents! of all messages, then {}.
    expect(sequence(p, from, res)).toEqual([
      'chat/cleared {"chatId":"c1","messages":true}',
      'c1 user text q1',
      'c1 system flag before refactor',
      'c1 assistant text a1',
      'c1 user text q2',
      'c1 assistant text a2',
      'answer',
    ]);
    const flag = p.messages.slice(from).find((m) => m.params?.content?.type === 'flag');
    expect(flag?.params).toEqual({ chatId: 'c1', role: 'system', content: { type: 'flag', text: 'before refactor', contentId: expect.any(String) } });
    expect(flag?.params.content.contentId).not.toBe('u1');

    // chat/history pages carry it at its place too.
    expect(await historyLabels(p, 'c1')).toEqual(['user text q1', 'system flag before refactor', 'assistant text a1', 'user text q2', 'assistant text a2']);
    expect((await history(p, 'c1', { limit: 4 })).contents.map(label)).toEqual(['system flag before refactor', 'assistant text a1', 'user text q2', 'assistant text a2']);

    // The chat held in memory has it too: chat/open in the same process replays it.
    const opening = p.messages.length;
    const open = await p.request(ECA.chatOpen, { chatId: 'c1' });
    const replayed = p.messages.slice(opening, p.messages.indexOf(open)).filter((m) => m.method === ECA.chatContentReceived.method);
    expect(replayed.map((m) => label(m.params))).toContain('system flag before refactor');

    // The next prompt carries the conversation without the flag.
    llm().reset();
    llm().script([{ text: 'a3' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'q3', contentId: 'u3' });
    await p.turnDone('c1', 3);
    const body = llm().requests[0].body;
    expect(JSON.stringify(body)).not.toContain('before refactor');
    const sent = body.messages.filter((m: any) => m.role !== 'system').map((m: any) => `${m.role} ${m.content}`);
    expect(sent).toEqual(['user q1', 'assistant a1', 'user q2', 'assistant a2', 'user q3']);
  });

  it('goes after a tool call when the content id is the call’s id (the last message it names: its result)', async () => {
    const root = workspace({ 'a.txt': 'alpha\n' });
    const p = await boot(tempDir(), root);
    llm().script([{ toolCall: { id: 'call-1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read it' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c2', message: 'read a.txt', contentId: 'u1' });
    await p.turnDone('c2');

    const from = p.messages.length;
    const res = await p.request(ECA.chatAddFlag, { chatId: 'c2', contentId: 'call-1', text: 'after read' });
    expect(res.result).toEqual({});
    expect(sequence(p, from, res)).toEqual([
      'chat/cleared {"chatId":"c2","messages":true}',
      'c2 user text read a.txt',
      // Every stage of the call, as live (ECA's replay); the flag after its result.
      'c2 assistant toolCallPrepare call-1',
      'c2 assistant toolCallRun call-1',
      'c2 assistant toolCallRunning call-1',
      'c2 assistant toolCalled call-1',
      'c2 system flag after read',
      'c2 assistant text read it',
      'answer',
    ]);
    // A second flag can go after the first (a flag's contentId names it too).
    const first = flagId(p, 'c2', 'after read');
    expect((await p.request(ECA.chatAddFlag, { chatId: 'c2', contentId: first, text: 'second' })).result).toEqual({});
    expect(await historyLabels(p, 'c2')).toEqual([
      'user text read a.txt',
      'assistant toolCallPrepare call-1',
      'assistant toolCallRun call-1',
      'assistant toolCallRunning call-1',
      'assistant toolCalled call-1',
      'system flag after read',
      'system flag second',
      'assistant text read it',
    ]);
  });

  it('keeps history cursors taken before the insertion pointing at the same messages', async () => {
    const p = await boot();
    await turns(p, 'c3', 3);
    const newest = await history(p, 'c3', { limit: 2 });
    expect(newest.contents.map(label)).toEqual(['user text q3', 'assistant text a3']);

    // Every message after u1 moves one position on.
    await p.request(ECA.chatAddFlag, { chatId: 'c3', contentId: 'u1', text: 'early' });
    const older = await history(p, 'c3', { before: newest.meta.beforeCursor, limit: 2 });
    expect(older.error).toBeUndefined();
    expect(older.contents.map(label)).toEqual(['user text q2', 'assistant text a2']);
    const oldest = await history(p, 'c3', { before: older.meta.beforeCursor, limit: 10 });
    expect(oldest.contents.map(label)).toEqual(['user text q1', 'system flag early', 'assistant text a1']);
    expect(oldest.meta).toMatchObject({ total: 7, returned: 3, beforeCursor: null });

    // A cursor naming the flag itself expires once the flag is removed: never another message's page.
    const fromFlag = await history(p, 'c3', { limit: 6 });
    expect(fromFlag.contents[0].content.type).toBe('flag');
    await p.request(ECA.chatRemoveFlag, { chatId: 'c3', contentId: flagId(p, 'c3', 'early') });
    expect((await history(p, 'c3', { before: fromFlag.meta.beforeCursor })).error?.code).toBe('cursor_expired');
  });

  it('answers −32602 for an unknown chat or content id and for bad params, sending and changing nothing', async () => {
    const p = await boot();
    await turns(p, 'c4', 1);
    const before = await historyLabels(p, 'c4');
    const from = p.messages.length;

    const badId = await p.request(ECA.chatAddFlag, { chatId: 'c4', contentId: 'nope', text: 'x' });
    expect(badId.error).toMatchObject({ code: -32602, message: 'Chat c4 has no message with content id nope' });
    const badChat = await p.request(ECA.chatAddFlag, { chatId: 'gone', contentId: 'u1', text: 'x' });
    expect(badChat.error).toMatchObject({ code: -32602, message: 'Chat gone not found' });
    // A flag without text is accepted (test/e2e/chat-inline.test.ts); a text that is no string is not.
    const badText = await p.request(ECA.chatAddFlag, { chatId: 'c4', contentId: 'u1', text: 42 });
    expect(badText.error?.code).toBe(-32602);
    expect(badText.error?.message).toMatch(/text/);

    expect(p.messages.slice(from).filter((m) => m.method)).toEqual([]);
    expect(await historyLabels(p, 'c4')).toEqual(before);
    expect((await p.request(ECA.chatList, {})).result.chats.map((c: any) => c.id)).toEqual(['c4']);
  });

  it('is refused while a turn runs (its replay would wipe the streaming answer); removing a flag then is allowed', async () => {
    const p = await boot();
    await turns(p, 'c5', 1);
    await p.request(ECA.chatAddFlag, { chatId: 'c5', contentId: 'u1', text: 'keep' });
    const keep = flagId(p, 'c5', 'keep');

    llm().script([{ text: 'partial' }, { stall: 'forever' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c5', message: 'q2', contentId: 'u2' });
    await p.waitFor((m) => m.method === ECA.chatStatusChanged.method && m.params.chatId === 'c5' && m.params.status !== 'idle', 'the second turn to run');
    const asked = p.messages.length;
    const busy = await p.request(ECA.chatAddFlag, { chatId: 'c5', contentId: 'u1', text: 'mid-turn' });
    expect(busy.error).toMatchObject({ code: -32602, message: 'Chat c5 is answering a prompt: stop it or let it finish before adding a flag' });
    expect(p.messages.slice(asked).some((m) => m.method === ECA.chatCleared.method)).toBe(false);

    // Removing shifts nothing the running turn writes to.
    expect((await p.request(ECA.chatRemoveFlag, { chatId: 'c5', contentId: keep })).result).toEqual({});
    p.notify(ECA.chatPromptStop, { chatId: 'c5' });
    await p.turnDone('c5', 2);
    const after = await historyLabels(p, 'c5');
    expect(after.slice(0, 3)).toEqual(['user text q1', 'assistant text a1', 'user text q2']);
    expect(after.some((l) => l.includes('flag'))).toBe(false);
    // Idle again: flags can be added.
    expect((await p.request(ECA.chatAddFlag, { chatId: 'c5', contentId: 'u2', text: 'now' })).result).toEqual({});
  });
});

describe('chat/removeFlag', () => {
  it('answers {} and sends nothing (the client drops the flag itself); a non-flag id, an unknown id or chat is −32602', async () => {
    const p = await boot();
    await turns(p, 'c6', 2);
    await p.request(ECA.chatAddFlag, { chatId: 'c6', contentId: 'u1', text: 'one' });
    await p.request(ECA.chatAddFlag, { chatId: 'c6', contentId: 'u2', text: 'two' });
    const one = flagId(p, 'c6', 'one');

    const from = p.messages.length;
    const res = await p.request(ECA.chatRemoveFlag, { chatId: 'c6', contentId: one });
    expect(res.error).toBeUndefined();
    expect(res.result).toEqual({});
    expect(sequence(p, from, res)).toEqual(['answer']);
    expect(await historyLabels(p, 'c6')).toEqual(['user text q1', 'assistant text a1', 'user text q2', 'system flag two', 'assistant text a2']);

    // Gone from the chat held in memory too: chat/open no longer replays it.
    const opening = p.messages.length;
    const open = await p.request(ECA.chatOpen, { chatId: 'c6' });
    const replayed = p.messages.slice(opening, p.messages.indexOf(open)).filter((m) => m.method === ECA.chatContentReceived.method);
    expect(replayed.map((m) => label(m.params)).filter((l) => l.includes('flag'))).toEqual(['system flag two']);

    const kept = await historyLabels(p, 'c6');
    const again = await p.request(ECA.chatRemoveFlag, { chatId: 'c6', contentId: one });
    expect(again.error).toMatchObject({ code: -32602, message: `Chat c6 has no flag with content id ${one}` });
    const notFlag = await p.request(ECA.chatRemoveFlag, { chatId: 'c6', contentId: 'u1' });
    expect(notFlag.error).toMatchObject({ code: -32602, message: 'Chat c6 has content that is not a flag: u1' });
    const noChat = await p.request(ECA.chatRemoveFlag, { chatId: 'gone', contentId: one });
    expect(noChat.error).toMatchObject({ code: -32602, message: 'Chat gone not found' });
    expect(await historyLabels(p, 'c6')).toEqual(kept);
  });
});

describe('flags across restarts and forks', () => {
  it('a flag is stored: chat/open after a restart replays it at its place, and a fork to it keeps it', async () => {
    const home = tempDir();
    const root = workspace();
    const p = await boot(home, root);
    await turns(p, 'c7', 2);
    await p.request(ECA.chatAddFlag, { chatId: 'c7', contentId: 'u1', text: 'milestone' });
    const id = flagId(p, 'c7', 'milestone');
    await p.stop();

    const q = await boot(home, root);
    const from = q.messages.length;
    const open = await q.request(ECA.chatOpen, { chatId: 'c7' });
    expect(open.result.found).toBe(true);
    const replay = q.messages.slice(from, q.messages.indexOf(open)).filter((m) => m.method === ECA.chatContentReceived.method);
    expect(replay.map((m) => label(m.params))).toEqual(['user text q1', 'system flag milestone', 'assistant text a1', 'user text q2', 'assistant text a2', 'system metadata']);
    expect(replay[1].params.content).toEqual({ type: 'flag', text: 'milestone', contentId: id });

    // eca-emacs eca-chat--fork-from-flag: chat/fork to the flag's contentId keeps up to and including it.
    const forkFrom = q.messages.length;
    const forked = (await q.request(ECA.chatFork, { chatId: 'c7', contentId: id })).result;
    const forkId: string = q.messages.slice(forkFrom).find((m) => m.method === ECA.chatOpened.method)?.params.chatId;
    expect(forkId).toBeTruthy();
    expect(forked).toEqual({ chatId: forkId });
    expect(q.contents(forkId).map(label)).toEqual(['user text q1', 'system flag milestone', 'system metadata Untitled (2)']);
    expect(await historyLabels(q, forkId)).toEqual(['user text q1', 'system flag milestone']);

    // A fork past the flag copies it too, and the fork's flag is its own to remove.
    await q.request(ECA.chatFork, { chatId: 'c7', contentId: 'u2' });
    const list = (await q.request(ECA.chatList, {})).result.chats;
    const second = list.find((c: any) => c.id !== 'c7' && c.id !== forkId).id;
    expect(await historyLabels(q, second)).toEqual(['user text q1', 'system flag milestone', 'assistant text a1', 'user text q2']);
    expect((await q.request(ECA.chatRemoveFlag, { chatId: second, contentId: id })).result).toEqual({});
    expect(await historyLabels(q, 'c7')).toContain('system flag milestone');
    expect(await historyLabels(q, forkId)).toContain('system flag milestone');
  });
});

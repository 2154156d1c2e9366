/**
 * Replays show tool calls as they happened: every stage of each call, and the texts around the
 * calls as separate contents, for `chat/open`, `chat/history` pages, `chat/rollback`,
 * `chat/addFlag`, `chat/fork` and a chat opened again after a restart.
 *
 * The contract is ECA's own replay (eca `src/eca/features/chat.clj` `message-content->chat-content`
 * and `messages->contents`: a stored call replays as `toolCallPrepare` (with its summary), then
 * `toolCallRun`, `toolCallRunning` and `toolCalled`, each with its summary and details, and no
 * progress) and what eca-webview needs to draw it (`src/redux/slices/chat.ts`
 * `applyContentToMessages`: a card is created only at `toolCallPrepare`; the later stages update
 * a card it has and are dropped otherwise; an assistant text is appended to the assistant text
 * just before it). `webview()` below models that reducer: with the last stage alone, a replayed
 * chat showed no card and "callingdone after tool".
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

type Content = { chatId?: string; role: string; content: any };

async function boot(home: string, root: string): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/**
 * Turn 1 (u1): "calling", a read_file call, then "done after tool"; a write_file the plan agent
 * may not run is refused (rejected, `denied`). Turn 2 (u2): "second". The chat is `c1`.
 */
async function chatWithCalls(p: EcaProc): Promise<void> {
  llm().script(
    [{ text: 'calling' }, { toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }],
    [{ text: 'then writing' }, { toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'b.txt', content: 'b\n' } } }],
    [{ text: 'done after tool' }],
  );
  await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'read a.txt', contentId: 'u1', agent: 'plan' });
  await p.turnDone('c1', 1);
  llm().script([{ text: 'second' }]);
  await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'more', contentId: 'u2' });
  await p.turnDone('c1', 2);
}

/** The stages and texts of a chat's contents, as short labels (usage, metadata and flags left out). */
function labels(contents: Content[]): string[] {
  return contents
    .filter((c) => !['usage', 'metadata', 'flag'].includes(c.content.type))
    .map((c) => {
      const k = c.content;
      if (k.type === 'text') return `${c.role} text ${k.text}`;
      if (k.type === 'progress') return `progress ${k.state} ${k.text}`;
      return `${k.type} ${k.id}`;
    });
}

/** What a replay of turn 1 must show, stage by stage (turn 2 follows where it is replayed). */
const TURN_1 = [
  'user text read a.txt',
  'assistant text calling',
  'toolCallPrepare r1',
  'toolCallRun r1',
  'toolCallRunning r1',
  'toolCalled r1',
  'assistant text then writing',
  // Refused without asking (the plan agent): prepared, then rejected, as live.
  'toolCallPrepare w1',
  'toolCallRejected w1',
  'assistant text done after tool',
];
const TURN_2 = ['user text more', 'assistant text second'];

/** eca-webview's chat reducer (see the header), reduced to what decides whether a card and a text show. */
function webview(contents: Content[]): string[] {
  const view: Array<{ kind: 'text'; role: string; value: string } | { kind: 'card'; id: string; status: string; summary?: string }> = [];
  for (const { role, content: k } of contents) {
    const card = view.find((v) => v.kind === 'card' && v.id === k.id) as { kind: 'card'; id: string; status: string; summary?: string } | undefined;
    switch (k.type) {
      case 'text': {
        const last = view.at(-1);
        if (role === 'assistant' && last?.kind === 'text' && last.role === 'assistant') last.value += k.text;
        else view.push({ kind: 'text', role, value: k.text });
        break;
      }
      case 'toolCallPrepare':
        if (!card) view.push({ kind: 'card', id: k.id, status: 'preparing', summary: k.summary });
        break;
      case 'toolCallRun':
      case 'toolCallRunning':
      case 'toolCalled':
      case 'toolCallRejected':
        if (card) {
          card.status = k.type === 'toolCalled' ? (k.error ? 'failed' : 'succeeded') : k.type;
          card.summary = k.summary;
        }
        break;
    }
  }
  return view.map((v) => (v.kind === 'text' ? `${v.role}: ${v.value}` : `card ${v.id} ${v.status} ${v.summary ?? ''}`.trim()));
}

const WEBVIEW_TURN_1 = [
  'user: read a.txt',
  'assistant: calling',
  'card r1 succeeded Reading file "a.txt"',
  'assistant: then writing',
  'card w1 toolCallRejected Writing file "b.txt"',
  'assistant: done after tool',
];

/** The chat's contents sent since message `from`. */
function since(p: EcaProc, from: number, chatId = 'c1'): Content[] {
  return p.messages
    .slice(from)
    .filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId)
    .map((m) => m.params);
}

/** Each stage's summary and details in a replay equal those the live turn sent for that stage. */
function expectSameCallFields(live: Content[], replay: Content[]): void {
  const pick = (cs: Content[], type: string, id: string) => cs.find((c) => c.content.type === type && c.content.id === id)?.content;
  for (const type of ['toolCallRun', 'toolCallRunning', 'toolCalled']) {
    const l = pick(live, type, 'r1');
    const r = pick(replay, type, 'r1');
    expect(r, `${type} in the replay`).toBeDefined();
    expect({ summary: r.summary, details: r.details, arguments: r.arguments, server: r.server, origin: r.origin, name: r.name }).toEqual({
      summary: l.summary,
      details: l.details,
      arguments: l.arguments,
      server: l.server,
      origin: l.origin,
      name: l.name,
    });
  }
  expect(pick(replay, 'toolCallPrepare', 'r1').summary).toBe('Reading file "a.txt"');
  expect(pick(replay, 'toolCalled', 'r1').outputs).toEqual(pick(live, 'toolCalled', 'r1').outputs);
}

describe('replays show tool calls as they happened', () => {
  it('chat/open sends every stage of each call in order, the texts separate, no progress; eca-webview draws the cards', async () => {
    const p = await boot(tempDir(), workspace({ 'a.txt': 'alpha\n' }));
    await chatWithCalls(p);
    const live = since(p, 0);
    // Live, a reader of eca-webview's kind sees the same cards and texts.
    expect(webview(live)).toEqual([...WEBVIEW_TURN_1, 'user: more', 'assistant: second']);

    const from = p.messages.length;
    const res = await p.request(ECA.chatOpen, { chatId: 'c1' });
    expect(res.result.found).toBe(true);
    const replay = since(p, from);
    expect(labels(replay)).toEqual([...TURN_1, ...TURN_2]);
    expect(webview(replay)).toEqual([...WEBVIEW_TURN_1, 'user: more', 'assistant: second']);
    expectSameCallFields(live, replay);
  });

  it('a chat/history page carries the same stages; a page starting at a call’s result still prepares it', async () => {
    const p = await boot(tempDir(), workspace({ 'a.txt': 'alpha\n' }));
    await chatWithCalls(p);
    const whole = (await p.request(ECA.chatHistory, { chatId: 'c1' })).result;
    expect(labels(whole.contents)).toEqual([...TURN_1, ...TURN_2]);
    expect(webview(whole.contents)).toEqual([...WEBVIEW_TURN_1, 'user: more', 'assistant: second']);
    // Stored: u1, "calling"+r1, r1's result, "then writing"+w1, w1's result, "done after tool", u2, "second".
    // The newest 6 start at r1's result: its card is prepared there.
    const page = (await p.request(ECA.chatHistory, { chatId: 'c1', limit: 6 })).result;
    expect(labels(page.contents)).toEqual(['toolCallPrepare r1', 'toolCallRun r1', 'toolCallRunning r1', 'toolCalled r1', ...TURN_1.slice(6), ...TURN_2]);
  });

  it('chat/rollback replays the kept messages with every stage', async () => {
    const p = await boot(tempDir(), workspace({ 'a.txt': 'alpha\n' }));
    await chatWithCalls(p);
    const from = p.messages.length;
    const res = await p.request(ECA.chatRollback, { chatId: 'c1', contentId: 'u2', include: ['messages'] });
    expect(res.error).toBeUndefined();
    const replay = since(p, from);
    expect(labels(replay)).toEqual(TURN_1);
    expect(webview(replay)).toEqual(WEBVIEW_TURN_1);
  });

  it('chat/addFlag replays the chat with every stage and the flag after the call it names', async () => {
    const p = await boot(tempDir(), workspace({ 'a.txt': 'alpha\n' }));
    await chatWithCalls(p);
    const from = p.messages.length;
    const res = await p.request(ECA.chatAddFlag, { chatId: 'c1', contentId: 'r1', text: 'after read' });
    expect(res.result).toEqual({});
    const replay = since(p, from);
    expect(labels(replay)).toEqual([...TURN_1, ...TURN_2]);
    // The flag goes after the call's result, so after its last stage.
    const types = replay.map((c) => `${c.content.type} ${c.content.id ?? c.content.text}`);
    expect(types.indexOf('flag after read')).toBe(types.indexOf('toolCalled r1') + 1);
    expect(webview(replay)).toEqual([...WEBVIEW_TURN_1, 'user: more', 'assistant: second']);
  });

  it('reopened after a restart (chat/open) and forked (chat/fork), the chat shows every stage', async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'alpha\n' });
    const p = await boot(home, root);
    await chatWithCalls(p);
    const live = since(p, 0);
    await p.stop();

    const q = await boot(home, root);
    const res = await q.request(ECA.chatOpen, { chatId: 'c1', limit: 50 });
    expect(res.result.found).toBe(true);
    const replay = since(q, 0);
    expect(labels(replay)).toEqual([...TURN_1, ...TURN_2]);
    expect(webview(replay)).toEqual([...WEBVIEW_TURN_1, 'user: more', 'assistant: second']);
    expectSameCallFields(live, replay);

    const forked = await q.request(ECA.chatFork, { chatId: 'c1', contentId: 'u2' });
    expect(forked.error).toBeUndefined();
    const opened = await q.waitFor((m) => m.method === ECA.chatOpened.method && m.params.chatId !== 'c1', 'the forked chat');
    expect(labels(since(q, 0, opened.params.chatId))).toEqual([...TURN_1, 'user text more']);
  });
});

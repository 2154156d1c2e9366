/**
 * A second front end on the in-process ECA server's port (src/runtime/front-end-port.ts): it
 * attaches to a running chat, replays it from a number and follows it live; it lists and
 * answers the pending approval, which the editor then sees as answered (the call runs); the
 * editor's own late answer is refused; after the server is gone the log replays from the store.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InProcEca, useInProcEca } from '../support/eca-inproc.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeProviderConfig, useTempDirs, workspace } from '../e2e/harness.js';
import { NO_CAPABILITIES, type PortNotice, type SeqEvent } from '../../src/core/chat/port.js';
import { FrontEndPort, type WorkspaceNotice } from '../../src/runtime/front-end-port.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import { ChatEventTable } from '../../src/store/chat-events.js';

const llm = useFakeLlm();
const temp = useTempDirs();
const track = useInProcEca();

describe('a second front end on the ECA server port', () => {
  it('replays a running chat from a number, follows it live, answers its approval first; the editor sees the call run', async () => {
    const home = temp(workspace());
    const ws = temp(workspace());
    llm().script([{ text: 'Let me write.' }, { toolCall: { id: 'c1', name: 'patchbay__write_file', args: { path: 'b.txt', content: 'new\n' } } }], [{ text: 'Written.' }]);
    const s = new InProcEca({ home, config: fakeProviderConfig(llm().url) });
    track(s);
    await s.initialize(ws);
    const { chatId } = await s.request('chat/prompt', { message: 'write b' });
    await s.waitFor((n) => n.method === 'chat/contentReceived' && n.params.content.type === 'toolCallRun', 'toolCallRun');

    const port = s.server.port!;
    expect(port).toBeInstanceOf(FrontEndPort);
    expect(port.frontEnds().map((f) => [f.name, f.capabilities.ask])).toEqual([['eca', true]]);
    // A third front end that only watches: it is told when the approval was answered.
    const watched: Array<PortNotice | WorkspaceNotice> = [];
    port.attach({ name: 'watcher', capabilities: NO_CAPABILITIES, chatEvent: () => {}, notice: (n) => void watched.push(n) });

    // The approval the editor was asked about, with its id.
    expect(port.pending(chatId)).toMatchObject([{ kind: 'approval', id: 'c1', chatId, call: { name: 'write_file', arguments: { path: 'b.txt' } } }]);

    const got: SeqEvent[] = [];
    const notices: Array<PortNotice | WorkspaceNotice> = [];
    let turnEnded!: () => void;
    const ended = new Promise<void>((r) => (turnEnded = r));
    const remote = port.attach(
      {
        name: 'remote',
        capabilities: { ...NO_CAPABILITIES, ask: true },
        chatEvent: (e) => {
          got.push(e);
          if (e.chatId === chatId && e.event.type === 'turnEnded') turnEnded();
        },
        notice: (n) => void notices.push(n),
      },
      { chatId, afterSeq: 1 },
    );
    // Everything after #1 so far came back from the log, up to the announced call.
    expect(remote.replay.replayed).toBe(remote.replay.lastSeq - 1);
    expect(got.every((e) => e.replay)).toBe(true);
    expect(got.at(-1)?.event).toMatchObject({ type: 'toolCall', state: 'announced', id: 'c1', needsApproval: true });

    // The remote answers first; the editor's own answer comes too late.
    expect(port.answer(chatId, 'c1', { kind: 'approval', approved: true }, remote)).toBe(true);
    s.notify('chat/toolCallApprove', { chatId, toolCallId: 'c1' });
    await s.turnDone(chatId);
    await ended;

    // The editor sees the call run and end as usual.
    const types = s.contents(chatId).map((c) => c.content.type);
    expect(types).toContain('toolCallRunning');
    expect(s.contents(chatId).find((c) => c.content.type === 'toolCalled')?.content).toMatchObject({ id: 'c1', error: false });
    expect(port.pending(chatId)).toEqual([]);

    // Replay and live joined: every number after 1, once each, in order.
    const seqs = got.filter((e) => e.chatId === chatId).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => i + 2));
    expect(got.some((e) => !e.replay && e.event.type === 'toolCall' && e.event.state === 'running')).toBe(true);
    // The remote answered: it is not told; the editor's front end was (ECA has nothing to withdraw).
    expect(notices.filter((n) => n.type === 'answered')).toEqual([]);
    expect(watched.filter((n) => n.type === 'answered')).toEqual([{ type: 'answered', kind: 'approval', chatId, id: 'c1', by: 'remote' }]);

    const lastSeq = seqs.at(-1)!;
    remote.detach();
    await s.stop();

    // After the server is gone, the same events come back from the store, from any number.
    const store = SqliteStore.open(join(home, '.patchbay'));
    try {
      const after = new FrontEndPort({ log: new ChatEventTable(store.db) });
      const replayed: SeqEvent[] = [];
      const a = after.attach({ name: 'later', capabilities: NO_CAPABILITIES, chatEvent: (e) => void replayed.push(e) }, { chatId, afterSeq: 0 });
      expect(a.replay).toMatchObject({ lastSeq, gap: false });
      expect(replayed.map((e) => e.seq)).toEqual(Array.from({ length: lastSeq }, (_, i) => i + 1));
      expect(replayed.slice(1).map((e) => e.event)).toEqual(got.filter((e) => e.chatId === chatId).map((e) => e.event));
      expect(replayed[0]?.event).toEqual({ type: 'status', status: 'running' });
      expect(replayed.some((e) => e.event.type === 'assistantText' && e.event.text === 'Let me write.')).toBe(true);
    } finally {
      store.close();
    }
  });

  it('a question asked of the editor is answered by the second front end: the editor request is withdrawn, the model gets the answer', async () => {
    llm().script([{ toolCall: { id: 'q1', name: 'patchbay__ask_user', args: { question: 'Tabs or spaces?', options: ['Tabs', 'Spaces'] } } }], [{ text: 'tabs it is' }]);
    const s = new InProcEca({ home: temp(workspace()), config: fakeProviderConfig(llm().url) });
    track(s);
    let withdrawn!: () => void;
    const editorWithdrew = new Promise<void>((r) => (withdrawn = r));
    let asked!: () => void;
    const editorAsked = new Promise<void>((r) => (asked = r));
    // The editor shows the question and never answers; it sees the request cancelled.
    s.client.onRequest('chat/askQuestion', (_params: unknown, token) => {
      asked();
      return new Promise((resolve) =>
        token.onCancellationRequested(() => {
          withdrawn();
          resolve({ answer: null, cancelled: true });
        }),
      );
    });
    await s.initialize(temp(workspace()), { capabilities: { codeAssistant: { chat: true, chatCapabilities: { askQuestion: true } } } });
    const { chatId } = await s.request('chat/prompt', { message: 'format it' });
    await editorAsked;
    const port = s.server.port!;
    expect(port.frontEnds()[0]?.capabilities).toMatchObject({ ask: true, elicitation: true });
    const [question] = port.pending(chatId);
    expect(question).toMatchObject({ kind: 'question', id: 'q1', chatId, question: { question: 'Tabs or spaces?', options: [{ label: 'Tabs' }, { label: 'Spaces' }] } });
    expect(port.answer(chatId, 'q1', { kind: 'question', answer: { answered: true, answer: 'Tabs' } }, 'remote')).toBe(true);
    await editorWithdrew;
    await s.turnDone(chatId);
    const tool = llm()
      .requests.at(-1)
      ?.body.messages.find((m: { role: string }) => m.role === 'tool') as { content: string } | undefined;
    expect(tool?.content).toBe('User answered: Tabs');
    expect(port.pending(chatId)).toEqual([]);
  });
});

/**
 * The id of a reasoning block is the editor's handle on it, so it is unique in the chat and kept.
 *
 * eca-emacs `eca-chat.el`: `eca-chat--render-content` keys a "Thinking..." block by the
 * `reasonStarted` id (`eca-chat--add-expandable-content id …`; `reasonText`/`reasonFinished`
 * update the block with that id), and `eca-chat-add-flag` sends the id of the nearest block at or
 * before point as `chat/addFlag`'s `contentId`: after a thinking model's answer, that is the
 * reasoning block's id, straight from the live turn. ECA `src/eca/features/chat.clj` gives each
 * reasoning a fresh UUID (`:on-reason`, the openai_chat.clj `new-id`), stores it with the `reason`
 * message, replays it under the same id (`message-content->chat-content` "reason") and finds it
 * for a flag or fork (`find-last-message-idx`, `[:content :id]`).
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(home: string, root: string): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat') }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** The ids of the chat's reasoning contents of one type, in order. */
const ids = (p: EcaProc, chatId: string, type: string): string[] =>
  p
    .contents(chatId)
    .filter((c) => c.content.type === type)
    .map((c) => c.content.id);

describe('reasoning block ids (eca-emacs eca-chat-add-flag after a thinking answer)', () => {
  it('are unique per block across turns, kept by replays and restarts, and name the block for chat/addFlag and chat/fork', async () => {
    const home = tempDir();
    const root = workspace();
    const p = await boot(home, root);
    for (let i = 1; i <= 2; i++) {
      llm().script([{ reasoning: `thinking ${i}` }, { text: `a${i}` }]);
      await p.request(ECA.chatPrompt, { chatId: 'c1', message: `q${i}`, contentId: `u${i}` });
      await p.turnDone('c1', i);
    }
    const live = ids(p, 'c1', 'reasonStarted');
    expect(live).toHaveLength(2);
    // Two turns' blocks must not share an id: eca-emacs would write the second into the first.
    expect(new Set(live).size).toBe(2);
    expect(ids(p, 'c1', 'reasonText')).toEqual(live);
    expect(ids(p, 'c1', 'reasonFinished')).toEqual(live);

    // The flag eca-emacs sends with the second (live) reasoning block's id goes after that answer.
    const from = p.messages.length;
    const flagged = await p.request(ECA.chatAddFlag, { chatId: 'c1', contentId: live[1], text: 'after thinking' });
    expect(flagged.error).toBeUndefined();
    expect(flagged.result).toEqual({});
    const replay = p.messages.slice(from, p.messages.indexOf(flagged)).filter((m) => m.method === ECA.chatContentReceived.method);
    expect(replay.map((m) => `${m.params.content.type} ${m.params.content.text ?? m.params.content.id ?? ''}`)).toEqual([
      'text q1',
      `reasonStarted ${live[0]}`,
      'reasonText thinking 1',
      `reasonFinished ${live[0]}`,
      'text a1',
      'text q2',
      `reasonStarted ${live[1]}`,
      'reasonText thinking 2',
      `reasonFinished ${live[1]}`,
      'text a2',
      'flag after thinking',
    ]);
    await p.stop();

    // After a restart the stored ids come back, and the first block's id still names its answer.
    const q = await boot(home, root);
    const opening = q.messages.length;
    const open = await q.request(ECA.chatOpen, { chatId: 'c1' });
    const reopened = q.messages.slice(opening, q.messages.indexOf(open)).filter((m) => m.params?.content?.type === 'reasonStarted');
    expect(reopened.map((m) => m.params.content.id)).toEqual(live);
    const forking = q.messages.length;
    const fork = await q.request(ECA.chatFork, { chatId: 'c1', contentId: live[0] });
    expect(fork.error).toBeUndefined();
    const forkId: string = q.messages.slice(forking).find((m) => m.method === ECA.chatOpened.method)?.params.chatId;
    expect(q.contents(forkId).map((c) => c.content.text ?? c.content.type)).toEqual(['q1', 'reasonStarted', 'thinking 1', 'reasonFinished', 'a1', 'metadata']);
  });
});

/**
 * A chat whose stored rows cannot all be read still opens and goes on: each unreadable row is a
 * notice in the replay, the rest is replayed and sent to the model as before.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { STORED_MESSAGE_VERSION } from '../../src/core/chat/stored-message.js';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(home: string) {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
  await p.initialize(workspace({ 'a.txt': 'alpha\n' }));
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

describe('stored messages that cannot be read', () => {
  it('chat/open replays the readable ones with a notice for each other, and the chat goes on', async () => {
    const home = tempDir();
    const p = await boot(home);
    llm().script([{ text: 'first answer' }], [{ text: 'second answer' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'one' })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'two' });
    await p.turnDone(chatId, 2);
    await p.stop();

    // Rows: 1 user one, 2 assistant first answer, 3 user two, 4 assistant second answer.
    const db = new Database(join(home, '.patchbay', 'patchbay.db'));
    db.prepare('UPDATE messages SET data = ? WHERE chat_id = ? AND seq = 2').run('{"role":"assistant","parts":', chatId);
    db.prepare('UPDATE messages SET schema_version = 99 WHERE chat_id = ? AND seq = 4').run(chatId);
    db.close();

    const q = await boot(home);
    expect((await q.request(ECA.chatOpen, { chatId })).result).toMatchObject({ found: true, chatId });
    await q.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && /#4/.test(m.params.content.text ?? ''));
    const replay = q.contents(chatId).map((c) => `${c.role}:${c.content.text ?? c.content.type}`);
    expect(replay).toEqual([
      'user:one',
      'system:A stored message (#2) could not be read: it is not valid JSON.',
      'user:two',
      `system:A stored message (#4) could not be read: it was written by a newer patchbay (format version 99; this one reads up to ${STORED_MESSAGE_VERSION}).`,
      // As ECA's open-chat!, the replay ends with the chat's title (none here).
      'system:metadata',
    ]);

    llm().reset();
    llm().script([{ text: 'third answer' }]);
    await q.request(ECA.chatPrompt, { chatId, message: 'three' });
    await q.turnDone(chatId);
    expect(q.text(chatId)).toContain('third answer');
    // The model gets the readable history; the notices are for the person, not the model.
    const messages: Array<{ role: string; content: unknown }> = llm().requests.at(-1)!.body.messages;
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one', 'two', 'three']);
    expect(messages.filter((m) => m.role === 'assistant')).toEqual([]);
    expect(JSON.stringify(messages)).not.toContain('could not be read');
  });
});

/**
 * `chat/rollback` where the history is not the tidy one: an LLM that reuses tool-call ids, a
 * process killed between a file change and its tool message, and two servers (two editors)
 * sharing one PATCHBAY_HOME. Over the built binary's stdio.
 *
 * Follows eca `src/eca/features/chat.clj` `rollback-chat` (the messages from the one whose
 * contentId matches are removed, the tool calls among them undone through
 * `src/eca/features/tools/filesystem.clj` `:rollback-changes`), as eca-emacs `eca-chat.el`
 * `eca-chat--rollback` sends it (`{chatId, contentId, include}`), and `add-flag` / `fork-chat`
 * as `eca-chat--add-flag` / `eca-chat--fork-from-flag` send them (synchronous requests whose
 * error message the user sees).
 */
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, useFakeLlmSuite, workspace } from './harness.js';
import { rollbackSupport } from './rollback-support.js';

const { llm, track } = useFakeLlmSuite();

const { boot, turn } = rollbackSupport(llm, track);

async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('chat/rollback edge cases', () => {
  it('an LLM reusing the call id call_0 in two turns: rolling back the second keeps the first turn’s change', async () => {
    const root = workspace({ 'a.txt': 'a0\n' });
    const { p } = await boot(root);
    await turn(p, 'c1', 1, 'u1', 'first', [{ id: 'call_0', name: 'write_file', args: { path: 'a.txt', content: 'a1\n' } }], 'one');
    await turn(p, 'c1', 2, 'u2', 'second', [{ id: 'call_0', name: 'write_file', args: { path: 'b.txt', content: 'b1\n' } }], 'two');

    const res = await p.request(ECA.chatRollback, { chatId: 'c1', contentId: 'u2', include: ['messages', 'tools'] });
    expect(res.result).toEqual({});
    expect(existsSync(join(root, 'b.txt'))).toBe(false);
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a1\n');

    // The first turn's change is still undoable: its checkpoint was not taken with the second's.
    expect((await p.request(ECA.chatRollback, { chatId: 'c1', contentId: 'u1', include: ['tools'] })).result).toEqual({});
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a0\n');
  });

  it('a change whose tool message was never stored (killed mid-tool) is undone after the restart', async () => {
    const root = workspace({ 'a.txt': 'before\n' });
    const first = await boot(root);
    await turn(first.p, 'c2', 1, 'u1', 'change it', [{ id: 'w1', name: 'write_file', args: { path: 'a.txt', content: 'after\n' } }], 'changed');
    await first.p.stop();
    // The store as a SIGKILL right after the write's checkpoint leaves it (tool-call.ts recordChange
    // commits before the tool message): the chat running, its call running, no tool message, no answer.
    const db = new Database(join(first.home, '.patchbay', 'patchbay.db'), { fileMustExist: true });
    try {
      const { seq } = db.prepare("SELECT seq FROM messages WHERE chat_id = 'c2' AND role = 'tool'").get() as { seq: number };
      db.prepare("DELETE FROM messages WHERE chat_id = 'c2' AND seq >= ?").run(seq);
      db.prepare("UPDATE tool_calls SET state = 'running' WHERE chat_id = 'c2'").run();
      db.prepare("UPDATE chats SET status = 'running', owner_pid = NULL WHERE id = 'c2'").run();
    } finally {
      db.close();
    }

    const second = await boot(root, first.home);
    const res = await second.p.request(ECA.chatRollback, { chatId: 'c2', contentId: 'u1', include: ['messages', 'tools'] });
    expect(res.result).toEqual({});
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('before\n');
    const check = new Database(join(first.home, '.patchbay', 'patchbay.db'), { readonly: true, fileMustExist: true });
    try {
      expect(check.prepare("SELECT count(*) AS n FROM file_checkpoints WHERE chat_id = 'c2'").get()).toEqual({ n: 0 });
    } finally {
      check.close();
    }
  });

  it('two servers sharing one home: a flag, a fork and a rollback of a chat the other is answering in are refused, and allowed once it is done', async () => {
    const root = workspace({ 'a.txt': 'a0\n' });
    const b = await boot(root);
    const a = await boot(root, b.home);
    await turn(b.p, 'c3', 1, 'u1', 'first', [{ id: 'w1', name: 'write_file', args: { path: 'a.txt', content: 'a1\n' } }], 'one');

    // B's next turn waits on the model for as long as it takes.
    const asked = llm().requests.length;
    llm().script([{ stall: 'forever' }]);
    await b.p.request(ECA.chatPrompt, { chatId: 'c3', message: 'second', contentId: 'u2', trust: true });
    await until(() => llm().requests.length > asked, 'the second turn to reach the model');

    const elsewhere = expect.stringContaining('is answering a prompt in another patchbay process');
    const flag = await a.p.request(ECA.chatAddFlag, { chatId: 'c3', contentId: 'u1', text: 'mark' });
    expect(flag.error).toMatchObject({ code: -32602, message: elsewhere });
    const fork = await a.p.request(ECA.chatFork, { chatId: 'c3', contentId: 'u1' });
    expect(fork.error).toMatchObject({ code: -32602, message: elsewhere });
    const back = await a.p.request(ECA.chatRollback, { chatId: 'c3', contentId: 'u1', include: ['messages', 'tools'] });
    expect(back.error).toMatchObject({ code: -32602, message: elsewhere });
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a1\n');

    b.p.notify(ECA.chatPromptStop, { chatId: 'c3' });
    await b.p.turnDone('c3', 2);
    const later = await a.p.request(ECA.chatRollback, { chatId: 'c3', contentId: 'u1', include: ['messages', 'tools'] });
    expect(later.error).toBeUndefined();
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a0\n');
  });
});

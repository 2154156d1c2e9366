/**
 * Commit before announce: whatever the editor was shown survives a SIGKILL at that moment.
 *
 * The race is made deterministic by holding SQLite's write lock from the test: a server that
 * announces first shows `toolCalled` while its commit still waits for the lock, and the kill
 * then loses the result; a server that commits first cannot announce until the lock is gone.
 */
import Database from 'better-sqlite3';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

function storedMessages(home: string, chatId: string): Array<Record<string, any>> {
  const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
  try {
    return (db.prepare('SELECT data FROM messages WHERE chat_id = ? ORDER BY seq').all(chatId) as Array<{ data: string }>).map((r) => JSON.parse(r.data));
  } finally {
    db.close();
  }
}

async function boot(home: string, extra: Record<string, unknown> = {}) {
  const root = workspace({ 'a.txt': 'alpha\n' });
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  return { p, root };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let hanging: Server | undefined;
afterEach(async () => {
  hanging?.closeAllConnections();
  await new Promise((r) => (hanging ? hanging.close(r) : r(undefined)));
  hanging = undefined;
});

describe('durability: commit before announce', () => {
  it('a tool result the editor received is in SQLite when the server is killed that moment', async () => {
    const home = tempDir();
    const { p } = await boot(home, { toolCall: { approval: { byDefault: 'allow' } } });
    // The second step never comes: the kill lands between the tool result and the next LLM request.
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'sleep 0.4; echo result-text' } } }], [{ stall: 'forever' }]);
    const chatId = (await p.request('chat/prompt', { message: 'run it' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.type === 'toolCallRunning', 'toolCallRunning');

    // Hold the write lock while the command finishes (the server's busy timeout is 5 s).
    const locker = new Database(join(home, '.patchbay', 'patchbay.db'));
    locker.exec('BEGIN IMMEDIATE');
    await sleep(1_200);
    const earlyAnnounce = p.messages.some((m) => m.params?.content?.type === 'toolCalled');
    locker.exec('ROLLBACK');
    locker.close();
    const called = await p.waitFor((m) => m.params?.content?.type === 'toolCalled', 'toolCalled');
    p.child.kill('SIGKILL');
    await p.exited;

    expect(earlyAnnounce).toBe(false);
    const tool = storedMessages(home, chatId).find((m) => m.role === 'tool');
    expect(tool).toBeDefined();
    expect(tool!.toolCallId).toBe('s1');
    expect(tool!.outputs).toEqual(called.params.content.outputs);
    expect(JSON.stringify(tool!.outputs)).toContain('result-text');
    // The call's row says the same, written in the same transaction.
    const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT state, error FROM tool_calls WHERE chat_id = ? AND id = ?').get(chatId, 's1')).toEqual({ state: 'called', error: 0 });
    } finally {
      db.close();
    }
  });

  it('a user message echoed to the editor is stored while a slow web context still loads', async () => {
    hanging = createServer(() => {
      /* never answers: the web context is still loading when the server is killed */
    });
    await new Promise<void>((r) => hanging!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/slow`;
    const home = tempDir();
    const { p } = await boot(home);
    llm().script([{ text: 'never reached' }]);
    const chatId = (await p.request('chat/prompt', { message: 'please read this page', contexts: [{ type: 'web', url }] })).result.chatId;
    await p.waitFor((m) => m.params?.chatId === chatId && m.params?.role === 'user' && m.params?.content?.text === 'please read this page', 'user echo');
    // The page request is in flight: contexts are loading.
    await new Promise<void>((resolve) => {
      const check = () => hanging!.getConnections((_e, n) => (n > 0 ? resolve() : setTimeout(check, 20)));
      check();
    });
    p.child.kill('SIGKILL');
    await p.exited;

    const user = storedMessages(home, chatId).filter((m) => m.role === 'user');
    expect(user.map((m) => m.text)).toEqual(['please read this page']);
    expect(llm().requests.length).toBe(0);
  });

  it('the user message gains its rendered contexts once they load, stored once', async () => {
    const home = tempDir();
    const { p, root } = await boot(home);
    llm().script([{ text: 'ok' }]);
    const chatId = (await p.request('chat/prompt', { message: 'look', contexts: [{ type: 'file', path: join(root, 'a.txt') }] })).result.chatId;
    await p.turnDone(chatId);
    const user = storedMessages(home, chatId).filter((m) => m.role === 'user');
    expect(user).toHaveLength(1);
    expect(user[0].contextText).toContain('alpha');
    const sent = llm().requests[0].body.messages.find((m: any) => m.role === 'user').content;
    expect(sent).toContain('alpha');
  });
});

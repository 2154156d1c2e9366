/**
 * Stored messages carry the format version they were written in; reading upgrades and validates
 * them, and a row that cannot be read becomes a notice instead of breaking the chat.
 */
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.js';
import { STORED_MESSAGE_VERSION, decodeStoredMessage, type StoredMessage } from '../../src/core/chat/stored-message.js';

const dirs: string[] = [];
const home = () => {
  const d = mkdtempSync(join(tmpdir(), 'pb-store-v-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const user: StoredMessage = { role: 'user', text: 'hi', contentId: 'c-1' };
const assistant: StoredMessage = { role: 'assistant', parts: [{ type: 'text', text: 'hello' }] };
const tool: StoredMessage = {
  role: 'tool',
  toolCallId: 't1',
  name: 'read_file',
  server: 'patchbay',
  origin: 'native',
  args: { path: 'a.ts' },
  outcome: 'called',
  error: false,
  outputs: [{ type: 'text', text: 'x' }],
  llmText: 'x',
  totalTimeMs: 3,
};

/** The messages table as patchbay wrote it before rows recorded a format version. */
const OLD_SCHEMA = `
CREATE TABLE chats (
  id TEXT PRIMARY KEY, title TEXT, model TEXT, agent TEXT, status TEXT NOT NULL DEFAULT 'idle', owner_pid INTEGER,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  usage TEXT NOT NULL DEFAULT '{"inputTokens":0,"outputTokens":0,"cost":0}'
);
CREATE TABLE messages (
  chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE, seq INTEGER NOT NULL, role TEXT NOT NULL,
  data TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (chat_id, seq)
);`;

function versionOf(s: SqliteStore, chatId: string, seq: number): number {
  return (s.db.prepare('SELECT schema_version FROM messages WHERE chat_id = ? AND seq = ?').get(chatId, seq) as { schema_version: number }).schema_version;
}

describe('stored message versions', () => {
  it('an old database without the version column opens, reads its messages as version 1, and takes new ones', () => {
    const dir = home();
    const old = new Database(join(dir, 'patchbay.db'));
    old.exec(OLD_SCHEMA);
    old.prepare('INSERT INTO chats (id, created_at, updated_at) VALUES (?, 1, 1)').run('c1');
    const insert = old.prepare('INSERT INTO messages (chat_id, seq, role, data, created_at) VALUES (?, ?, ?, ?, 1)');
    [user, assistant, tool].forEach((m, i) => insert.run('c1', i + 1, m.role, JSON.stringify(m)));
    old.close();

    const s = SqliteStore.open(dir);
    expect(s.messages('c1')).toEqual([user, assistant, tool]);
    expect(versionOf(s, 'c1', 1)).toBe(1);
    s.appendMessage('c1', { role: 'user', text: 'again' });
    expect(versionOf(s, 'c1', 4)).toBe(STORED_MESSAGE_VERSION);
    expect(s.messages('c1').at(-1)).toEqual({ role: 'user', text: 'again' });
    s.close();
    // Opening it again (the column now exists) changes nothing.
    const again = SqliteStore.open(dir);
    expect(again.messages('c1')).toHaveLength(4);
    again.close();
  });

  it('a corrupt row is replaced by a notice and the other messages load', () => {
    const s = SqliteStore.open(home());
    s.createChat({ id: 'c1' });
    for (const m of [user, assistant, tool, { role: 'user', text: 'last' } as StoredMessage]) s.appendMessage('c1', m);
    s.db.prepare('UPDATE messages SET data = ? WHERE chat_id = ? AND seq = 2').run('{"role":"assistant","parts":[{"type":"te', 'c1');
    s.db.prepare('UPDATE messages SET data = ? WHERE chat_id = ? AND seq = 3').run(JSON.stringify({ ...tool, outcome: 'maybe' }), 'c1');

    const got = s.messages('c1');
    expect(got).toHaveLength(4);
    expect(got[0]).toEqual(user);
    expect(got[1]).toEqual({ role: 'system', kind: 'notice', text: 'A stored message (#2) could not be read: it is not valid JSON.' });
    expect(got[2]).toMatchObject({ role: 'system', kind: 'notice' });
    expect((got[2] as { text: string }).text).toMatch(/^A stored message \(#3\) could not be read: it does not have the expected shape \(outcome: /);
    expect(got[3]).toEqual({ role: 'user', text: 'last' });
    s.close();
  });

  it('format 1 rows of rejected calls, stored under ECA reason names, read under core reason names', () => {
    const dir = home();
    const old = new Database(join(dir, 'patchbay.db'));
    old.exec(OLD_SCHEMA);
    old.prepare('INSERT INTO chats (id, created_at, updated_at) VALUES (?, 1, 1)').run('c1');
    const insert = old.prepare('INSERT INTO messages (chat_id, seq, role, data, created_at) VALUES (?, ?, ?, ?, 1)');
    const rejected = (id: string, reason: string) => ({ ...tool, toolCallId: id, outcome: 'rejected', error: true, outputs: [], reason, totalTimeMs: 0 });
    const v1 = ['user', 'userChoiceDeny', 'userConfigDeny', 'userPromptStop'];
    v1.forEach((reason, i) => insert.run('c1', i + 1, 'tool', JSON.stringify(rejected(`t${i}`, reason))));
    old.close();

    const s = SqliteStore.open(dir);
    expect(s.messages('c1').map((m) => (m.role === 'tool' ? m.reason : undefined))).toEqual(['user', 'user', 'denied', 'stopped']);
    s.close();
  });

  it('a row from a future version is refused with a clear message, not misread', () => {
    const s = SqliteStore.open(home());
    s.createChat({ id: 'c1' });
    s.appendMessage('c1', user);
    s.appendMessage('c1', assistant);
    // Readable as today's shape, but written by a newer format: it must not be taken at face value.
    s.db.prepare('UPDATE messages SET schema_version = ? WHERE chat_id = ? AND seq = 2').run(STORED_MESSAGE_VERSION + 1, 'c1');
    expect(s.messages('c1')).toEqual([
      user,
      {
        role: 'system',
        kind: 'notice',
        text: `A stored message (#2) could not be read: it was written by a newer patchbay (format version ${STORED_MESSAGE_VERSION + 1}; this one reads up to ${STORED_MESSAGE_VERSION}).`,
      },
    ]);
    s.close();
  });

  it('an older row goes through each migration in turn before it is validated', () => {
    // As the next format change will do: version 2 renamed the user text field.
    const migrations = { 1: (d: unknown) => ({ ...(d as object), text: (d as { body: string }).body }) };
    expect(decodeStoredMessage(JSON.stringify({ role: 'user', body: 'hi' }), 1, migrations, 2)).toEqual({ ok: true, message: { role: 'user', text: 'hi' } });
    expect(decodeStoredMessage(JSON.stringify(user), 2, migrations, 2)).toEqual({ ok: true, message: user });
    expect(decodeStoredMessage(JSON.stringify(user), 1, {}, 2)).toEqual({ ok: false, reason: 'there is no upgrade from format version 1' });
    expect(decodeStoredMessage(JSON.stringify(user), 0)).toMatchObject({ ok: false, reason: 'it has an invalid format version (0)' });
  });

  it('a user row written before images existed reads as it was; one with images keeps them', () => {
    const old = { role: 'user', text: 'hi', contextText: '<text>\nx\n</text>' };
    expect(decodeStoredMessage(JSON.stringify(old), STORED_MESSAGE_VERSION)).toEqual({ ok: true, message: old });
    const withImages = { ...old, images: [{ mediaType: 'image/png', base64: 'AAAA' }] };
    expect(decodeStoredMessage(JSON.stringify(withImages), STORED_MESSAGE_VERSION)).toEqual({ ok: true, message: withImages });
    expect(decodeStoredMessage(JSON.stringify({ ...old, images: [{ mediaType: 'image/png' }] }), STORED_MESSAGE_VERSION)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('images.0.base64'),
    });
  });
});

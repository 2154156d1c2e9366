/**
 * The chat kind column (ECA's `kind`: `inline` for a chat made by `chat/inlinePrompt`): added to a
 * database written before it, regular chats there reading as kind-less; an inline chat keeps its
 * kind through a copy of another chat (the store's fork, which an inline chat's seed uses).
 */
import { afterAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.js';

const dirs: string[] = [];
const home = () => {
  const d = mkdtempSync(join(tmpdir(), 'pb-store-kind-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The chats table as patchbay wrote it before kinds (and folders) were recorded. */
const OLD_CHATS = `
CREATE TABLE chats (
  id TEXT PRIMARY KEY, title TEXT, model TEXT, agent TEXT, status TEXT NOT NULL DEFAULT 'idle', owner_pid INTEGER,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  usage TEXT NOT NULL DEFAULT '{"inputTokens":0,"outputTokens":0,"cost":0}'
);`;

describe('chat kinds in the store', () => {
  it('an old database gains the column; its chats are regular; a new inline chat and its copy of another are listed inline', () => {
    const dir = home();
    const old = new Database(join(dir, 'patchbay.db'));
    old.exec(OLD_CHATS);
    old.prepare('INSERT INTO chats (id, created_at, updated_at) VALUES (?, 1, 1)').run('old');
    old.close();

    const s = SqliteStore.open(dir);
    expect(s.getChat('old')).not.toHaveProperty('kind');
    s.appendMessage('old', { role: 'user', text: 'q', contentId: 'u1' });
    s.createChat({ id: 'fresh', kind: 'inline', title: 'inline: hi' });
    s.forkChat('old', { id: 'copy', kind: 'inline', title: 'inline: more' }, 1, { whileRunning: true });
    expect(s.listChats({}).map((c) => [c.id, c.kind ?? null, c.messageCount])).toEqual(
      expect.arrayContaining([
        ['old', null, 1],
        ['fresh', 'inline', 0],
        ['copy', 'inline', 1],
      ]),
    );
    s.close();
    // Opened again (the column is there now): nothing to add, the kinds read back.
    const again = SqliteStore.open(dir);
    expect(again.getChat('copy')).toMatchObject({ kind: 'inline', title: 'inline: more' });
    again.close();
  });
});

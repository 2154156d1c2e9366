/**
 * Each chat's folders in SQLite (core/chat/chat-roots.ts): its own, or the workspace's it last ran
 * with. A database from before they were recorded gets the table when it is opened; its chats
 * have no row and use the workspace's folders, as they did.
 */
import type Database from 'better-sqlite3';
import type { StoredRoots } from '../core/persistence.js';

export const CHAT_ROOTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS chat_roots (
  chat_id TEXT PRIMARY KEY REFERENCES chats(id) ON DELETE CASCADE,
  -- a JSON array of absolute paths, the chat's working folder first
  roots TEXT NOT NULL,
  -- 1: the chat's own folders (kept across restarts); 0: the workspace's, as it last ran with them
  own INTEGER NOT NULL
);`;

export class ChatRootsTable {
  constructor(
    db: Database.Database,
    private readonly stmt: (sql: string) => Database.Statement,
  ) {
    db.exec(CHAT_ROOTS_SCHEMA);
  }

  get(chatId: string): StoredRoots | undefined {
    const row = this.stmt('SELECT roots, own FROM chat_roots WHERE chat_id = ?').get(chatId) as { roots: string; own: number } | undefined;
    if (!row) return undefined;
    const roots = pathsOf(row.roots);
    // A list that cannot be read is none: the chat uses the workspace's folders.
    return roots.length ? { roots, own: row.own === 1 } : undefined;
  }

  /** Replaces the chat's row; a chat that is not stored (deleted meanwhile) gets none. */
  set(chatId: string, r: StoredRoots): void {
    this.stmt(
      'INSERT INTO chat_roots (chat_id, roots, own) SELECT @id, @roots, @own WHERE EXISTS (SELECT 1 FROM chats WHERE id = @id) ON CONFLICT(chat_id) DO UPDATE SET roots = excluded.roots, own = excluded.own',
    ).run({ id: chatId, roots: JSON.stringify(r.roots), own: r.own ? 1 : 0 });
  }

  /** A fork's folders are its source's (the caller holds the transaction). */
  copy(from: string, to: string): void {
    this.stmt('INSERT OR REPLACE INTO chat_roots (chat_id, roots, own) SELECT ?, roots, own FROM chat_roots WHERE chat_id = ?').run(to, from);
  }
}

function pathsOf(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  } catch {
    return [];
  }
}

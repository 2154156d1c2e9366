/**
 * The file checkpoints of chat/rollback in SQLite (core/chat/rollback.ts): one row per change a file
 * tool made, naming its call by the LLM's id and the position of the assistant message that asked
 * for it, and the content before it stored once per distinct content (by sha256), whichever
 * chats' checkpoints name it. SqliteStore holds the transactions; these are its statements.
 */
import type Database from 'better-sqlite3';
import type { CheckpointCall, StoredCheckpoint } from '../core/persistence.js';
import { contentHash } from '../core/tools/checkpoint.js';
import type { FileCheckpoint } from '../shapes/tool.js';

/** Past this much distinct file content in one chat's checkpoints, new ones keep only the reason. */
export const CHAT_CHECKPOINT_LIMIT_BYTES = 200 * 1024 * 1024;

export const CHECKPOINT_SCHEMA = `
-- File contents kept for chat/rollback, once each whatever how many checkpoints (of any chat,
-- forks included) name them: a chain of edits costs one copy per distinct content. A content no
-- checkpoint names any more is deleted with the checkpoints that went (collectBlobs).
CREATE TABLE IF NOT EXISTS checkpoint_blobs (
  hash TEXT PRIMARY KEY, -- sha256 of bytes
  size INTEGER NOT NULL,
  bytes BLOB NOT NULL
);
-- What each file tool call changed, for chat/rollback (core/chat/rollback.ts). A database from before
-- checkpoints gets this table when it is opened; its older calls simply have none.
CREATE TABLE IF NOT EXISTS file_checkpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  tool_call_id TEXT NOT NULL,
  -- the position of the assistant message that asked for the call: the LLM's call ids may repeat
  -- across steps (call_0), and the call's tool message is stored only after its changes
  message_seq INTEGER NOT NULL,
  path TEXT NOT NULL,
  -- checkpoint_blobs.hash of the bytes before; NULL when the path did not exist (or see skipped)
  before_hash TEXT,
  -- sha256 of the bytes after; NULL when the path was gone after the call
  after_hash TEXT,
  -- why the bytes before were not kept (too large, a directory, the chat's limit); NULL when they were
  skipped TEXT,
  -- the real path of the file's folder at the change (a rollback refuses when it moved)
  folder TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS file_checkpoints_by_message ON file_checkpoints (chat_id, message_seq);
CREATE INDEX IF NOT EXISTS file_checkpoints_by_content ON file_checkpoints (before_hash);
`;

type Row = { id: number; tool_call_id: string; message_seq: number; path: string; before_hash: string | null; after_hash: string | null; skipped: string | null; folder: string | null };
const COLUMNS = 'id, tool_call_id, message_seq, path, before_hash, after_hash, skipped, folder';

export class CheckpointTable {
  constructor(
    private readonly stmt: (sql: string) => Database.Statement,
    /** Bytes of distinct file content one chat's checkpoints may hold. */
    private readonly limit: number,
  ) {}

  /**
   * One change (the caller holds a write transaction: the limit is checked and used in it). Kept
   * only while the message that asked for the call still holds it: a stopped tool that finishes
   * after a rollback removed its asking message records nothing (its row would otherwise be taken
   * for a later call that reuses the id at that position).
   */
  add(chatId: string, call: CheckpointCall, c: FileCheckpoint): boolean {
    const asked = this.stmt(
      `SELECT 1 FROM messages m, json_each(m.data, '$.parts') p
         WHERE m.chat_id = ? AND m.seq = ? AND m.role = 'assistant' AND json_extract(p.value, '$.type') = 'toolCall' AND json_extract(p.value, '$.id') = ? LIMIT 1`,
    ).get(chatId, call.messageSeq, call.id);
    if (!asked) return false;
    const kept = c.before === null ? { hash: null, skipped: c.skipped ?? null } : this.keep(chatId, c.before);
    this.stmt('INSERT INTO file_checkpoints (chat_id, tool_call_id, message_seq, path, before_hash, after_hash, skipped, folder, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
      chatId,
      call.id,
      call.messageSeq,
      c.path,
      kept.hash,
      c.afterHash,
      kept.skipped,
      c.folder ?? null,
      Date.now(),
    );
    return true;
  }

  /** Stores `bytes` once (by hash); past the chat's limit of distinct content, the reason instead. */
  private keep(chatId: string, bytes: Buffer): { hash: string | null; skipped: string | null } {
    const hash = contentHash(bytes);
    // A content the chat already holds costs nothing more.
    if (!this.stmt('SELECT 1 FROM file_checkpoints WHERE chat_id = ? AND before_hash = ? LIMIT 1').get(chatId, hash)) {
      const { used } = this.stmt('SELECT coalesce(sum(size), 0) AS used FROM checkpoint_blobs WHERE hash IN (SELECT before_hash FROM file_checkpoints WHERE chat_id = ?)').get(chatId) as {
        used: number;
      };
      if (used + bytes.length > this.limit) {
        return { hash: null, skipped: `the chat's checkpoints had reached their limit (${megabytes(this.limit)} of file contents) when it was changed` };
      }
    }
    this.stmt('INSERT OR IGNORE INTO checkpoint_blobs (hash, size, bytes) VALUES (?, ?, ?)').run(hash, bytes.length, bytes);
    return { hash, skipped: null };
  }

  /** The changes of the calls asked for from `fromSeq` on and of `calls`, oldest first, without contents. */
  list(chatId: string, fromSeq: number, calls: CheckpointCall[]): StoredCheckpoint[] {
    const rows = new Map<number, Row>();
    for (const r of this.stmt(`SELECT ${COLUMNS} FROM file_checkpoints WHERE chat_id = ? AND message_seq >= ?`).all(chatId, fromSeq) as Row[]) rows.set(r.id, r);
    for (const call of calls) {
      for (const r of this.stmt(`SELECT ${COLUMNS} FROM file_checkpoints WHERE chat_id = ? AND message_seq = ? AND tool_call_id = ?`).all(chatId, call.messageSeq, call.id) as Row[]) rows.set(r.id, r);
    }
    return [...rows.values()].sort((a, b) => a.id - b.id).map(toCheckpoint);
  }

  content(hash: string): Buffer | undefined {
    const row = this.stmt('SELECT bytes FROM checkpoint_blobs WHERE hash = ?').get(hash) as { bytes: Buffer } | undefined;
    return row?.bytes;
  }

  /**
   * A fork keeps the checkpoints of the tool calls it keeps: asked for and answered by messages up
   * to `uptoSeq`. Only the references are copied; the contents stay where they are, shared.
   */
  copy(from: string, to: string, uptoSeq: number): void {
    this.stmt(
      `INSERT INTO file_checkpoints (chat_id, tool_call_id, message_seq, path, before_hash, after_hash, skipped, folder, created_at)
         SELECT ?, tool_call_id, message_seq, path, before_hash, after_hash, skipped, folder, created_at FROM file_checkpoints f
         WHERE f.chat_id = ? AND f.message_seq <= ? AND EXISTS (
           SELECT 1 FROM messages m WHERE m.chat_id = f.chat_id AND m.role = 'tool' AND m.seq > f.message_seq AND m.seq <= ? AND json_extract(m.data, '$.toolCallId') = f.tool_call_id
             -- the answer to THIS asking message: no later one asked for the same id in between
             AND NOT EXISTS (
               SELECT 1 FROM messages a, json_each(a.data, '$.parts') p
                 WHERE a.chat_id = f.chat_id AND a.role = 'assistant' AND a.seq > f.message_seq AND a.seq < m.seq
                   AND json_extract(p.value, '$.type') = 'toolCall' AND json_extract(p.value, '$.id') = f.tool_call_id))
         ORDER BY id`,
    ).run(to, from, uptoSeq, uptoSeq);
  }

  delete(ids: number[]): void {
    for (const id of ids) this.stmt('DELETE FROM file_checkpoints WHERE id = ?').run(id);
  }

  /** The calls asked for from `fromSeq` on, answered or not (a process killed mid-tool stored no answer). */
  deleteFrom(chatId: string, fromSeq: number): void {
    this.stmt('DELETE FROM file_checkpoints WHERE chat_id = ? AND message_seq >= ?').run(chatId, fromSeq);
  }

  /** A message was inserted after `afterSeq` (a flag): the messages the checkpoints name moved one on. */
  shiftAfter(chatId: string, afterSeq: number): void {
    this.stmt('UPDATE file_checkpoints SET message_seq = message_seq + 1 WHERE chat_id = ? AND message_seq > ?').run(chatId, afterSeq);
  }

  /** Deletes the contents no checkpoint names any more (after checkpoints went, in their transaction). */
  collect(): void {
    this.stmt('DELETE FROM checkpoint_blobs WHERE NOT EXISTS (SELECT 1 FROM file_checkpoints f WHERE f.before_hash = checkpoint_blobs.hash)').run();
  }
}

function toCheckpoint(r: Row): StoredCheckpoint {
  return {
    id: r.id,
    toolCallId: r.tool_call_id,
    messageSeq: r.message_seq,
    path: r.path,
    beforeHash: r.before_hash,
    afterHash: r.after_hash,
    ...(r.skipped === null ? {} : { skipped: r.skipped }),
    ...(r.folder === null ? {} : { folder: r.folder }),
  };
}

/**
 * file_checkpoints as first written (unreleased) kept each content in its row: dropped, and made
 * again by the schema, empty. Those checkpoints are lost (their chats cannot undo older calls), a
 * price paid once, by development builds only.
 */
export function dropOldCheckpoints(db: Database.Database): void {
  db.transaction(() => {
    const columns = (db.pragma('table_info(file_checkpoints)') as Array<{ name: string }>).map((c) => c.name);
    if (columns.includes('before')) db.exec('DROP TABLE file_checkpoints');
  }).immediate();
}

function megabytes(bytes: number): string {
  const mb = bytes / 1024 / 1024;
  return mb >= 1 ? `${Math.round(mb)} MB` : `${bytes} bytes`;
}

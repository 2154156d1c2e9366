/**
 * SQLite store (better-sqlite3, WAL) under PATCHBAY_HOME. Every completed message is
 * committed as it happens, so a process killed mid-turn loses only the step in flight.
 */
import Database from 'better-sqlite3';
import { join, sep } from 'node:path';
import { STORED_MESSAGE_VERSION, decodeStoredMessage, type StoredMessage } from '../core/chat/stored-message.js';
import {
  ChatRunningElsewhereError,
  type ChatPersistence,
  type ChatRecord,
  type CheckpointCall,
  type NewChatRecord,
  type StoredCheckpoint,
  type StoredRoots,
  type StoredRow,
  type ToolCallRecord,
} from '../core/persistence.js';
import { CHAT_CHECKPOINT_LIMIT_BYTES, CHECKPOINT_SCHEMA, CheckpointTable, dropOldCheckpoints } from './checkpoint-table.js';
import { ChatRootsTable } from './chat-roots-table.js';
import type { FileCheckpoint } from '../shapes/tool.js';
import type { EventEntry, EventFilter, EventStreamStore } from '../shapes/event-stream.js';
import { INSTANCES_SCHEMA, InstanceLease, ownerElsewhere, type ChatOwner, type LeaseOptions } from './instances.js';
import { ensurePrivateDir, ensurePrivateFile } from '../util/private-dir.js';
import { errorMessage, logger } from '../util/log.js';
import { explainNativeLoadError, NativeModuleMismatch } from '../util/native-module.js';

const log = logger('store');
/** How long pushed events wait to be written together (a SIGKILL loses at most this much). */
const EVENT_FLUSH_MS = 50;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS chats (
  id TEXT PRIMARY KEY,
  title TEXT,
  model TEXT,
  agent TEXT,
  status TEXT NOT NULL DEFAULT 'idle',
  -- pid of the server running a turn (what older patchbays read; store/instances.ts)
  owner_pid INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  usage TEXT NOT NULL DEFAULT '{"inputTokens":0,"outputTokens":0,"cost":0}',
  -- trust mode (chat/update, chat/prompt trust): calls that would ask run without asking
  trust INTEGER NOT NULL DEFAULT 0,
  -- the model variant (ECA's variants: a named payload preset such as reasoning effort)
  variant TEXT,
  -- a subagent's chat: the chat whose spawn_agent call ran it (deleted with it)
  parent_chat_id TEXT REFERENCES chats(id) ON DELETE CASCADE,
  -- the workspace folder the chat was started in (ACP session/list by cwd); null: not recorded
  folder TEXT,
  -- ECA's chat kind: 'inline' for a chat made by chat/inlinePrompt; null: a regular chat
  kind TEXT,
  -- its further folders (ACP additionalDirectories), a JSON array; null: none recorded
  additional_folders TEXT,
  -- the instance lease running a turn (store/instances.ts); a 'running' chat whose lease is gone was interrupted
  owner_instance TEXT
);
CREATE TABLE IF NOT EXISTS messages (
  chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  role TEXT NOT NULL,
  data TEXT NOT NULL,
  -- the StoredMessage format version \`data\` was written in (core/chat/stored-message.ts)
  schema_version INTEGER NOT NULL DEFAULT 1,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, seq)
);
CREATE TABLE IF NOT EXISTS tool_calls (
  chat_id TEXT NOT NULL REFERENCES chats(id) ON DELETE CASCADE,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  server TEXT NOT NULL,
  args TEXT NOT NULL,
  state TEXT NOT NULL,
  error INTEGER,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, id)
);
CREATE TABLE IF NOT EXISTS events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  stream TEXT NOT NULL,
  source TEXT NOT NULL,
  chat_id TEXT,
  level TEXT NOT NULL,
  text TEXT NOT NULL,
  metadata TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_stream ON events (stream, id);
${CHECKPOINT_SCHEMA}`;

export interface StoreOptions {
  /** Overrides CHAT_CHECKPOINT_LIMIT_BYTES (tests). */
  checkpointLimitBytes?: number;
  /** The instance lease's timings (tests). */
  lease?: LeaseOptions;
}

/** The tool-call ids of a chat's tool messages from position ? on (chat id, then seq). */
const TOOL_CALLS_FROM = "SELECT json_extract(data, '$.toolCallId') FROM messages WHERE chat_id = ? AND role = 'tool' AND seq >= ?";

interface ChatRow {
  id: string;
  title: string | null;
  model: string | null;
  agent: string | null;
  status: string;
  created_at: number;
  updated_at: number;
  usage: string;
  trust: number;
  variant: string | null;
  parent_chat_id: string | null;
  folder: string | null;
  kind: string | null;
  additional_folders: string | null;
  message_count: number;
}

interface EventRow {
  id: number;
  stream: string;
  source: string;
  chat_id: string | null;
  level: EventEntry['level'];
  text: string;
  metadata: string | null;
  created_at: number;
}

export class SqliteStore implements ChatPersistence, EventStreamStore {
  readonly db: Database.Database;
  readonly path: string;
  /** This connection's instance lease: the owner its running chats name (./instances.ts). */
  readonly lease: InstanceLease;

  static open(home: string, opts?: StoreOptions): SqliteStore {
    ensurePrivateDir(home);
    // SQLite creates the -wal and -shm files with the database file's mode.
    ensurePrivateFile(join(home, 'patchbay.db'));
    return new SqliteStore(join(home, 'patchbay.db'), opts);
  }

  /**
   * Loads better-sqlite3's native addon (an in-memory database, nothing on disk): throws
   * {@link NativeModuleMismatch} when it was built for another Node. `patchbay chat` checks this
   * before it starts a server that would fail the same way.
   */
  static checkNativeModule(): void {
    try {
      new Database(':memory:').close();
    } catch (e) {
      const why = explainNativeLoadError(e, 'better-sqlite3');
      throw why ? new NativeModuleMismatch(why) : e;
    }
  }

  private readonly checkpoints: CheckpointTable;
  private readonly rootsTable: ChatRootsTable;

  private readonly statements = new Map<string, Database.Statement>();

  /** Prepared once, reused: preparing costs about as much as running a small statement. */
  private stmt(sql: string): Database.Statement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  constructor(path: string, opts: StoreOptions = {}) {
    this.path = path;
    try {
      this.db = new Database(path);
    } catch (e) {
      // The first load of the native addon: built for another Node is the common failure.
      const why = explainNativeLoadError(e, 'better-sqlite3');
      throw why ? new NativeModuleMismatch(why) : e;
    }
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    dropOldCheckpoints(this.db);
    this.db.exec(SCHEMA);
    this.db.exec(INSTANCES_SCHEMA);
    migrate(this.db);
    this.lease = new InstanceLease(this.db, opts.lease);
    this.lease.start();
    this.checkpoints = new CheckpointTable((sql) => this.stmt(sql), opts.checkpointLimitBytes ?? CHAT_CHECKPOINT_LIMIT_BYTES);
    this.rootsTable = new ChatRootsTable(this.db, (sql) => this.stmt(sql));
  }

  chatRoots(id: string): StoredRoots | undefined {
    return this.rootsTable.get(id);
  }

  recordRoots(id: string, roots: StoredRoots): void {
    this.rootsTable.set(id, roots);
  }

  createChat(rec: NewChatRecord): void {
    const now = Date.now();
    this.stmt('INSERT OR IGNORE INTO chats (id, title, model, agent, created_at, updated_at, parent_chat_id, folder, kind, additional_folders) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').run(
      rec.id,
      rec.title ?? null,
      rec.model ?? null,
      rec.agent ?? null,
      now,
      now,
      rec.parentChatId ?? null,
      rec.folder ?? null,
      rec.kind ?? null,
      rec.additionalFolders?.length ? JSON.stringify(rec.additionalFolders) : null,
    );
  }

  recordFolders(id: string, f: { folder?: string; additionalFolders?: string[] }): void {
    if (f.folder !== undefined) this.stmt('UPDATE chats SET folder = ? WHERE id = ? AND folder IS NULL').run(f.folder, id);
    if (f.additionalFolders !== undefined) this.stmt('UPDATE chats SET additional_folders = ? WHERE id = ?').run(f.additionalFolders.length ? JSON.stringify(f.additionalFolders) : null, id);
  }

  getChat(id: string): ChatRecord | undefined {
    const row = this.stmt('SELECT c.*, (SELECT count(*) FROM messages m WHERE m.chat_id = c.id) AS message_count FROM chats c WHERE c.id = ?').get(id) as ChatRow | undefined;
    return row && toRecord(row);
  }

  /**
   * The newest chats (subagents' left out). `folder`: only chats started in that folder or one
   * inside it (a chat whose folder was not recorded, from before it was, is not one of them).
   */
  listChats(opts: { limit?: number; sortBy?: 'updatedAt' | 'createdAt'; folder?: string; withEmpty?: boolean }): ChatRecord[] {
    const order = opts.sortBy === 'createdAt' ? 'created_at' : 'updated_at';
    const nonEmpty = opts.withEmpty === false ? ' AND EXISTS (SELECT 1 FROM messages m WHERE m.chat_id = c.id)' : '';
    const inFolder = opts.folder === undefined ? '' : ` AND (c.folder = @folder OR substr(c.folder, 1, length(@prefix)) = @prefix)`;
    const prefix = opts.folder === undefined ? undefined : opts.folder.endsWith(sep) ? opts.folder : `${opts.folder}${sep}`;
    const rows = this.stmt(
      `SELECT c.*, (SELECT count(*) FROM messages m WHERE m.chat_id = c.id) AS message_count FROM chats c WHERE c.parent_chat_id IS NULL${inFolder}${nonEmpty} ORDER BY ${order} DESC, rowid DESC LIMIT @limit`,
    ).all({ limit: opts.limit ?? 100, ...(opts.folder === undefined ? {} : { folder: opts.folder, prefix }) }) as ChatRow[];
    return rows.map(toRecord);
  }

  updateChat(id: string, patch: Partial<Pick<ChatRecord, 'title' | 'model' | 'agent' | 'status' | 'usage' | 'trust'>> & { variant?: string | null }): void {
    const sets: string[] = ['updated_at = @now'];
    const values: Record<string, unknown> = { id, now: Date.now() };
    if (patch.status) {
      sets.push('owner_pid = @owner', 'owner_instance = @instance');
      values.owner = patch.status === 'running' ? process.pid : null;
      values.instance = patch.status === 'running' ? this.lease.id : null;
    }
    for (const key of ['title', 'model', 'agent', 'status'] as const) {
      if (patch[key] !== undefined) {
        sets.push(`${key} = @${key}`);
        values[key] = patch[key];
      }
    }
    if (patch.variant !== undefined) {
      sets.push('variant = @variant');
      values.variant = patch.variant;
    }
    if (patch.trust !== undefined) {
      sets.push('trust = @trust');
      values.trust = patch.trust ? 1 : 0;
    }
    if (patch.usage) {
      sets.push('usage = @usage');
      values.usage = JSON.stringify(patch.usage);
    }
    this.stmt(`UPDATE chats SET ${sets.join(', ')} WHERE id = @id`).run(values);
  }

  deleteChat(id: string): void {
    this.db.transaction(() => {
      this.stmt('DELETE FROM chats WHERE id = ?').run(id);
      this.checkpoints.collect();
    })();
  }

  /** One message row in the current format (the caller holds the transaction and picks `seq`). */
  private insertRow(chatId: string, seq: number, message: StoredMessage, now: number): void {
    this.stmt('INSERT INTO messages (chat_id, seq, role, data, schema_version, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
      chatId,
      seq,
      message.role,
      JSON.stringify(message),
      STORED_MESSAGE_VERSION,
      now,
    );
  }

  appendMessage(chatId: string, message: StoredMessage, toolCall?: ToolCallRecord): number {
    const now = Date.now();
    return this.db
      .transaction(() => {
        if (toolCall) this.saveToolCall(toolCall);
        const { next } = this.stmt('SELECT coalesce(max(seq), 0) + 1 AS next FROM messages WHERE chat_id = ?').get(chatId) as {
          next: number;
        };
        this.insertRow(chatId, next, message, now);
        this.stmt('UPDATE chats SET updated_at = ? WHERE id = ?').run(now, chatId);
        return next;
      })
      .immediate(); // take the write lock first: a read-then-write upgrade can fail with BUSY at once
  }

  replaceMessage(chatId: string, seq: number, message: StoredMessage): void {
    this.stmt('UPDATE messages SET data = ?, schema_version = ? WHERE chat_id = ? AND seq = ?').run(JSON.stringify(message), STORED_MESSAGE_VERSION, chatId, seq);
  }

  clearMessages(chatId: string): void {
    this.db.transaction(() => {
      this.stmt('DELETE FROM messages WHERE chat_id = ?').run(chatId);
      this.stmt('DELETE FROM tool_calls WHERE chat_id = ?').run(chatId);
      this.stmt('DELETE FROM file_checkpoints WHERE chat_id = ?').run(chatId);
      this.checkpoints.collect();
      this.stmt(`UPDATE chats SET usage = '{"inputTokens":0,"outputTokens":0,"cost":0}', updated_at = ? WHERE id = ?`).run(Date.now(), chatId);
    })();
  }

  /**
   * A chat's messages, each upgraded to the current format and validated. A row that cannot be
   * read stands as a notice in its place (and is logged), so the rest of the chat still loads.
   */
  messages(chatId: string): StoredMessage[] {
    return this.messageRows(chatId).map((r) => r.message);
  }

  messageRows(chatId: string): StoredRow[] {
    const rows = this.stmt('SELECT seq, data, schema_version, created_at FROM messages WHERE chat_id = ? ORDER BY seq').all(chatId) as Array<{
      seq: number;
      data: string;
      schema_version: number;
      created_at: number;
    }>;
    return rows.map((r) => {
      const decoded = decodeStoredMessage(r.data, r.schema_version);
      const message: StoredMessage = decoded.ok ? decoded.message : { role: 'system', kind: 'notice', text: `A stored message (#${r.seq}) could not be read: ${decoded.reason}.` };
      if (!decoded.ok) log.warn(`chat ${chatId}: stored message ${r.seq} could not be read: ${decoded.reason}`);
      return { seq: r.seq, createdAt: r.created_at, message };
    });
  }

  forkChat(from: string, to: NewChatRecord, uptoSeq: number, opts: { whileRunning?: boolean } = {}): void {
    this.db
      .transaction(() => {
        if (!opts.whileRunning) this.refuseRunningElsewhere(from);
        this.createChat(to);
        // Rows are copied as stored (format version and time kept): the fork reads them like the original.
        this.stmt('INSERT INTO messages (chat_id, seq, role, data, schema_version, created_at) SELECT ?, seq, role, data, schema_version, created_at FROM messages WHERE chat_id = ? AND seq <= ?').run(
          to.id,
          from,
          uptoSeq,
        );
        this.checkpoints.copy(from, to.id, uptoSeq);
        this.rootsTable.copy(from, to.id);
      })
      .immediate();
  }

  addFileCheckpoint(chatId: string, call: CheckpointCall, c: FileCheckpoint): void {
    this.db.transaction(() => this.checkpoints.add(chatId, call, c)).immediate();
  }

  fileCheckpoints(chatId: string, fromSeq: number, calls: CheckpointCall[] = []): StoredCheckpoint[] {
    return this.checkpoints.list(chatId, fromSeq, calls);
  }

  checkpointContent(hash: string): Buffer | undefined {
    return this.checkpoints.content(hash);
  }

  dropFileCheckpoints(chatId: string, ids: number[]): void {
    this.db
      .transaction(() => {
        this.refuseRunningElsewhere(chatId);
        this.checkpoints.delete(ids);
        this.checkpoints.collect();
      })
      .immediate();
  }

  truncateMessages(chatId: string, fromSeq: number, dropCheckpoints: number[] = []): void {
    this.db
      .transaction(() => {
        this.refuseRunningElsewhere(chatId);
        // The calls asked for past the cut, answered or not (a process killed mid-tool stored no answer).
        this.checkpoints.deleteFrom(chatId, fromSeq);
        this.checkpoints.delete(dropCheckpoints);
        this.checkpoints.collect();
        this.stmt(`DELETE FROM tool_calls WHERE chat_id = ? AND id IN (${TOOL_CALLS_FROM})`).run(chatId, chatId, fromSeq);
        this.stmt('DELETE FROM messages WHERE chat_id = ? AND seq >= ?').run(chatId, fromSeq);
        this.stmt('UPDATE chats SET updated_at = ? WHERE id = ?').run(Date.now(), chatId);
      })
      .immediate();
  }

  runningElsewhere(chatId: string): number | undefined {
    const row = this.stmt('SELECT status, owner_pid, owner_instance FROM chats WHERE id = ?').get(chatId) as ({ status: string } & ChatOwner) | undefined;
    return row?.status === 'running' ? ownerElsewhere(this.lease, row) : undefined;
  }

  /**
   * Inside a write transaction: another live server's turn writes this chat's messages by position,
   * so whatever would move or remove them is refused (two editors sharing one PATCHBAY_HOME).
   */
  private refuseRunningElsewhere(chatId: string): void {
    const pid = this.runningElsewhere(chatId);
    if (pid !== undefined) throw new ChatRunningElsewhereError(chatId, pid);
  }

  insertMessageAfter(chatId: string, afterSeq: number, message: StoredMessage): number {
    const now = Date.now();
    return this.db
      .transaction(() => {
        // (chat_id, seq) is the primary key and SQLite checks it row by row, so `seq + 1` in one
        // pass would collide with the next row: move the tail out of the way (negated), then back.
        this.refuseRunningElsewhere(chatId);
        this.stmt('UPDATE messages SET seq = -(seq + 1) WHERE chat_id = ? AND seq > ?').run(chatId, afterSeq);
        this.stmt('UPDATE messages SET seq = -seq WHERE chat_id = ? AND seq < 0').run(chatId);
        this.checkpoints.shiftAfter(chatId, afterSeq);
        const seq = afterSeq + 1;
        this.insertRow(chatId, seq, message, now);
        this.stmt('UPDATE chats SET updated_at = ? WHERE id = ?').run(now, chatId);
        return seq;
      })
      .immediate();
  }

  deleteMessage(chatId: string, seq: number): void {
    const now = Date.now();
    this.db
      .transaction(() => {
        this.stmt('DELETE FROM messages WHERE chat_id = ? AND seq = ?').run(chatId, seq);
        this.stmt('UPDATE chats SET updated_at = ? WHERE id = ?').run(now, chatId);
      })
      .immediate();
  }

  saveToolCall(rec: ToolCallRecord): void {
    this.stmt(
      `INSERT INTO tool_calls (chat_id, id, name, server, args, state, error, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (chat_id, id) DO UPDATE SET state = excluded.state, error = excluded.error, args = excluded.args, updated_at = excluded.updated_at`,
    ).run(rec.chatId, rec.id, rec.name, rec.server, JSON.stringify(rec.args), rec.state, rec.error === undefined ? null : Number(rec.error), Date.now());
  }

  recoverInterrupted(): string[] {
    const rows = this.stmt("SELECT id, owner_pid, owner_instance FROM chats WHERE status = 'running'").all() as Array<{ id: string } & ChatOwner>;
    // Another live instance (a second editor, another host in this process) may own a running chat: leave those alone.
    const ids = rows.filter((r) => ownerElsewhere(this.lease, r) === undefined).map((r) => r.id);
    for (const id of ids) {
      this.stmt("UPDATE tool_calls SET state = 'rejected' WHERE chat_id = ? AND state IN ('preparing', 'waitingApproval', 'running')").run(id);
      this.appendMessage(id, { role: 'system', kind: 'interrupted', text: 'The previous turn was interrupted (patchbay stopped before it finished).' });
      this.updateChat(id, { status: 'idle' });
    }
    return ids;
  }

  appendEvent(e: Omit<EventEntry, 'id' | 'createdAt'>): EventEntry {
    this.flushEvents();
    return this.insertEvent(e, Date.now());
  }

  private insertEvent(e: Omit<EventEntry, 'id' | 'createdAt'>, createdAt: number): EventEntry {
    const { lastInsertRowid } = this.stmt('INSERT INTO events (stream, source, chat_id, level, text, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      e.stream,
      e.source,
      e.chatId ?? null,
      e.level,
      e.text,
      e.metadata ? JSON.stringify(e.metadata) : null,
      createdAt,
    );
    return { ...e, id: Number(lastInsertRowid), createdAt };
  }

  private queuedEvents: Array<{ e: Omit<EventEntry, 'id' | 'createdAt'>; at: number }> = [];

  /**
   * appendEvent for pushes: written with the others of the next EVENT_FLUSH_MS in one transaction.
   * A commit per push made a provider flood spend the loop on commits (issue 14, point 8); every
   * read of the events (and close) flushes first, so nothing reads around the queue.
   */
  queueEvent(e: Omit<EventEntry, 'id' | 'createdAt'>): void {
    if (!this.queuedEvents.length) {
      setTimeout(() => {
        try {
          this.flushEvents();
        } catch (err) {
          // A full disk or a locked database must not take the server down; these events are lost.
          log.error(`could not store provider events: ${errorMessage(err)}`);
        }
      }, EVENT_FLUSH_MS).unref();
    }
    this.queuedEvents.push({ e, at: Date.now() });
  }

  flushEvents(): void {
    const batch = this.queuedEvents.splice(0);
    if (!batch.length || !this.db.open) return;
    this.db.transaction(() => {
      for (const { e, at } of batch) this.insertEvent(e, at);
    })();
  }

  queryEvents(f: EventFilter): EventEntry[] {
    this.flushEvents();
    const where: string[] = [];
    const args: unknown[] = [];
    const add = (sql: string, v: unknown) => {
      where.push(sql);
      args.push(v);
    };
    if (f.stream !== undefined) add('stream = ?', f.stream);
    if (f.chatId !== undefined) add('chat_id = ?', f.chatId);
    if (f.source !== undefined) add('source = ?', f.source);
    if (f.level !== undefined) add('level = ?', f.level);
    if (f.afterId !== undefined) add('id > ?', f.afterId);
    if (f.since !== undefined) add('created_at >= ?', f.since);
    if (f.contains) add('instr(lower(text), lower(?)) > 0', f.contains);
    // The newest `limit` entries, returned oldest first.
    const sql = `SELECT * FROM (SELECT * FROM events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?) ORDER BY id`;
    const rows = this.stmt(sql).all(...args, Math.min(f.limit ?? 50, 1000)) as EventRow[];
    return rows.map((r) => ({
      id: r.id,
      stream: r.stream,
      source: r.source,
      ...(r.chat_id ? { chatId: r.chat_id } : {}),
      level: r.level,
      text: r.text,
      ...(r.metadata ? { metadata: JSON.parse(r.metadata) as Record<string, unknown> } : {}),
      createdAt: r.created_at,
    }));
  }

  streams(): Array<{ stream: string; count: number; last: number }> {
    this.flushEvents();
    return this.stmt('SELECT stream, count(*) AS count, max(created_at) AS last FROM events GROUP BY stream ORDER BY last DESC').all() as Array<{
      stream: string;
      count: number;
      last: number;
    }>;
  }

  close(): void {
    this.flushEvents();
    this.lease.release();
    this.db.close();
  }
}

/**
 * Brings a database written by an older patchbay up to SCHEMA. `CREATE TABLE IF NOT EXISTS`
 * leaves existing tables alone, so each added column is added here.
 */
function migrate(db: Database.Database): void {
  // Under the write lock: two servers opening the same old database must not both add a column.
  db.transaction(() => {
    const columns = (db.pragma('table_info(messages)') as Array<{ name: string }>).map((c) => c.name);
    // Rows from before format versions were recorded are version 1.
    if (!columns.includes('schema_version')) db.exec('ALTER TABLE messages ADD COLUMN schema_version INTEGER NOT NULL DEFAULT 1');
    const chatColumns = (db.pragma('table_info(chats)') as Array<{ name: string }>).map((c) => c.name);
    // Chats from before trust mode are not trusted.
    if (!chatColumns.includes('trust')) db.exec('ALTER TABLE chats ADD COLUMN trust INTEGER NOT NULL DEFAULT 0');
    // Chats from before variants used none.
    if (!chatColumns.includes('variant')) db.exec('ALTER TABLE chats ADD COLUMN variant TEXT');
    // Chats from before subagents have no parent.
    if (!chatColumns.includes('parent_chat_id')) db.exec('ALTER TABLE chats ADD COLUMN parent_chat_id TEXT REFERENCES chats(id) ON DELETE CASCADE');
    // Chats from before folders were recorded have none (listed for every folder).
    if (!chatColumns.includes('folder')) db.exec('ALTER TABLE chats ADD COLUMN folder TEXT');
    // Chats from before kinds were recorded are regular chats.
    if (!chatColumns.includes('kind')) db.exec('ALTER TABLE chats ADD COLUMN kind TEXT');
    if (!chatColumns.includes('additional_folders')) db.exec('ALTER TABLE chats ADD COLUMN additional_folders TEXT');
    // Chats from before instance leases name only a pid (store/instances.ts `ownerElsewhere`).
    if (!chatColumns.includes('owner_instance')) db.exec('ALTER TABLE chats ADD COLUMN owner_instance TEXT');
  }).immediate();
}

function toRecord(r: ChatRow): ChatRecord {
  return {
    id: r.id,
    title: r.title ?? undefined,
    model: r.model ?? undefined,
    agent: r.agent ?? undefined,
    status: r.status === 'running' ? 'running' : 'idle',
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    messageCount: r.message_count,
    usage: JSON.parse(r.usage) as ChatRecord['usage'],
    trust: r.trust === 1,
    ...(r.variant ? { variant: r.variant } : {}),
    ...(r.parent_chat_id ? { parentChatId: r.parent_chat_id } : {}),
    ...(r.folder ? { folder: r.folder } : {}),
    ...(r.kind === 'inline' ? { kind: 'inline' as const } : {}),
    ...(r.additional_folders ? { additionalFolders: foldersOf(r.additional_folders) } : {}),
  };
}

/** A stored folder list; one that cannot be read is none (it only labels a listing). */
function foldersOf(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

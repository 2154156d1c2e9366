/**
 * The chat event log (core/chat/port.ts): every event a front end was sent, by chat and sequence
 * number, so a front end that attaches late or after a restart can replay from a number.
 *
 * Retention, applied as each batch is written:
 * - a chat's delete (`chatDeleted`) drops its events and those of its subagents' chats;
 * - a view reset (`chatCleared`: the chat cleared, or redrawn when it is opened again or flagged)
 *   drops what came before it, which the redraw that follows replaces; the reset row stays and
 *   carries the last number on;
 * - at each turn end only the last KEEP_TURNS turns of the chat are kept.
 * Consecutive pieces of one text part share a row (below); reads give every piece back.
 * Events are written by the process that runs the chat; the store's chat lease keeps two
 * processes from running one chat at once.
 */
import type Database from 'better-sqlite3';
import { KEEP_TURNS, type ChatEventLog, type LoggedEvent, type PortEvent } from '../core/chat/port.js';

/** The table and its index: created when missing (a database from before the log gets it on open). */
export const CHAT_EVENTS_SCHEMA = `
CREATE TABLE IF NOT EXISTS chat_events (
  chat_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  -- A run of text pieces is one row: the numbers seq..last_seq (one row per event otherwise: last_seq = seq).
  last_seq INTEGER NOT NULL,
  kind TEXT NOT NULL,
  parent_chat_id TEXT,
  body TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (chat_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS chat_events_parent ON chat_events(parent_chat_id) WHERE parent_chat_id IS NOT NULL;
`;

interface Row {
  chat_id: string;
  seq: number;
  last_seq: number;
  parent_chat_id: string | null;
  body: string;
}

/**
 * Consecutive pieces of one text part (`assistantText`, `reasoningDelta` of one id) are written as
 * one row, `{ e, parts }`: a streamed answer is thousands of events, and a row each made the write
 * cost more than the relay itself (bench/relay.ts). Read back, each piece is its own event again,
 * with its own number.
 */
type TextEvent = Extract<PortEvent, { type: 'assistantText' | 'reasoningDelta' }>;
interface Run {
  key: string;
  first: LoggedEvent;
  last: number;
  parts: string[];
}

function runKey(e: PortEvent): string | undefined {
  return e.type === 'assistantText' || e.type === 'reasoningDelta' ? `${e.type}\u0000${e.id ?? ''}` : undefined;
}

export class ChatEventTable implements ChatEventLog {
  private readonly insert: Database.Statement;
  private readonly dropBefore: Database.Statement;
  private readonly dropTree: Database.Statement;
  private readonly turnEndBefore: Database.Statement;
  private readonly selectAfter: Database.Statement;
  private readonly selectLast: Database.Statement;
  private readonly selectFirst: Database.Statement;
  private readonly writeBatch: (batch: readonly LoggedEvent[]) => void;

  constructor(private readonly db: Database.Database) {
    db.exec(CHAT_EVENTS_SCHEMA);
    this.insert = db.prepare('INSERT OR REPLACE INTO chat_events (chat_id, seq, last_seq, kind, parent_chat_id, body, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.dropBefore = db.prepare('DELETE FROM chat_events WHERE chat_id = ? AND last_seq < ?');
    this.dropTree = db.prepare(`
      WITH RECURSIVE tree(id) AS (
        SELECT ? UNION SELECT DISTINCT e.chat_id FROM chat_events e JOIN tree ON e.parent_chat_id = tree.id
      )
      DELETE FROM chat_events WHERE chat_id IN (SELECT id FROM tree)`);
    // The turn end KEEP_TURNS turns back: everything up to it goes.
    this.turnEndBefore = db.prepare("SELECT seq FROM chat_events WHERE chat_id = ? AND kind = 'turnEnded' ORDER BY seq DESC LIMIT 1 OFFSET ?");
    this.selectAfter = db.prepare('SELECT chat_id, seq, last_seq, parent_chat_id, body FROM chat_events WHERE chat_id = ? AND last_seq > ? ORDER BY seq');
    this.selectLast = db.prepare('SELECT max(last_seq) AS n FROM chat_events WHERE chat_id = ?').pluck();
    this.selectFirst = db.prepare('SELECT min(seq) AS n FROM chat_events WHERE chat_id = ?').pluck();
    this.writeBatch = db.transaction((batch: readonly LoggedEvent[]) => {
      const now = Date.now();
      const ended = new Set<string>();
      const runs = new Map<string, Run>();
      const close = (chatId: string) => {
        const run = runs.get(chatId);
        if (!run) return;
        runs.delete(chatId);
        const { first } = run;
        const body = run.parts.length === 1 ? JSON.stringify(first.event) : JSON.stringify({ e: { ...first.event, text: undefined }, parts: run.parts });
        this.insert.run(chatId, first.seq, run.last, first.event.type, first.parentChatId ?? null, body, now);
      };
      for (const r of batch) {
        const kind = r.event.type;
        const key = runKey(r.event);
        const open = runs.get(r.chatId);
        if (open && key === open.key && r.seq === open.last + 1 && r.parentChatId === open.first.parentChatId) {
          open.parts.push((r.event as TextEvent).text);
          open.last = r.seq;
          continue;
        }
        close(r.chatId);
        if (key !== undefined) {
          runs.set(r.chatId, { key, first: r, last: r.seq, parts: [(r.event as TextEvent).text] });
          continue;
        }
        if (kind === 'chatDeleted') {
          // Its subagents' runs too, before they go.
          for (const id of [...runs.keys()]) close(id);
          this.dropTree.run(r.chatId);
          ended.delete(r.chatId);
          continue;
        }
        this.insert.run(r.chatId, r.seq, r.seq, kind, r.parentChatId ?? null, JSON.stringify(r.event), now);
        if (kind === 'chatCleared') this.dropBefore.run(r.chatId, r.seq);
        else if (kind === 'turnEnded') ended.add(r.chatId);
      }
      for (const chatId of [...runs.keys()]) close(chatId);
      for (const chatId of ended) {
        const cut = this.turnEndBefore.get(chatId, KEEP_TURNS) as { seq: number } | undefined;
        if (cut) this.dropBefore.run(chatId, cut.seq + 1);
      }
    });
  }

  write(batch: readonly LoggedEvent[]): void {
    if (!batch.length || !this.db.open) return;
    this.writeBatch(batch);
  }

  after(chatId: string, afterSeq: number): LoggedEvent[] {
    if (!this.db.open) return [];
    const out: LoggedEvent[] = [];
    for (const r of this.selectAfter.all(chatId, afterSeq) as Row[]) {
      const parent = r.parent_chat_id !== null ? { parentChatId: r.parent_chat_id } : {};
      if (r.last_seq === r.seq) {
        out.push({ chatId: r.chat_id, seq: r.seq, event: JSON.parse(r.body) as PortEvent, ...parent });
        continue;
      }
      const { e, parts } = JSON.parse(r.body) as { e: Omit<TextEvent, 'text'>; parts: string[] };
      parts.forEach((text, i) => {
        if (r.seq + i > afterSeq) out.push({ chatId: r.chat_id, seq: r.seq + i, event: { ...e, text } as PortEvent, ...parent });
      });
    }
    return out;
  }

  lastSeq(chatId: string): number {
    if (!this.db.open) return 0;
    return (this.selectLast.get(chatId) as number | null) ?? 0;
  }

  firstSeq(chatId: string): number {
    if (!this.db.open) return 0;
    return (this.selectFirst.get(chatId) as number | null) ?? 0;
  }
}

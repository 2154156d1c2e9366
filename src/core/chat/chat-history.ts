/**
 * Windows over a stored chat (`chat/history`) and the cut a fork keeps (`chat/fork`), as ECA's
 * server computes them (eca `src/eca/features/chat/history.clj` `window-messages`, `chat.clj`
 * `find-last-message-idx`, `commands.clj` `fork-title`). Pure: rows in, a page or an index out.
 */
import { createHash } from 'node:crypto';
import type { ChatEvent } from '../events.js';
import { countReasoning, replayEvents, replayReasonId } from './messages.js';
import type { StoredRow } from '../persistence.js';

/** The cursor value that stands for the last compaction (`/compact`'s summary), as in ECA. */
export const LAST_COMPACTION = 'lastCompaction';

export interface HistoryWindow {
  limit?: number;
  before?: string;
  after?: string;
}

export type HistoryPage =
  | {
      ok: true;
      events: ChatEvent[];
      total: number;
      returned: number;
      beforeCursor: string | null;
      afterCursor: string | null;
      compactionCursor: string | null;
    }
  | { ok: false; code: 'chat_not_found' | 'cursor_expired'; message: string };

/**
 * A cursor names a message by its commit time and a digest of its content, plus its position:
 * positions restart after `chat/clear` and move when a flag is inserted before them
 * (`chat/addFlag`), so they alone could name another message (ECA uses a checksum of the message
 * for the same reason). Opaque to clients: base64url.
 */
function encodeCursor(row: StoredRow): string {
  return Buffer.from(`${row.seq}.${row.createdAt}.${digest(row)}`, 'utf8').toString('base64url');
}

function digest(row: StoredRow): string {
  return createHash('sha256').update(JSON.stringify(row.message)).digest('base64url').slice(0, 16);
}

/**
 * The index of the row a cursor names, or undefined when that message is gone, changed, cannot be
 * told apart from another, or it is no cursor of ours (then the client refetches: never a wrong page).
 */
function resolveCursor(rows: StoredRow[], cursor: string): number | undefined {
  const m = /^(\d+)\.(\d+)\.([\w-]+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) return undefined;
  const [seq, createdAt, hash] = [Number(m[1]), Number(m[2]), m[3]];
  const matches: number[] = [];
  rows.forEach((r, i) => {
    if (r.createdAt === createdAt && digest(r) === hash) matches.push(i);
  });
  // Twins (the same message committed in the same millisecond) are told apart by position.
  if (matches.length > 1) return matches.find((i) => rows[i].seq === seq);
  return matches[0];
}

/**
 * Where the model's context starts since the last compaction: the first of the messages the last
 * summary kept verbatim (they are stored just before it), else the summary itself. ECA's
 * compact_marker sits there: after it the active context (the summary included), before it the
 * summarized-away history.
 */
function lastCompactionIndex(rows: StoredRow[]): number | undefined {
  for (let i = rows.length - 1; i >= 0; i--) {
    const m = rows[i].message;
    if (m.role === 'system' && m.kind === 'summary') return i - Math.min(m.kept ?? 0, i);
  }
  return undefined;
}

/**
 * An index (an exclusive bound); 'none' for the sentinel in a chat never compacted (ECA then
 * ignores the bound); 'expired'. As `after`, the sentinel bounds just before the compaction, so
 * its page starts with the active context's first message.
 */
function resolveBound(rows: StoredRow[], value: string, side: 'after' | 'before'): number | 'none' | 'expired' {
  if (value === LAST_COMPACTION) {
    const at = lastCompactionIndex(rows);
    return at === undefined ? 'none' : side === 'after' ? at - 1 : at;
  }
  return resolveCursor(rows, value) ?? 'expired';
}

const EXPIRED = 'Cursor no longer points to an existing message; refetch the latest page';

/**
 * The page of `rows` between `after` and `before` (both exclusive): its newest `limit` messages,
 * or its oldest when an opaque `after` is the only bound (paging forward). `limit` counts stored
 * messages, as ECA counts its messages. Cursors are computed against the whole chat and are null
 * at its ends.
 */
export function historyPage(rows: StoredRow[], w: HistoryWindow): HistoryPage {
  const n = rows.length;
  const after = w.after === undefined ? undefined : resolveBound(rows, w.after, 'after');
  const before = w.before === undefined ? undefined : resolveBound(rows, w.before, 'before');
  if (after === 'expired' || before === 'expired') return { ok: false, code: 'cursor_expired', message: EXPIRED };
  const lo = typeof after === 'number' ? after : -1;
  const hi = typeof before === 'number' ? before : n;
  const winStart = Math.max(0, Math.min(lo + 1, n));
  const winEnd = Math.max(winStart, Math.min(hi, n));
  const forward = typeof after === 'number' && w.after !== LAST_COMPACTION && before === undefined;
  const limit = w.limit !== undefined && w.limit > 0 ? w.limit : undefined;
  const [start, end] = limit === undefined ? [winStart, winEnd] : forward ? [winStart, Math.min(winEnd, winStart + limit)] : [Math.max(winStart, winEnd - limit), winEnd];
  const slice = rows.slice(start, end).map((r) => r.message);
  const reasonSeqStart = countReasoning(rows.slice(0, start).map((r) => r.message));
  const compaction = lastCompactionIndex(rows);
  return {
    ok: true,
    events: replayEvents(slice, reasonSeqStart),
    total: n,
    returned: slice.length,
    beforeCursor: start > 0 ? encodeCursor(rows[start]) : null,
    afterCursor: end < n && end > 0 ? encodeCursor(rows[end - 1]) : null,
    compactionCursor: compaction === undefined ? null : encodeCursor(rows[compaction]),
  };
}

/**
 * The index of the last message a content id names (ECA `find-last-message-idx`: a user
 * message's `contentId` or a content's own id): a user message, a flag, a tool call (its result
 * message, which comes after the call), or a reasoning part by the id the editor was given for
 * it (its stored id, or for one stored without an id the id its replay gives it).
 */
export function findContentIndex(rows: StoredRow[], contentId: string): number | undefined {
  let found: number | undefined;
  let reasonSeq = 0;
  rows.forEach((r, i) => {
    const m = r.message;
    if ((m.role === 'user' || m.role === 'flag') && m.contentId === contentId) found = i;
    else if (m.role === 'tool' && m.toolCallId === contentId) found = i;
    else if (m.role === 'assistant') {
      for (const p of m.parts) {
        if (p.type === 'toolCall' && p.id === contentId) found = i;
        if (p.type === 'reasoning') {
          // Counted for every part, as replayEvents counts them.
          const n = reasonSeq++;
          if ((p.id ?? replayReasonId(n)) === contentId) found = i;
        }
      }
    }
  });
  return found;
}

/** A fork's title, as ECA names it: "Untitled (2)", "Plan (2)" → "Plan (3)". */
export function forkTitle(title: string | undefined): string {
  const t = title ?? 'Untitled';
  const m = /^(.+?)\s*\((\d+)\)\s*$/.exec(t);
  return m ? `${m[1]} (${Number(m[2]) + 1})` : `${t} (2)`;
}

/**
 * Flags in the store and in the pure history functions: mid-chat insertion in SQLite (positions
 * renumbered under the (chat_id, seq) primary key), removal, history cursors across the
 * renumbering, and a flag's place in the LLM history (none) and the replay. The wire is tested end
 * to end in test/e2e/chat-flags.test.ts (ECA chat.clj `add-flag`, `remove-flag`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findContentIndex, historyPage } from '../../src/core/chat/chat-history.js';
import { replayEvents, toLlmMessages } from '../../src/core/chat/messages.js';
import type { StoredRow } from '../../src/core/persistence.js';
import type { StoredMessage } from '../../src/core/chat/stored-message.js';
import { SqliteStore } from '../../src/store/sqlite.js';

const user = (text: string, contentId?: string): StoredMessage => ({ role: 'user', text, ...(contentId ? { contentId } : {}) });
const answer = (text: string): StoredMessage => ({ role: 'assistant', parts: [{ type: 'text', text }] });
const flag = (text: string, contentId = `f-${text}`): StoredMessage => ({ role: 'flag', text, contentId });
const label = (m: StoredMessage): string => (m.role === 'user' || m.role === 'flag' ? `${m.role} ${m.text}` : m.role);

const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function open(): SqliteStore {
  const dir = mkdtempSync(join(tmpdir(), 'pb-flags-'));
  dirs.push(dir);
  const s = SqliteStore.open(dir);
  stores.push(s);
  return s;
}

describe('SqliteStore.insertMessageAfter / deleteMessage', () => {
  it('inserts in the middle, moving the later messages one position on, and leaves other chats alone', () => {
    const s = open();
    s.createChat({ id: 'c' });
    s.createChat({ id: 'other' });
    for (const t of ['q1', 'q2', 'q3', 'q4']) s.appendMessage('c', user(t));
    s.appendMessage('other', user('elsewhere'));
    const before = s.messageRows('c');

    expect(s.insertMessageAfter('c', 1, flag('mark'))).toBe(2);
    const after = s.messageRows('c');
    expect(after.map((r) => `${r.seq} ${label(r.message)}`)).toEqual(['1 user q1', '2 flag mark', '3 user q2', '4 user q3', '5 user q4']);
    // Moved rows keep their commit time (cursors name them by it).
    expect(after.filter((r) => r.message.role === 'user').map((r) => r.createdAt)).toEqual(before.map((r) => r.createdAt));
    expect(s.messageRows('other').map((r) => `${r.seq} ${label(r.message)}`)).toEqual(['1 user elsewhere']);

    // After the last message, and the next append still goes at the end.
    expect(s.insertMessageAfter('c', 5, flag('end'))).toBe(6);
    expect(s.appendMessage('c', user('q5'))).toBe(7);
    expect(s.getChat('c')?.messageCount).toBe(7);
  });

  it('deletes one message without renumbering; a fork to a flag copies it', () => {
    const s = open();
    s.createChat({ id: 'c' });
    for (const t of ['q1', 'q2']) s.appendMessage('c', user(t));
    s.insertMessageAfter('c', 1, flag('a'));
    s.insertMessageAfter('c', 2, flag('b'));
    s.forkChat('c', { id: 'fork' }, 3);
    expect(s.messages('fork').map(label)).toEqual(['user q1', 'flag a', 'flag b']);

    s.deleteMessage('c', 2);
    expect(s.messageRows('c').map((r) => `${r.seq} ${label(r.message)}`)).toEqual(['1 user q1', '3 flag b', '4 user q2']);
    expect(s.appendMessage('c', user('q3'))).toBe(5);
    expect(s.messages('fork').map(label)).toEqual(['user q1', 'flag a', 'flag b']);
  });
});

describe('history cursors across a renumbering', () => {
  /** Rows as the store gives them: positions in order, the given commit times. */
  const rowsOf = (items: Array<[StoredMessage, number]>): StoredRow[] => items.map(([message, createdAt], i) => ({ seq: i + 1, createdAt, message }));
  const texts = (page: ReturnType<typeof historyPage>): string[] => (page.ok ? page.events.map((e) => ('text' in e ? e.text : e.type)) : [page.code]);

  it('a cursor names the same message after a flag moved it, even beside a message of the same millisecond', () => {
    // q2 and a2 committed in the same millisecond: position + time alone would mistake one for the other.
    const before = rowsOf([
      [user('q1'), 10],
      [answer('a1'), 11],
      [user('q2'), 12],
      [answer('a2'), 12],
    ]);
    const page = historyPage(before, { limit: 1 });
    expect(texts(page)).toEqual(['a2']);
    const cursor = page.ok ? page.beforeCursor! : '';
    const after = rowsOf([
      [user('q1'), 10],
      [flag('f'), 50],
      [answer('a1'), 11],
      [user('q2'), 12],
      [answer('a2'), 12],
    ]);
    expect(texts(historyPage(after, { before: cursor }))).toEqual(['q1', 'f', 'a1', 'q2']);
  });

  it('twins (same message, same millisecond) moved off their position expire rather than guess', () => {
    const twins = rowsOf([
      [user('same'), 7],
      [user('same'), 7],
      [answer('end'), 8],
    ]);
    const page = historyPage(twins, { limit: 2 });
    const cursor = page.ok ? page.beforeCursor! : '';
    // Unmoved: told apart by position.
    expect(texts(historyPage(twins, { before: cursor }))).toEqual(['same']);
    const moved = rowsOf([
      [user('same'), 7],
      [flag('f'), 9],
      [user('same'), 7],
      [answer('end'), 8],
    ]);
    expect(texts(historyPage(moved, { before: cursor }))).toEqual(['cursor_expired']);
  });

  it('a cursor in the old form (position and time only) is expired, not trusted', () => {
    const rows = rowsOf([
      [user('q1'), 10],
      [answer('a1'), 11],
    ]);
    const legacy = Buffer.from('2.11', 'utf8').toString('base64url');
    expect(texts(historyPage(rows, { before: legacy }))).toEqual(['cursor_expired']);
  });
});

describe('a flag in the chat', () => {
  const chat: StoredMessage[] = [user('q1', 'u1'), flag('mark', 'f1'), answer('a1')];

  it('is never sent to the LLM', () => {
    expect(toLlmMessages(chat)).toEqual([
      { role: 'user', content: 'q1' },
      { role: 'assistant', content: [{ type: 'text', text: 'a1' }] },
    ]);
  });

  it('replays at its place and is a content id a fork or rollback can go to', () => {
    expect(replayEvents(chat)).toEqual([
      { type: 'userMessage', text: 'q1', id: 'u1' },
      { type: 'flag', id: 'f1', text: 'mark' },
      { type: 'assistantText', text: 'a1' },
    ]);
    const rows = chat.map((message, i) => ({ seq: i + 1, createdAt: i, message }));
    expect(findContentIndex(rows, 'f1')).toBe(1);
  });
});

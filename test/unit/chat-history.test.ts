/**
 * The windows and cuts of ECA's `chat/history` and `chat/fork` over stored rows (eca
 * `src/eca/features/chat/history.clj` `window-messages`, `compaction-cursor`; `chat.clj`
 * `find-last-message-idx`; `commands.clj` `fork-title`). The wire is tested end to end in
 * test/e2e/chat-history.test.ts; these cover what needs stored shapes a fake LLM cannot easily make.
 */
import { describe, expect, it } from 'vitest';
import { findContentIndex, forkTitle, historyPage, LAST_COMPACTION } from '../../src/core/chat/chat-history.js';
import type { StoredRow } from '../../src/core/persistence.js';
import type { StoredMessage } from '../../src/core/chat/stored-message.js';

function rows(messages: StoredMessage[]): StoredRow[] {
  return messages.map((message, i) => ({ seq: i + 1, createdAt: 1_000 + i, message }));
}

const user = (text: string, contentId?: string): StoredMessage => ({ role: 'user', text, ...(contentId ? { contentId } : {}) });
const answer = (text: string): StoredMessage => ({ role: 'assistant', parts: [{ type: 'text', text }] });
const summary: StoredMessage = { role: 'system', kind: 'summary', text: 'we talked' };

function texts(page: ReturnType<typeof historyPage>): string[] {
  if (!page.ok) throw new Error(page.message);
  return page.events.map((e) => ('text' in e ? e.text : e.type));
}

describe('historyPage', () => {
  const chat = rows([user('q1'), answer('a1'), summary, user('q2'), answer('a2')]);

  it('"lastCompaction" as after is the active context, as before the summarized-away history', () => {
    // ECA chat/history.clj: after the compact_marker, so the summary is part of the active context.
    expect(texts(historyPage(chat, { after: LAST_COMPACTION }))).toEqual(['── Chat compacted ──', 'The conversation was compacted/summarized, consider this summary:\nwe talked', 'q2', 'a2']);
    expect(texts(historyPage(chat, { before: LAST_COMPACTION }))).toEqual(['q1', 'a1']);
    const page = historyPage(chat, { after: LAST_COMPACTION, limit: 1 });
    // The sentinel stays newest-anchored (it is no opaque cursor paging forward).
    expect(texts(page)).toEqual(['a2']);
    expect(page.ok && page.compactionCursor).toEqual(expect.any(String));
    // The compaction cursor is a cursor like the others: before it is the same older history.
    const cursor = page.ok ? page.compactionCursor : null;
    expect(texts(historyPage(chat, { before: cursor ?? '' }))).toEqual(['q1', 'a1']);
  });

  it('the turn an auto-compaction kept verbatim is part of the active context, not of the history before it', () => {
    const kept = rows([user('q1'), answer('a1'), user('q2'), answer('a2'), { role: 'system', kind: 'summary', text: 'we talked', kept: 2, auto: true }, user('q3')]);
    expect(texts(historyPage(kept, { after: LAST_COMPACTION }))).toEqual([
      'q2',
      'a2',
      '── Chat auto-compacted ──',
      'The conversation was compacted/summarized, consider this summary:\nwe talked',
      'q3',
    ]);
    expect(texts(historyPage(kept, { before: LAST_COMPACTION }))).toEqual(['q1', 'a1']);
    const page = historyPage(kept, {});
    expect(texts(historyPage(kept, { before: (page.ok && page.compactionCursor) || '' }))).toEqual(['q1', 'a1']);
  });

  it('a chat never compacted ignores the sentinel, as ECA does, and has no compaction cursor', () => {
    const plain = rows([user('q1'), answer('a1')]);
    const page = historyPage(plain, { before: LAST_COMPACTION });
    expect(texts(page)).toEqual(['q1', 'a1']);
    expect(page.ok && page.compactionCursor).toBeNull();
  });

  it('names reasoning in a page as the whole replay does, so pages never reuse an id', () => {
    const think = (text: string): StoredMessage => ({
      role: 'assistant',
      parts: [
        { type: 'reasoning', text },
        { type: 'text', text: `after ${text}` },
      ],
    });
    const chat2 = rows([user('q1'), think('r0'), user('q2'), think('r1')]);
    const newest = historyPage(chat2, { limit: 2 });
    if (!newest.ok) throw new Error('no page');
    expect(newest.events.filter((e) => e.type === 'reasoningStarted')).toEqual([{ type: 'reasoningStarted', id: 'replay-reason-1' }]);
  });

  it('a limit that is not positive is no limit (ECA coerce-limit)', () => {
    // The summary replays as ECA's compact marker and the summary itself (messages.ts replayEvents).
    expect(texts(historyPage(chat, { limit: 0 }))).toEqual(['q1', 'a1', '── Chat compacted ──', 'The conversation was compacted/summarized, consider this summary:\nwe talked', 'q2', 'a2']);
  });
});

describe('findContentIndex', () => {
  const chat = rows([
    user('q1', 'u1'),
    {
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'hmm' },
        { type: 'toolCall', id: 'call-1', name: 'read_file', args: {} },
      ],
    },
    { role: 'tool', toolCallId: 'call-1', name: 'read_file', server: 'patchbay', origin: 'native', args: {}, outcome: 'called', error: false, outputs: [], llmText: 'x', totalTimeMs: 1 },
    answer('done'),
  ]);

  it('finds a user message by contentId, a tool call at its result, reasoning by its replay id', () => {
    expect(findContentIndex(chat, 'u1')).toBe(0);
    expect(findContentIndex(chat, 'call-1')).toBe(2);
    expect(findContentIndex(chat, 'replay-reason-0')).toBe(1);
    expect(findContentIndex(chat, 'nope')).toBeUndefined();
  });
});

describe('forkTitle', () => {
  it('numbers forks as ECA does', () => {
    expect(forkTitle(undefined)).toBe('Untitled (2)');
    expect(forkTitle('Parser')).toBe('Parser (2)');
    expect(forkTitle('Parser (2)')).toBe('Parser (3)');
  });
});

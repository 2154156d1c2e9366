import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite.js';
import { replayEvents, toLlmMessages, type StoredMessage } from '../../src/core/chat/messages.js';
import { toEcaNotifications } from '../../src/server/eca/eca-events.js';

const home = () => mkdtempSync(join(tmpdir(), 'pb-store-'));

describe('SqliteStore', () => {
  it('keeps chats and messages across reopen, in order, with counts', () => {
    const dir = home();
    const a = SqliteStore.open(dir);
    a.createChat({ id: 'c1', model: 'p/m', agent: 'code' });
    a.appendMessage('c1', { role: 'user', text: 'hi' });
    a.appendMessage('c1', { role: 'assistant', parts: [{ type: 'text', text: 'hello' }] });
    a.updateChat('c1', { title: 'Greeting', usage: { inputTokens: 3, outputTokens: 2, cost: 0.1 } });
    a.close();
    const b = SqliteStore.open(dir);
    expect(b.db.pragma('journal_mode', { simple: true })).toBe('wal');
    const chat = b.getChat('c1')!;
    expect(chat).toMatchObject({ title: 'Greeting', model: 'p/m', messageCount: 2, usage: { inputTokens: 3, outputTokens: 2, cost: 0.1 } });
    expect(b.messages('c1').map((m) => m.role)).toEqual(['user', 'assistant']);
    b.deleteChat('c1');
    expect(b.getChat('c1')).toBeUndefined();
    expect(b.messages('c1')).toEqual([]);
    b.close();
  });

  it("marks chats of a dead (older) server as interrupted but leaves a live server's running chats alone", async () => {
    const dir = home();
    const s = SqliteStore.open(dir);
    s.createChat({ id: 'mine' });
    s.createChat({ id: 'theirs' });
    s.updateChat('mine', { status: 'running' });
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)']);
    s.updateChat('theirs', { status: 'running' });
    // Rows as an older patchbay wrote them: a pid and no instance lease (store/instances.ts).
    s.db.prepare('UPDATE chats SET owner_pid = ?, owner_instance = NULL WHERE id = ?').run(other.pid, 'theirs');
    s.db.prepare('UPDATE chats SET owner_pid = ?, owner_instance = NULL WHERE id = ?').run(999_999_999, 'mine');
    expect(s.recoverInterrupted()).toEqual(['mine']);
    expect(s.getChat('mine')!.status).toBe('idle');
    expect(s.messages('mine').at(-1)).toMatchObject({ role: 'system', kind: 'interrupted' });
    expect(s.getChat('theirs')!.status).toBe('running');
    other.kill();
    s.close();
  });
});

describe('messages', () => {
  const history: StoredMessage[] = [
    { role: 'user', text: 'old' },
    { role: 'system', kind: 'summary', text: 'we talked' },
    { role: 'user', text: 'q', contextText: '<file path="a">x</file>' },
    {
      role: 'assistant',
      parts: [
        { type: 'reasoning', text: 'think', signature: 's' },
        { type: 'toolCall', id: 't1', name: 'patchbay__read_file', args: { path: 'a' } },
        { type: 'toolCall', id: 't2', name: 'patchbay__grep', args: {} },
      ],
    },
    {
      role: 'tool',
      toolCallId: 't1',
      name: 'read_file',
      server: 'patchbay',
      origin: 'native',
      args: { path: 'a' },
      outcome: 'called',
      error: false,
      outputs: [{ type: 'text', text: 'x' }],
      llmText: 'x',
      totalTimeMs: 1,
    },
  ];

  it('starts LLM history at the last summary and drops tool calls that never got a result', () => {
    const llm = toLlmMessages(history);
    expect(llm[0]).toEqual({ role: 'user', content: 'Summary of the conversation so far:\nwe talked' });
    expect(llm[1]).toEqual({ role: 'user', content: 'q\n\n<file path="a">x</file>' });
    const assistant = llm[2];
    expect(assistant.role === 'assistant' && assistant.content.map((p) => p.type)).toEqual(['reasoning', 'toolCall']);
    expect(llm[3]).toMatchObject({ role: 'tool', toolCallId: 't1', name: 'patchbay__read_file', content: 'x' });
  });

  it('replays the whole chat for the editor, without the hidden context text', () => {
    // store → core events → ECA contents, as `chat/open` does
    const replay = replayEvents(history).flatMap((e) => toEcaNotifications('c', e).flatMap((n) => (n.method === 'chat/contentReceived' ? [{ role: n.params.role, content: n.params.content }] : [])));
    expect(replay[0]).toEqual({ role: 'user', content: { type: 'text', text: 'old' } });
    expect(replay.find((r) => r.content.type === 'text' && r.content.text === 'q')).toBeDefined();
    // The summary: ECA's compact marker (system), then the summary as a user message.
    expect(replay.slice(1, 3)).toEqual([
      { role: 'system', content: { type: 'text', text: '── Chat compacted ──' } },
      { role: 'user', content: { type: 'text', text: 'The conversation was compacted/summarized, consider this summary:\nwe talked' } },
    ]);
    expect(replay.map((r) => r.content.type)).toEqual([
      'text',
      'text',
      'text',
      'text',
      'reasonStarted',
      'reasonText',
      'reasonFinished',
      'toolCallPrepare',
      'toolCallRun',
      'toolCallRunning',
      'toolCalled',
    ]);
  });
});

/**
 * The front-end port (src/core/chat/port.ts, src/runtime/front-end-port.ts) over a real SQLite log
 * (src/store/chat-events.ts): numbers per chat, the log, replay then live with no gap and no
 * duplicate (also after the store is reopened), detach, pending approvals and questions, and
 * the first answer winning.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatPort, KEEP_TURNS, NO_CAPABILITIES, type ApprovalResponder, type FrontEndCapabilities, type PortFrontEnd, type PortNotice, type SeqEvent } from '../../src/core/chat/port.js';
import { ChatEventTable } from '../../src/store/chat-events.js';
import { FrontEndPort, legacyFrontEnd } from '../../src/runtime/front-end-port.js';
import type { ChatEvent } from '../../src/core/events.js';
import type { AskAnswer, AskUser } from '../../src/shapes/ask.js';

const dirs: string[] = [];
const dbs: Database.Database[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function dbFile(): string {
  const d = mkdtempSync(join(tmpdir(), 'pb-port-'));
  dirs.push(d);
  return join(d, 'events.db');
}

function openDb(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  dbs.push(db);
  return db;
}

function portOn(file: string): { port: ChatPort; db: Database.Database; table: ChatEventTable } {
  const db = openDb(file);
  const table = new ChatEventTable(db);
  return { port: new ChatPort({ log: table }), db, table };
}

/** A front end that records what it gets. */
function recorder(name: string, caps: Partial<FrontEndCapabilities> = {}, ask?: AskUser) {
  const events: SeqEvent[] = [];
  const notices: PortNotice[] = [];
  const fe: PortFrontEnd = {
    name,
    capabilities: { ...NO_CAPABILITIES, ...caps },
    chatEvent: (e) => void events.push(e),
    notice: (n) => void notices.push(n),
    ...(ask ? { ask } : {}),
  };
  return { fe, events, notices, seqs: (chatId: string) => events.filter((e) => e.chatId === chatId).map((e) => e.seq) };
}

const text = (t: string): ChatEvent => ({ type: 'assistantText', text: t });
const ended: ChatEvent = { type: 'turnEnded', stopReason: 'end_turn' };
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const tick = () => new Promise<void>((r) => setImmediate(r));

describe('front-end port', () => {
  it('numbers each chat on its own, 1, 2, 3…, and logs every event with its number', () => {
    const { port, db, table } = portOn(dbFile());
    const r = recorder('a');
    port.attach(r.fe);
    const sink = port.chatEvents();
    for (let i = 0; i < 3; i++) {
      sink.event('c1', text(`one ${i}`));
      sink.event('c2', text(`two ${i}`));
    }
    sink.event('c2', ended);
    expect(r.seqs('c1')).toEqual([1, 2, 3]);
    expect(r.seqs('c2')).toEqual([1, 2, 3, 4]);
    // turnEnded writes the batch at once (c1's too), read back here from the table itself.
    expect(db.prepare('SELECT max(last_seq) FROM chat_events GROUP BY chat_id ORDER BY chat_id').pluck().all()).toEqual([3, 4]);
    expect(table.after('c1', 0)).toEqual([
      { chatId: 'c1', seq: 1, event: text('one 0') },
      { chatId: 'c1', seq: 2, event: text('one 1') },
      { chatId: 'c1', seq: 3, event: text('one 2') },
    ]);
    expect(table.after('c2', 3)).toEqual([{ chatId: 'c2', seq: 4, event: ended }]);
  });

  it('writes off the hot path: queued events reach the store within the flush interval, in one batch', async () => {
    const { port, db } = portOn(dbFile());
    const sink = port.chatEvents();
    sink.event('c', text('a'));
    sink.event('c', { type: 'progress', text: 'b' });
    expect(db.prepare('SELECT count(*) FROM chat_events').pluck().get()).toBe(0);
    await new Promise<void>((resolve) => {
      const poll = () => (db.prepare('SELECT count(*) FROM chat_events').pluck().get() === 2 ? resolve() : setTimeout(poll, 10));
      poll();
    });
  });

  it('replays after N, then follows live with no gap and no duplicate while events keep coming', async () => {
    const { port } = portOn(dbFile());
    const sink = port.chatEvents();
    const total = 400;
    let sent = 0;
    const late: Array<ReturnType<typeof recorder>> = [];
    const afters: number[] = [];
    // A producer that keeps emitting across many turns of the event loop (some events still queued, some written).
    const producing = (async () => {
      while (sent < total) {
        for (let k = 0; k < 7 && sent < total; k++) sink.event('c', ++sent % 50 === 0 ? ended : text(`t${sent}`));
        await tick();
        // Attach late front ends at different points, each from a different number.
        if (sent === 7 * 10 || sent === 7 * 30 || sent === 7 * 50) {
          const r = recorder(`late${late.length}`);
          const after = Math.floor(sent / 3);
          afters.push(after);
          const a = port.attach(r.fe, { chatId: 'c', afterSeq: after });
          expect(a.replay).toMatchObject({ replayed: sent - after, lastSeq: sent, gap: false });
          late.push(r);
        }
      }
    })();
    await producing;
    expect(late).toHaveLength(3);
    late.forEach((r, i) => {
      expect(r.seqs('c')).toEqual(range(afters[i]! + 1, total));
      // The replayed ones are marked; the live ones are not.
      expect(r.events.filter((e) => e.replay).map((e) => e.seq)).toEqual(range(afters[i]! + 1, r.events.find((e) => !e.replay)!.seq - 1));
      expect(r.events.find((e) => e.seq === 50)?.event.type ?? 'turnEnded').toBe('turnEnded');
    });
  });

  it('a streamed answer is one row per run of pieces, and replays piece by piece with each its own number, from inside the run too', () => {
    const { port, db, table } = portOn(dbFile());
    const sink = port.chatEvents();
    for (let i = 1; i <= 500; i++) {
      sink.event('c', { type: 'assistantText', text: `p${i} `, id: 'part1' });
      // Another chat's events in between do not break the run.
      if (i % 100 === 0) sink.event('other', text(`o${i}`));
    }
    sink.event('c', { type: 'reasoningDelta', id: 'r1', text: 'hmm' });
    sink.event('c', { type: 'assistantText', text: 'next part', id: 'part2' });
    sink.event('c', ended);
    const rows = db.prepare("SELECT seq, last_seq, kind FROM chat_events WHERE chat_id = 'c' ORDER BY seq").all();
    expect(rows).toEqual([
      { seq: 1, last_seq: 500, kind: 'assistantText' },
      { seq: 501, last_seq: 501, kind: 'reasoningDelta' },
      { seq: 502, last_seq: 502, kind: 'assistantText' },
      { seq: 503, last_seq: 503, kind: 'turnEnded' },
    ]);
    const replay = table.after('c', 297);
    expect(replay.map((r) => r.seq)).toEqual(range(298, 503));
    expect(replay[0]).toEqual({ chatId: 'c', seq: 298, event: { type: 'assistantText', text: 'p298 ', id: 'part1' } });
    expect(replay.at(-3)?.event).toEqual({ type: 'reasoningDelta', id: 'r1', text: 'hmm' });
    expect(table.lastSeq('c')).toBe(503);
    expect(table.after('other', 0).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('a replay sees events not yet written to the store', () => {
    const { port, db } = portOn(dbFile());
    const sink = port.chatEvents();
    sink.event('c', text('a'));
    sink.event('c', text('b'));
    expect(db.prepare('SELECT count(*) FROM chat_events').pluck().get()).toBe(0);
    const r = recorder('late');
    port.attach(r.fe, { chatId: 'c', afterSeq: 0 });
    expect(r.events.map((e) => [e.seq, e.event])).toEqual([
      [1, text('a')],
      [2, text('b')],
    ]);
  });

  it('after the store is reopened (a restart) numbers go on and a replay comes from the store', () => {
    const file = dbFile();
    const first = portOn(file);
    const sink = first.port.chatEvents();
    for (let i = 1; i <= 10; i++) sink.event('c', text(`e${i}`));
    sink.event('child', text('sub'), 'c');
    first.port.close();
    first.db.close();

    const second = portOn(file);
    const r = recorder('after-restart');
    const a = second.port.attach(r.fe, { chatId: 'c', afterSeq: 5 });
    expect(a.replay).toEqual({ replayed: 5, lastSeq: 10, gap: false });
    second.port.chatEvents().event('c', text('e11'));
    expect(r.events.map((e) => [e.seq, (e.event as { text: string }).text, e.replay ?? false])).toEqual([
      [6, 'e6', true],
      [7, 'e7', true],
      [8, 'e8', true],
      [9, 'e9', true],
      [10, 'e10', true],
      [11, 'e11', false],
    ]);
    // The subagent's chat kept its own numbers and its parent.
    expect(second.table.after('child', 0)).toEqual([{ chatId: 'child', seq: 1, event: text('sub'), parentChatId: 'c' }]);
  });

  it('a front end following one chat gets that chat and its subagents, not others; detach stops delivery', () => {
    const port = new ChatPort();
    const sink = port.chatEvents();
    const all = recorder('all');
    const one = recorder('one');
    port.attach(all.fe);
    const a = port.attach(one.fe, { chatId: 'p' });
    sink.event('p', text('parent'));
    sink.event('s', text('sub'), 'p');
    sink.event('other', text('x'));
    expect(one.events.map((e) => e.chatId)).toEqual(['p', 's']);
    expect(all.events.map((e) => e.chatId)).toEqual(['p', 's', 'other']);
    a.detach();
    sink.event('p', text('after'));
    expect(one.events).toHaveLength(2);
    expect(all.events).toHaveLength(4);
    expect(port.frontEnds().map((f) => f.name)).toEqual(['all']);
  });

  it('a log that cannot be written (a full disk, a closed store) loses those rows but never a turn end or the live events', () => {
    const { port, db } = portOn(dbFile());
    const good = recorder('good');
    port.attach(good.fe);
    const sink = port.chatEvents();
    sink.event('c', text('a'));
    db.close();
    expect(() => sink.event('c', { type: 'turnEnded', stopReason: 'end_turn' })).not.toThrow();
    sink.event('c', text('b'));
    expect(good.seqs('c')).toEqual([1, 2, 3]);
  });

  it('a throwing front end does not keep the event from the others', () => {
    const port = new ChatPort();
    const good = recorder('good');
    port.attach({
      name: 'bad',
      capabilities: NO_CAPABILITIES,
      chatEvent: () => {
        throw new Error('boom');
      },
    });
    port.attach(good.fe);
    port.chatEvents().event('c', text('a'));
    expect(good.seqs('c')).toEqual([1]);
  });

  it('retention: a view reset drops what came before it, a delete drops the chat and its subagents, old turns go', () => {
    const { port, table } = portOn(dbFile());
    const sink = port.chatEvents();
    sink.event('c', text('old'));
    sink.cleared('c');
    sink.event('c', text('new'));
    port.flush();
    expect(table.after('c', 0).map((r) => [r.seq, r.event.type])).toEqual([
      [2, 'chatCleared'],
      [3, 'assistantText'],
    ]);
    // A front end asking from before the reset is told the log starts later.
    const r = recorder('late');
    expect(port.attach(r.fe, { chatId: 'c', afterSeq: 0 }).replay).toEqual({ replayed: 2, lastSeq: 3, gap: true });

    sink.event('kid', text('sub'), 'c');
    sink.event('grandkid', text('subsub'), 'kid');
    sink.deleted('c');
    expect([table.lastSeq('c'), table.lastSeq('kid'), table.lastSeq('grandkid')]).toEqual([0, 0, 0]);

    for (let turn = 1; turn <= KEEP_TURNS + 5; turn++) {
      sink.event('t', text(`turn ${turn}`));
      sink.event('t', ended);
    }
    const kept = table.after('t', 0);
    expect(kept.filter((x) => x.event.type === 'turnEnded')).toHaveLength(KEEP_TURNS);
    expect(kept[0]).toMatchObject({ seq: 11, event: text('turn 6') });
    expect(table.lastSeq('t')).toBe(2 * (KEEP_TURNS + 5));
  });

  it('pending lists the open approvals and questions with ids; an answered one leaves the list', async () => {
    const port = new ChatPort();
    const answered: string[] = [];
    const responder: ApprovalResponder = {
      approve: (c, id) => (answered.push(`approve ${c}/${id}`), true),
      reject: (c, id) => (answered.push(`reject ${c}/${id}`), true),
    };
    const sink = port.chatEvents(responder);
    const call = { type: 'toolCall', id: 't1', name: 'write_file', server: 'patchbay', origin: 'native', arguments: { path: 'a' }, summary: 'Write a' } as const;
    sink.event('c', { ...call, state: 'announced', needsApproval: true });
    sink.event('c', { ...call, id: 't2', state: 'announced', needsApproval: false });
    const ac = new AbortController();
    const question = port.ask('c', { question: 'Which?', options: [{ label: 'x' }], allowFreeform: false, toolCallId: 'q1' }, ac.signal);
    expect(port.pending('c')).toEqual([
      { kind: 'approval', id: 't1', chatId: 'c', call: { name: 'write_file', server: 'patchbay', origin: 'native', arguments: { path: 'a' }, summary: 'Write a' }, seq: 1 },
      { kind: 'question', id: 'q1', chatId: 'c', question: { question: 'Which?', options: [{ label: 'x' }], allowFreeform: false, toolCallId: 'q1' } },
    ]);
    expect(port.pending('other')).toEqual([]);

    expect(port.answer('c', 'q1', { kind: 'question', answer: { answered: true, answer: 'x' } }, 'remote')).toBe(true);
    await expect(question).resolves.toEqual({ answered: true, answer: 'x' });
    expect(port.answer('c', 't1', { kind: 'approval', approved: true }, 'remote')).toBe(true);
    expect(answered).toEqual(['approve c/t1']);
    expect(port.pending('c')).toEqual([]);

    // A call settled by the chat itself (a stop rejects it) leaves the list too.
    sink.event('c', { ...call, id: 't3', state: 'announced', needsApproval: true });
    sink.event('c', { ...call, id: 't3', state: 'rejected', reason: 'stopped' });
    expect(port.pending('c')).toEqual([]);
  });

  it('an approval: the first answer wins, the second is refused, and every other front end is told', () => {
    const port = new FrontEndPort();
    const calls: string[] = [];
    const sink = port.chatEvents({ approve: (_c, id, s) => (calls.push(`approve ${id} ${s}`), true), reject: (_c, id) => (calls.push(`reject ${id}`), true) });
    const eca = recorder('eca', { ask: true });
    const web = recorder('web', { ask: true });
    const viewer = recorder('viewer');
    const ae = port.attach(eca.fe);
    const aw = port.attach(web.fe);
    port.attach(viewer.fe);
    sink.event('c', { type: 'toolCall', id: 't', name: 'shell_command', server: 'patchbay', origin: 'native', state: 'announced', needsApproval: true });
    expect(port.answer('c', 't', { kind: 'approval', approved: false }, aw)).toBe(true);
    expect(port.answer('c', 't', { kind: 'approval', approved: true, forSession: true }, ae)).toBe(false);
    expect(calls).toEqual(['reject t']);
    const told = { type: 'answered', kind: 'approval', chatId: 'c', id: 't', by: 'web' };
    expect(eca.notices).toEqual([told]);
    expect(viewer.notices).toEqual([told]);
    expect(web.notices).toEqual([]);
  });

  it('a question goes to every front end that can ask; the first answer wins, the others are withdrawn and told', async () => {
    const port = new ChatPort();
    const withdrawn: string[] = [];
    const asker =
      (name: string, answer?: AskAnswer): AskUser =>
      (_chatId, _q, signal) =>
        new Promise((resolve, reject) => {
          signal.addEventListener('abort', () => (withdrawn.push(name), reject(new Error('withdrawn'))), { once: true });
          if (answer) setImmediate(() => resolve(answer));
        });
    const slow = recorder('slow', { ask: true }, asker('slow'));
    const fast = recorder('fast', { ask: true }, asker('fast', { answered: true, answer: 'yes' }));
    // It has an ask function but does not declare the capability: not asked.
    const unable = recorder('unable', { ask: false }, asker('unable', { answered: true, answer: 'never' }));
    port.attach(slow.fe);
    port.attach(fast.fe);
    port.attach(unable.fe);
    const answer = await port.ask('c', { question: 'Go?', allowFreeform: true }, new AbortController().signal);
    expect(answer).toEqual({ answered: true, answer: 'yes' });
    expect(withdrawn).toEqual(['slow']);
    expect(slow.notices).toMatchObject([{ type: 'answered', kind: 'question', chatId: 'c', by: 'fast' }]);
    expect(unable.notices).toMatchObject([{ type: 'answered', kind: 'question', by: 'fast' }]);
    expect(fast.notices).toEqual([]);
    expect(port.pending()).toEqual([]);
  });

  it('a question fails when every front end that asked failed, and stops with the turn', async () => {
    const port = new ChatPort();
    const broken = port.attach(recorder('broken', { ask: true }, () => Promise.reject(new Error('editor refused'))).fe);
    await expect(port.ask('c', { question: 'Q', allowFreeform: true }, new AbortController().signal)).rejects.toThrow('editor refused');
    expect(port.pending()).toEqual([]);
    broken.detach();

    const stop = new AbortController();
    const waiting = port.ask('c', { question: 'Q2', allowFreeform: true, toolCallId: 'q2' }, stop.signal);
    // No front end can ask now: the question waits for an answer through the port (a front end without ask).
    await tick();
    expect(port.pending('c').map((p) => p.id)).toEqual(['q2']);
    stop.abort(new Error('the turn stopped'));
    await expect(waiting).rejects.toThrow('the turn stopped');
    expect(port.pending()).toEqual([]);
    expect(port.answer('c', 'q2', { kind: 'question', answer: { answered: false } })).toBe(false);
  });

  it('the old sink and callbacks, attached as one front end, get the calls they got before', () => {
    const port = new FrontEndPort();
    const calls: unknown[][] = [];
    const ws = {} as never;
    port.attach(
      legacyFrontEnd(
        {
          events: {
            event: (c, e, p) => void calls.push(['event', c, e.type, p]),
            opened: (c, t) => void calls.push(['opened', c, t]),
            cleared: (c) => void calls.push(['cleared', c]),
            deleted: (c) => void calls.push(['deleted', c]),
            showMessage: (t, m) => void calls.push(['showMessage', t, m]),
          },
          onJobsChanged: () => void calls.push(['jobs']),
          onTask: (t) => void calls.push(['task', t.id, t.state]),
        },
        () => ws,
      ),
    );
    const sink = port.chatEvents(undefined, ws);
    sink.opened('c', 'T');
    sink.event('k', text('x'), 'c');
    sink.cleared('c');
    sink.deleted('c');
    sink.showMessage('warning', 'careful');
    port.notify({ type: 'jobsChanged', workspace: ws });
    port.notify({ type: 'task', workspace: ws, task: { id: 'models', title: 'Syncing models', state: 'started' } });
    // Another workspace's chats and notices are not its own.
    port.chatEvents(undefined, {}).event('z', text('elsewhere'));
    port.notify({ type: 'jobsChanged', workspace: {} as never });
    expect(calls).toEqual([
      ['opened', 'c', 'T'],
      ['event', 'k', 'assistantText', 'c'],
      ['cleared', 'c'],
      ['deleted', 'c'],
      ['showMessage', 'warning', 'careful'],
      ['jobs'],
      ['task', 'models', 'started'],
    ]);
  });
});

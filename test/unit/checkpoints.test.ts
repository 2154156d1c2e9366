/**
 * File checkpoints for `chat/rollback`: what the file tools record (eca `tools/filesystem.clj`
 * `:rollback-changes`: the content before, none for a created file), how the store keeps them
 * (cascade on delete, fork copy, truncation), and how `revertChanges` undoes them.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { revertChanges, rollbackChat } from '../../src/core/chat/rollback.js';
import { contentHash, MAX_CHECKPOINT_BYTES } from '../../src/core/tools/checkpoint.js';
import { editFileTool, moveFileTool, writeFileTool } from '../../src/core/tools/native/index.js';
import type { StoredCheckpoint } from '../../src/core/persistence.js';
import type { FileCheckpoint } from '../../src/shapes/tool.js';
import { SqliteStore } from '../../src/store/sqlite.js';
import Database from 'better-sqlite3';
import { LiveChat } from '../../src/core/chat/chat.js';
import { findContentIndex } from '../../src/core/chat/chat-history.js';
import type { StoredMessage } from '../../src/core/chat/stored-message.js';
import { context, removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
async function dir(): Promise<string> {
  const d = await tempDir('pb-ckpt-');
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeDir));
});

function recording(roots: string[]): { ctx: ReturnType<typeof context>; changes: FileCheckpoint[] } {
  const changes: FileCheckpoint[] = [];
  return { ctx: { ...context(roots), recordChange: (c) => changes.push(c) }, changes };
}

let nextId = 1;
/** The store's contents by hash, as `revertChanges` reads them. */
const contents = new Map<string, Buffer>();
function stored(c: FileCheckpoint, toolCallId = 't'): StoredCheckpoint {
  const { before, ...rest } = c;
  const beforeHash = before === null ? null : contentHash(before);
  if (before !== null) contents.set(contentHash(before), before);
  return { ...rest, id: nextId++, toolCallId, messageSeq: 1, beforeHash };
}
const revert = (list: StoredCheckpoint[]) => revertChanges(list, (h) => contents.get(h));

describe('file tools record checkpoints', () => {
  it('write_file: none before for a new file, the old bytes for an existing one, and the hash after', async () => {
    const root = await dir();
    const old = Buffer.from([0xff, 0x00, 0x0d, 0x0a, 0x41]);
    writeFileSync(join(root, 'old.bin'), old);
    const { ctx, changes } = recording([root]);
    await writeFileTool().call({ path: 'new.txt', content: 'n' }, ctx);
    await writeFileTool().call({ path: 'old.bin', content: 'x' }, ctx);
    expect(changes).toEqual([
      { path: join(root, 'new.txt'), before: null, afterHash: contentHash(Buffer.from('n')) },
      { path: join(root, 'old.bin'), before: old, afterHash: contentHash(Buffer.from('x')) },
    ]);
  });

  it('edit_file records the bytes before; a failed edit records nothing', async () => {
    const root = await dir();
    writeFileSync(join(root, 'a.txt'), 'one\r\ntwo');
    const { ctx, changes } = recording([root]);
    await editFileTool().call({ path: 'a.txt', original_content: 'missing', new_content: 'x' }, ctx);
    expect(changes).toEqual([]);
    await editFileTool().call({ path: 'a.txt', original_content: 'two', new_content: 'TWO' }, ctx);
    expect(changes).toEqual([{ path: join(root, 'a.txt'), before: Buffer.from('one\r\ntwo'), afterHash: contentHash(Buffer.from('one\r\nTWO')) }]);
  });

  it('move_file records the source (gone after) and the destination (new); a directory is recorded as not checkpointed', async () => {
    const root = await dir();
    writeFileSync(join(root, 'f.txt'), 'f');
    mkdirSync(join(root, 'd'));
    const { ctx, changes } = recording([root]);
    await moveFileTool().call({ source: 'f.txt', destination: 'g.txt' }, ctx);
    await moveFileTool().call({ source: 'd', destination: 'e' }, ctx);
    expect(changes.slice(0, 2)).toEqual([
      { path: join(root, 'f.txt'), before: Buffer.from('f'), afterHash: null },
      { path: join(root, 'g.txt'), before: null, afterHash: contentHash(Buffer.from('f')) },
    ]);
    expect(changes.slice(2)).toEqual([
      { path: join(root, 'd'), before: null, afterHash: null, skipped: expect.stringMatching(/directory/) },
      { path: join(root, 'e'), before: null, afterHash: null, skipped: expect.stringMatching(/directory/) },
    ]);
  });

  it('a file past the size limit is recorded without its bytes', async () => {
    const root = await dir();
    writeFileSync(join(root, 'big.txt'), Buffer.alloc(MAX_CHECKPOINT_BYTES + 1, 'a'));
    const { ctx, changes } = recording([root]);
    await editFileTool().call({ path: 'big.txt', original_content: 'aaaa', new_content: 'b', all_occurrences: false }, ctx);
    await writeFileTool().call({ path: 'big.txt', content: 'small' }, ctx);
    // The edit fails (many matches); the write is recorded as too large to keep.
    expect(changes).toEqual([{ path: join(root, 'big.txt'), before: null, afterHash: contentHash(Buffer.from('small')), skipped: expect.stringMatching(/larger than 10 MB/) }]);
  });
});

describe('revertChanges', () => {
  it('restores each path to before its first change when it holds what its last change left', async () => {
    const root = await dir();
    const p = join(root, 'a.txt');
    writeFileSync(p, 'v3');
    const r = revert([
      stored({ path: p, before: Buffer.from('v1'), afterHash: contentHash(Buffer.from('v2')) }),
      stored({ path: p, before: Buffer.from('v2'), afterHash: contentHash(Buffer.from('v3')) }),
    ]);
    expect(r.notRestored).toEqual([]);
    expect(r.undone).toHaveLength(2);
    expect(readFileSync(p, 'utf8')).toBe('v1');
  });

  it('reports, and leaves, a path changed, deleted, re-created or replaced by a symlink since; a skipped one too', async () => {
    const root = await dir();
    const edited = join(root, 'edited.txt');
    const deleted = join(root, 'deleted.txt');
    const recreated = join(root, 'recreated.txt');
    const linked = join(root, 'linked.txt');
    writeFileSync(edited, 'by hand');
    writeFileSync(recreated, 'again');
    writeFileSync(join(root, 'target.txt'), 'tool');
    symlinkSync(join(root, 'target.txt'), linked);
    const h = contentHash(Buffer.from('tool'));
    const r = revert([
      stored({ path: edited, before: null, afterHash: h }),
      stored({ path: deleted, before: Buffer.from('x'), afterHash: h }),
      stored({ path: recreated, before: Buffer.from('x'), afterHash: null }),
      stored({ path: linked, before: null, afterHash: h }),
      stored({ path: join(root, 'big'), before: null, afterHash: h, skipped: 'too big' }),
    ]);
    expect(r.undone).toEqual([]);
    expect(Object.fromEntries(r.notRestored.map((n) => [n.path.slice(root.length + 1), n.reason]))).toEqual({
      'edited.txt': expect.stringMatching(/changed after/),
      'deleted.txt': expect.stringMatching(/deleted after/),
      'recreated.txt': expect.stringMatching(/created again/),
      'linked.txt': expect.stringMatching(/no longer a regular file/),
      big: 'not checkpointed: too big',
    });
    expect(readFileSync(edited, 'utf8')).toBe('by hand');
    expect(existsSync(deleted)).toBe(false);
    expect(readFileSync(recreated, 'utf8')).toBe('again');
  });
});

describe('revertChanges reads contents lazily', () => {
  it('fetches, per path, only the content before its first change (never the later ones)', async () => {
    const root = await dir();
    const p = join(root, 'a.txt');
    writeFileSync(p, 'v4');
    const list = ['v1', 'v2', 'v3'].map((v, i) => stored({ path: p, before: Buffer.from(v), afterHash: contentHash(Buffer.from(`v${i + 2}`)) }));
    const asked: string[] = [];
    const r = revertChanges(list, (h) => (asked.push(h), contents.get(h)));
    expect(r.notRestored).toEqual([]);
    expect(asked).toEqual([contentHash(Buffer.from('v1'))]);
    expect(readFileSync(p, 'utf8')).toBe('v1');
  });
});

describe('revertChanges and symbolic links on the path', () => {
  it('leaves a file whose folder became a symlink since (it would write elsewhere); a missing folder is judged by its existing ancestor', async () => {
    const root = await dir();
    const outside = await dir();
    mkdirSync(join(root, 'sub'));
    const inSub = join(root, 'sub', 'a.txt');
    const folder = realpathSync(join(root, 'sub'));
    // The folder is swapped for a link to a place holding the same bytes: only the folder check can tell.
    rmSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(outside, 'a.txt'), 'tool');
    symlinkSync(outside, join(root, 'sub'));
    const h = contentHash(Buffer.from('tool'));
    const gone = join(root, 'gone', 'deep', 'b.txt');
    const r = revert([
      stored({ path: inSub, before: Buffer.from('old'), afterHash: h, folder }),
      stored({ path: gone, before: Buffer.from('back'), afterHash: null, folder: join(realpathSync(root), 'gone', 'deep') }),
    ]);
    expect(r.notRestored).toEqual([{ path: inSub, reason: expect.stringMatching(/symbolic link/) }]);
    expect(readFileSync(join(outside, 'a.txt'), 'utf8')).toBe('tool');
    expect(readFileSync(gone, 'utf8')).toBe('back');
  });
});

const toolMessage = (id: string): StoredMessage => ({
  role: 'tool',
  toolCallId: id,
  name: 'write_file',
  server: 'patchbay',
  origin: 'native',
  args: {},
  outcome: 'called',
  error: false,
  outputs: [],
  llmText: 'ok',
  totalTimeMs: 1,
});
const asking = (...ids: string[]): StoredMessage => ({ role: 'assistant', parts: ids.map((id) => ({ type: 'toolCall' as const, id, name: 'patchbay__write_file', args: {} })) });
const blobCount = (s: SqliteStore) => (s.db.prepare('SELECT count(*) AS n FROM checkpoint_blobs').get() as { n: number }).n;
const quiet = { event() {}, opened() {}, cleared() {}, deleted() {}, showMessage() {} };

async function store(opts?: { checkpointLimitBytes?: number }): Promise<SqliteStore> {
  const s = SqliteStore.open(await dir(), opts);
  stores.push(s);
  return s;
}
const stores: SqliteStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) if (s.db.open) s.close();
});

/** Rolls chat `id` of `s` back to before the message `contentId` names, as ChatService.rollback does. */
function rollback(s: SqliteStore, id: string, contentId: string, include = { messages: true, tools: true }) {
  const rows = s.messageRows(id);
  const chat = new LiveChat(
    id,
    rows.map((r) => r.message),
    { agent: 'code' },
  );
  return rollbackChat(chat, { store: s, events: quiet }, rows, findContentIndex(rows, contentId)!, include);
}

describe('SqliteStore checkpoints', () => {
  it('keeps them in order per call, copies the kept calls on fork, drops them on truncate, clear and delete', async () => {
    const s = await store();
    s.createChat({ id: 'c' });
    s.appendMessage('c', { role: 'user', text: 'q1' });
    const a1 = s.appendMessage('c', asking('t1'));
    s.appendMessage('c', toolMessage('t1'));
    const second = s.appendMessage('c', { role: 'user', text: 'q2' });
    const a2 = s.appendMessage('c', asking('t2'));
    s.appendMessage('c', toolMessage('t2'));
    s.addFileCheckpoint('c', { id: 't1', messageSeq: a1 }, { path: '/a', before: Buffer.from([0, 255]), afterHash: 'h1' });
    s.addFileCheckpoint('c', { id: 't2', messageSeq: a2 }, { path: '/b', before: null, afterHash: null, skipped: 'big' });
    s.addFileCheckpoint('c', { id: 't2', messageSeq: a2 }, { path: '/a', before: Buffer.from('x'), afterHash: 'h2' });
    const all = s.fileCheckpoints('c', 1);
    expect(all.map((c) => [c.toolCallId, c.messageSeq, c.path, c.beforeHash && s.checkpointContent(c.beforeHash), c.afterHash, c.skipped])).toEqual([
      ['t1', a1, '/a', Buffer.from([0, 255]), 'h1', undefined],
      ['t2', a2, '/b', null, null, 'big'],
      ['t2', a2, '/a', Buffer.from('x'), 'h2', undefined],
    ]);
    expect(s.fileCheckpoints('c', second).map((c) => c.toolCallId)).toEqual(['t2', 't2']);

    s.forkChat('c', { id: 'f' }, second);
    expect(s.fileCheckpoints('f', 1).map((c) => c.path)).toEqual(['/a']);

    s.truncateMessages('c', second);
    expect(s.messages('c').map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(s.fileCheckpoints('c', 1).map((c) => c.toolCallId)).toEqual(['t1']);

    s.dropFileCheckpoints(
      'f',
      s.fileCheckpoints('f', 1).map((c) => c.id),
    );
    expect(s.fileCheckpoints('f', 1)).toEqual([]);
    s.clearMessages('c');
    expect(s.fileCheckpoints('c', 1)).toEqual([]);
    s.addFileCheckpoint('c', { id: 't3', messageSeq: 1 }, { path: '/z', before: null, afterHash: 'h' });
    s.deleteChat('c');
    expect(s.db.prepare("SELECT count(*) AS n FROM file_checkpoints WHERE chat_id = 'c'").get()).toEqual({ n: 0 });
  });

  it('keeps each distinct content once, shared by forks, and deletes it when no checkpoint names it', async () => {
    const s = await store();
    s.createChat({ id: 'c' });
    const a = s.appendMessage('c', asking('t1', 't2', 't3'));
    for (const id of ['t1', 't2', 't3']) s.appendMessage('c', toolMessage(id));
    const big = Buffer.alloc(1024 * 1024, 'a');
    // A chain of edits back and forth: three checkpoints, two distinct contents.
    s.addFileCheckpoint('c', { id: 't1', messageSeq: a }, { path: '/p', before: big, afterHash: 'h1' });
    s.addFileCheckpoint('c', { id: 't2', messageSeq: a }, { path: '/p', before: Buffer.from('b'), afterHash: 'h2' });
    s.addFileCheckpoint('c', { id: 't3', messageSeq: a }, { path: '/p', before: Buffer.from(big), afterHash: 'h3' });
    expect(blobCount(s)).toBe(2);
    expect(s.db.prepare('SELECT sum(size) AS n FROM checkpoint_blobs').get()).toEqual({ n: big.length + 1 });

    // The fork names the same contents: nothing is copied, and they outlive the original's checkpoints.
    s.forkChat('c', { id: 'f' }, 4);
    expect(s.fileCheckpoints('f', 1)).toHaveLength(3);
    expect(blobCount(s)).toBe(2);
    s.truncateMessages('c', 1);
    expect(blobCount(s)).toBe(2);
    s.deleteChat('f');
    expect(blobCount(s)).toBe(0);
  });

  it("past the chat's limit, a new content is recorded as skipped with the reason; one already kept still is; rollback reports the path", async () => {
    const root = await dir();
    const s = await store({ checkpointLimitBytes: 10 });
    s.createChat({ id: 'c' });
    s.appendMessage('c', { role: 'user', text: 'q', contentId: 'u1' });
    const a = s.appendMessage('c', asking('t1', 't2', 't3'));
    const kept = join(root, 'kept.txt');
    const over = join(root, 'over.txt');
    writeFileSync(kept, 'after');
    writeFileSync(over, 'after');
    const after = contentHash(Buffer.from('after'));
    s.addFileCheckpoint('c', { id: 't1', messageSeq: a }, { path: kept, before: Buffer.from('123456'), afterHash: after });
    s.addFileCheckpoint('c', { id: 't2', messageSeq: a }, { path: over, before: Buffer.from('abcdef'), afterHash: after });
    s.addFileCheckpoint('c', { id: 't3', messageSeq: a }, { path: kept, before: Buffer.from('123456'), afterHash: after });
    const list = s.fileCheckpoints('c', 1);
    expect(list.map((c) => [c.path, c.beforeHash !== null, c.skipped])).toEqual([
      [kept, true, undefined],
      [over, false, expect.stringMatching(/limit \(10 bytes of file contents\)/)],
      [kept, true, undefined],
    ]);
    const r = rollback(s, 'c', 'u1');
    expect(r).toEqual({ ok: true, notRestored: [{ path: over, reason: expect.stringMatching(/^not checkpointed: .*limit/) }] });
    expect(readFileSync(kept, 'utf8')).toBe('123456');
    expect(readFileSync(over, 'utf8')).toBe('after');
  });
});

describe('SqliteStore: the first checkpoint table', () => {
  it('a database whose file_checkpoints kept contents in their rows gets the new table, empty (they were never released)', async () => {
    const home = await dir();
    const old = new Database(join(home, 'patchbay.db'));
    old.exec(`CREATE TABLE chats (id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE TABLE file_checkpoints (id INTEGER PRIMARY KEY AUTOINCREMENT, chat_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, path TEXT NOT NULL,
        before BLOB, after_hash TEXT, skipped TEXT, folder TEXT, created_at INTEGER NOT NULL);
      CREATE INDEX file_checkpoints_by_call ON file_checkpoints (chat_id, tool_call_id);
      INSERT INTO chats VALUES ('c', 1, 1);
      INSERT INTO file_checkpoints (chat_id, tool_call_id, path, before, created_at) VALUES ('c', 't1', '/a', x'00', 1);`);
    old.close();
    const s = SqliteStore.open(home);
    stores.push(s);
    const columns = (s.db.pragma('table_info(file_checkpoints)') as Array<{ name: string }>).map((c) => c.name);
    expect(columns).toContain('before_hash');
    expect(columns).not.toContain('before');
    expect(s.fileCheckpoints('c', 0)).toEqual([]);
    const asked = s.appendMessage('c', asking('t2'));
    s.addFileCheckpoint('c', { id: 't2', messageSeq: asked }, { path: '/b', before: Buffer.from('b'), afterHash: null });
    expect(s.fileCheckpoints('c', 0).map((c) => c.path)).toEqual(['/b']);
  });

  it('a fork does not copy a change of a call killed unanswered whose id a later, answered call reuses', async () => {
    const s = await store();
    s.createChat({ id: 'c' });
    const ask = (id: string) => s.appendMessage('c', asking(id));
    const killed = ask('call_0'); // its tool never answered (the process was killed)
    s.addFileCheckpoint('c', { id: 'call_0', messageSeq: killed }, { path: '/orphan', before: null, afterHash: null });
    const later = ask('call_0');
    s.addFileCheckpoint('c', { id: 'call_0', messageSeq: later }, { path: '/answered', before: null, afterHash: null });
    const answer = s.appendMessage('c', {
      role: 'tool',
      toolCallId: 'call_0',
      name: 'write_file',
      origin: 'native',
      server: 'patchbay',
      outcome: 'called',
      error: false,
      outputs: [],
      llmText: 'ok',
      totalTimeMs: 1,
    } as never);
    s.forkChat('c', { id: 'f' }, answer);
    expect(s.fileCheckpoints('f', 0).map((c) => c.path)).toEqual(['/answered']);
  });

  it('records a change only while the message that asked for the call holds it (a stopped tool finishing after a rollback records nothing)', async () => {
    const s = await store();
    s.createChat({ id: 'c' });
    const asked = s.appendMessage('c', asking('call_0'));
    s.addFileCheckpoint('c', { id: 'call_0', messageSeq: asked }, { path: '/kept', before: null, afterHash: null });
    s.addFileCheckpoint('c', { id: 'call_9', messageSeq: asked }, { path: '/not-asked-there', before: null, afterHash: null });
    expect(s.fileCheckpoints('c', 0).map((c) => c.path)).toEqual(['/kept']);
    s.truncateMessages('c', asked);
    s.addFileCheckpoint('c', { id: 'call_0', messageSeq: asked }, { path: '/late', before: null, afterHash: null });
    // The position is reused by the next step, which asks for a call with the same id.
    const next = s.appendMessage('c', asking('call_0'));
    expect(next).toBe(asked);
    expect(s.fileCheckpoints('c', 0).map((c) => c.path)).toEqual([]);
  });
});

/** A chat whose call `w1` (asked at position `a`, answered) created the file `p`. */
async function oneWrite(): Promise<{ s: SqliteStore; a: number; p: string }> {
  const root = await dir();
  const s = await store();
  s.createChat({ id: 'c' });
  s.appendMessage('c', { role: 'user', text: 'make it', contentId: 'u1' });
  const a = s.appendMessage('c', asking('w1'));
  s.appendMessage('c', toolMessage('w1'));
  const p = join(root, 'w.txt');
  writeFileSync(p, 'w');
  s.addFileCheckpoint('c', { id: 'w1', messageSeq: a }, { path: p, before: null, afterHash: contentHash(Buffer.from('w')) });
  return { s, a, p };
}

describe('rollbackChat and the store', () => {
  it('undoes a change whose call has no tool message (the process was killed mid-tool), and forgets it', async () => {
    const root = await dir();
    const s = await store();
    s.createChat({ id: 'c' });
    s.appendMessage('c', { role: 'user', text: 'make it', contentId: 'u1' });
    const a = s.appendMessage('c', asking('w1'));
    // The write and its checkpoint were committed; the tool message never was.
    const p = join(root, 'made.txt');
    writeFileSync(p, 'made');
    s.addFileCheckpoint('c', { id: 'w1', messageSeq: a }, { path: p, before: null, afterHash: contentHash(Buffer.from('made')) });
    s.appendMessage('c', { role: 'system', kind: 'interrupted', text: 'interrupted' });

    expect(rollback(s, 'c', 'u1')).toEqual({ ok: true, notRestored: [] });
    expect(existsSync(p)).toBe(false);
    expect(s.messages('c')).toEqual([]);
    expect(s.db.prepare('SELECT count(*) AS n FROM file_checkpoints').get()).toEqual({ n: 0 });
  });

  it('a tools-only rollback also undoes a call with no tool message', async () => {
    const root = await dir();
    const s = await store();
    s.createChat({ id: 'c' });
    s.appendMessage('c', { role: 'user', text: 'edit it', contentId: 'u1' });
    const a = s.appendMessage('c', asking('e1'));
    const p = join(root, 'e.txt');
    writeFileSync(p, 'new');
    s.addFileCheckpoint('c', { id: 'e1', messageSeq: a }, { path: p, before: Buffer.from('old'), afterHash: contentHash(Buffer.from('new')) });
    expect(rollback(s, 'c', 'u1', { messages: false, tools: true })).toEqual({ ok: true, notRestored: [] });
    expect(readFileSync(p, 'utf8')).toBe('old');
    expect(s.fileCheckpoints('c', 1)).toEqual([]);
    expect(s.messages('c')).toHaveLength(2);
  });

  it('an LLM that reuses a call id (call_0) in two steps: rolling back the second keeps the first change', async () => {
    const root = await dir();
    const s = await store();
    s.createChat({ id: 'c' });
    const one = join(root, 'one.txt');
    const two = join(root, 'two.txt');
    writeFileSync(one, '1');
    writeFileSync(two, '2');
    s.appendMessage('c', { role: 'user', text: 'first', contentId: 'u1' });
    const a1 = s.appendMessage('c', asking('call_0'));
    s.addFileCheckpoint('c', { id: 'call_0', messageSeq: a1 }, { path: one, before: null, afterHash: contentHash(Buffer.from('1')) });
    s.appendMessage('c', toolMessage('call_0'));
    s.appendMessage('c', { role: 'user', text: 'second', contentId: 'u2' });
    const a2 = s.appendMessage('c', asking('call_0'));
    s.addFileCheckpoint('c', { id: 'call_0', messageSeq: a2 }, { path: two, before: null, afterHash: contentHash(Buffer.from('2')) });
    s.appendMessage('c', toolMessage('call_0'));

    expect(rollback(s, 'c', 'u2')).toEqual({ ok: true, notRestored: [] });
    expect(existsSync(two)).toBe(false);
    expect(readFileSync(one, 'utf8')).toBe('1');
    expect(s.fileCheckpoints('c', 1).map((c) => c.path)).toEqual([one]);
  });

  it('a flag inserted before a call moves its checkpoints with it: a rollback to the flag still undoes the call', async () => {
    const { s, a, p } = await oneWrite();
    s.insertMessageAfter('c', 1, { role: 'flag', text: 'mark', contentId: 'flag' });
    expect(s.fileCheckpoints('c', 1).map((c) => c.messageSeq)).toEqual([a + 1]);
    expect(rollback(s, 'c', 'flag')).toEqual({ ok: true, notRestored: [] });
    expect(existsSync(p)).toBe(false);
  });

  it("a rollback to a call's result (its asking message kept) undoes that call", async () => {
    const { s, a, p } = await oneWrite();
    expect(rollback(s, 'c', 'w1')).toEqual({ ok: true, notRestored: [] });
    expect(existsSync(p)).toBe(false);
    expect(s.messages('c').map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(s.fileCheckpoints('c', 1)).toEqual([]);
  });

  it('when the messages cannot be removed (the database is locked), the files stay restored and the chat and its checkpoints are kept', async () => {
    const root = await dir();
    const s = await store();
    s.createChat({ id: 'c' });
    s.appendMessage('c', { role: 'user', text: 'make it', contentId: 'u1' });
    const a = s.appendMessage('c', asking('w1'));
    s.appendMessage('c', toolMessage('w1'));
    const p = join(root, 'w.txt');
    writeFileSync(p, 'new');
    s.addFileCheckpoint('c', { id: 'w1', messageSeq: a }, { path: p, before: Buffer.from('old'), afterHash: contentHash(Buffer.from('new')) });
    // Another process holds the write lock (SQLITE_BUSY), and this store does not wait for it.
    const other = new Database(s.path);
    try {
      other.exec('BEGIN IMMEDIATE');
      s.db.pragma('busy_timeout = 0');
      const r = rollback(s, 'c', 'u1');
      expect(r).toEqual({ ok: false, message: expect.stringMatching(/the files were restored, but the chat could not be changed \(.*locked.*\); its messages and checkpoints are kept/) });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(readFileSync(p, 'utf8')).toBe('old');
    expect(s.messages('c')).toHaveLength(3);
    expect(s.fileCheckpoints('c', 1)).toHaveLength(1);
  });
});

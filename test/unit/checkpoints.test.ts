/**
 * File checkpoints for `chat/rollback`: what the file tools record (eca `tools/filesystem.clj`
 * `:rollback-changes`: the content before, none for a created file), how the store keeps them
 * (cascade on delete, fork copy, truncation), and how `revertChanges` undoes them.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { revertChanges } from '../../src/core/rollback.js';
import { contentHash, MAX_CHECKPOINT_BYTES } from '../../src/core/tools/checkpoint.js';
import { editFileTool, moveFileTool, writeFileTool } from '../../src/core/tools/native/index.js';
import type { StoredCheckpoint } from '../../src/core/persistence.js';
import type { FileCheckpoint } from '../../src/shapes/tool.js';
import { SqliteStore } from '../../src/store/sqlite.js';
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
function stored(c: FileCheckpoint, toolCallId = 't'): StoredCheckpoint {
  return { ...c, id: nextId++, toolCallId };
}

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
    const r = revertChanges([
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
    const r = revertChanges([
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
    const r = revertChanges([
      stored({ path: inSub, before: Buffer.from('old'), afterHash: h, folder }),
      stored({ path: gone, before: Buffer.from('back'), afterHash: null, folder: join(realpathSync(root), 'gone', 'deep') }),
    ]);
    expect(r.notRestored).toEqual([{ path: inSub, reason: expect.stringMatching(/symbolic link/) }]);
    expect(readFileSync(join(outside, 'a.txt'), 'utf8')).toBe('tool');
    expect(readFileSync(gone, 'utf8')).toBe('back');
  });
});

describe('SqliteStore checkpoints', () => {
  it('keeps them in order per call, copies the kept calls on fork, drops them on truncate, clear and delete', async () => {
    const s = SqliteStore.open(await dir());
    s.createChat({ id: 'c' });
    s.appendMessage('c', { role: 'user', text: 'q1' });
    const tool = (id: string) => ({
      role: 'tool' as const,
      toolCallId: id,
      name: 'write_file',
      server: 'patchbay',
      origin: 'native',
      args: {},
      outcome: 'called' as const,
      error: false,
      outputs: [],
      llmText: 'ok',
      totalTimeMs: 1,
    });
    s.appendMessage('c', tool('t1'));
    const second = s.appendMessage('c', { role: 'user', text: 'q2' });
    s.appendMessage('c', tool('t2'));
    s.addFileCheckpoint('c', 't1', { path: '/a', before: Buffer.from([0, 255]), afterHash: 'h1' });
    s.addFileCheckpoint('c', 't2', { path: '/b', before: null, afterHash: null, skipped: 'big' });
    s.addFileCheckpoint('c', 't2', { path: '/a', before: Buffer.from('x'), afterHash: 'h2' });
    expect(s.fileCheckpoints('c', ['t1', 't2']).map((c) => [c.toolCallId, c.path, c.before, c.afterHash, c.skipped])).toEqual([
      ['t1', '/a', Buffer.from([0, 255]), 'h1', undefined],
      ['t2', '/b', null, null, 'big'],
      ['t2', '/a', Buffer.from('x'), 'h2', undefined],
    ]);

    s.forkChat('c', { id: 'f' }, second);
    expect(s.fileCheckpoints('f', ['t1', 't2']).map((c) => c.path)).toEqual(['/a']);

    s.truncateMessages('c', second);
    expect(s.messages('c').map((m) => m.role)).toEqual(['user', 'tool']);
    expect(s.fileCheckpoints('c', ['t1', 't2']).map((c) => c.toolCallId)).toEqual(['t1']);

    s.dropFileCheckpoints(s.fileCheckpoints('f', ['t1']).map((c) => c.id));
    expect(s.fileCheckpoints('f', ['t1'])).toEqual([]);
    s.clearMessages('c');
    expect(s.fileCheckpoints('c', ['t1'])).toEqual([]);
    s.addFileCheckpoint('c', 't3', { path: '/z', before: null, afterHash: 'h' });
    s.deleteChat('c');
    expect(s.db.prepare("SELECT count(*) AS n FROM file_checkpoints WHERE chat_id = 'c'").get()).toEqual({ n: 0 });
    s.close();
  });
});

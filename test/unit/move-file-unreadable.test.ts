/**
 * move_file on a file it cannot read: the move needs no read access, only its checkpoint does
 * (eca `tools/filesystem.clj` `move-file` reads nothing either), so the file is moved and the
 * checkpoint records why it kept no copy.
 */
import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { moveFileTool } from '../../src/core/tools/native/index.js';
import type { FileCheckpoint } from '../../src/shapes/tool.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

// As root, mode 000 does not stop a read: the read is made to fail as it would for anyone else.
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const asUser = process.getuid?.() === 0;
  const readFile = (async (path: Parameters<typeof fs.readFile>[0], ...rest: unknown[]) => {
    if (asUser && typeof path === 'string' && ((await fs.stat(path)).mode & 0o444) === 0) {
      throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' });
    }
    return (fs.readFile as (...a: unknown[]) => Promise<unknown>)(path, ...rest);
  }) as typeof fs.readFile;
  return { ...fs, default: { ...fs, readFile }, readFile };
});

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeDir));
});

describe('move_file and an unreadable file', () => {
  it('moves it, and records both paths as not checkpointed with the reason', async () => {
    const root = await tempDir('pb-move-');
    dirs.push(root);
    const from = join(root, 'secret.txt');
    writeFileSync(from, 'hidden');
    chmodSync(from, 0o000);
    const changes: FileCheckpoint[] = [];
    const r = await moveFileTool().call({ source: 'secret.txt', destination: 'moved.txt' }, { ...context([root]), recordChange: (c) => changes.push(c) });
    expect(text(r)).toBe(`Moved ${from} to ${join(root, 'moved.txt')}.`);
    expect(r.error).toBeFalsy();
    expect(existsSync(from)).toBe(false);
    expect(statSync(join(root, 'moved.txt')).mode & 0o777).toBe(0);
    const reason = expect.stringMatching(/could not be read.*(EACCES|permission)/i);
    expect(changes).toEqual([
      { path: from, before: null, afterHash: null, skipped: reason },
      { path: join(root, 'moved.txt'), before: null, afterHash: null, skipped: reason },
    ]);
  });
});

import { execFileSync } from 'node:child_process';
import { constants, existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openContained, OutsideWorkspaceError, pinParent, readContainedText, replaceContent, writeChecked } from '../../src/util/contained.js';
import { removeDir, tempDir } from './tools-helpers.js';

const { O_CREAT, O_RDONLY, O_RDWR, O_TRUNC } = constants;

describe.each(['fd', 'path'] as const)('openContained, checked via %s', (via) => {
  let ws: string;
  let outside: string;
  beforeEach(async () => {
    ws = await tempDir();
    outside = await tempDir();
    await mkdir(join(ws, 'dir'));
    await writeFile(join(ws, 'dir', 'in.txt'), 'inside');
    await writeFile(join(outside, 'secret.txt'), 'secret');
  });
  afterEach(async () => {
    await removeDir(ws);
    await removeDir(outside);
  });

  it.skipIf(process.platform === 'win32')('refuses to read a FIFO instead of hanging on it', async () => {
    execFileSync('mkfifo', [join(ws, 'dir', 'pipe')]);
    await expect(readContainedText(join(ws, 'dir', 'pipe'), { roots: [ws], via })).rejects.toThrow(/not a regular file/);
    expect(await readContainedText(join(ws, 'dir', 'in.txt'), { roots: [ws], via })).toBe('inside');
  });

  it('counts a folder whose name starts with two dots as inside, and a sibling folder sharing the prefix as outside', async () => {
    await mkdir(join(ws, '..notes'));
    await writeFile(join(ws, '..notes', 'a.md'), 'notes');
    expect(await readContainedText(join(ws, '..notes', 'a.md'), { roots: [ws], via })).toBe('notes');
    await mkdir(`${ws}..x`);
    try {
      await writeFile(join(`${ws}..x`, 'b.md'), 'beside');
      await expect(readContainedText(join(`${ws}..x`, 'b.md'), { roots: [ws], via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    } finally {
      await removeDir(`${ws}..x`);
    }
  });

  it('opens a file inside the workspace and names its real path', async () => {
    const f = await openContained(join(ws, 'dir', 'in.txt'), O_RDONLY, { roots: [ws], via });
    try {
      expect(f.real).toBe(join(ws, 'dir', 'in.txt'));
      expect(await f.fh.readFile('utf8')).toBe('inside');
      await f.recheck();
    } finally {
      await f.fh.close();
    }
  });

  it('refuses a parent that is a symlink to outside, and creates nothing there', async () => {
    await symlink(outside, join(ws, 'link'));
    await expect(openContained(join(ws, 'link', 'secret.txt'), O_RDONLY, { roots: [ws], via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    await expect(openContained(join(ws, 'link', 'new.txt'), O_RDWR | O_CREAT, { roots: [ws], via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    await expect(openContained(join(ws, 'link', 'a', 'b', 'new.txt'), O_RDWR | O_CREAT, { roots: [ws], mkdirs: true, via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    expect(readdirSync(outside)).toEqual(['secret.txt']);
  });

  it('refuses a last component that is a symlink to outside (existing or dangling), and follows one that stays inside', async () => {
    await symlink(join(outside, 'secret.txt'), join(ws, 'file-link'));
    await symlink(join(outside, 'not-yet.txt'), join(ws, 'dangling'));
    await symlink(join(ws, 'dir', 'in.txt'), join(ws, 'inside-link'));
    await expect(readContainedText(join(ws, 'file-link'), { roots: [ws], via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    await expect(openContained(join(ws, 'dangling'), O_RDWR | O_CREAT, { roots: [ws], via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
    expect(await readContainedText(join(ws, 'inside-link'), { roots: [ws], via })).toBe('inside');
  });

  it('opens outside paths when the call is not confined (the user approved them)', async () => {
    expect(await readContainedText(join(outside, 'secret.txt'), { roots: [ws], confined: false, via })).toBe('secret');
    await expect(readContainedText(join(outside, 'secret.txt'), { roots: [ws], via })).rejects.toBeInstanceOf(OutsideWorkspaceError);
  });

  it('makes missing parents one level at a time inside the workspace', async () => {
    const f = await openContained(join(ws, 'a', 'b', 'c.txt'), O_RDWR | O_CREAT, { roots: [ws], mkdirs: true, via });
    try {
      await replaceContent(f.fh, 'made');
    } finally {
      await f.fh.close();
    }
    expect(await readFile(join(ws, 'a', 'b', 'c.txt'), 'utf8')).toBe('made');
  });

  // The portable method looks entries up by path again: this is its documented residual window.
  it.skipIf(via === 'path')('looks the entry up in the directory it holds, even after that directory is swapped for a symlink to outside', async () => {
    const held = await pinParent(join(ws, 'dir', 'new.txt'), { roots: [ws], via });
    try {
      await rename(join(ws, 'dir'), join(ws, 'dir.real'));
      await symlink(outside, join(ws, 'dir'));
      await writeFile(held.at, 'through the held directory');
    } finally {
      await held.dir.close();
    }
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(await readFile(join(ws, 'dir.real', 'new.txt'), 'utf8')).toBe('through the held directory');
  });

  it('recheck notices an open file moved out of the workspace', async () => {
    const f = await openContained(join(ws, 'dir', 'in.txt'), O_RDONLY, { roots: [ws], via });
    try {
      await rename(join(ws, 'dir'), join(outside, 'moved'));
      const err = await f.recheck().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OutsideWorkspaceError);
      expect((err as OutsideWorkspaceError).movedOut).toBe(true);
    } finally {
      await f.fh.close();
    }
  });

  it('writeChecked puts the old content back into a file moved out while it was written', async () => {
    const f = await openContained(join(ws, 'dir', 'in.txt'), O_RDWR, { roots: [ws], via });
    try {
      await rename(join(ws, 'dir'), join(outside, 'moved'));
      await expect(writeChecked(f, 'PAYLOAD', 'inside')).rejects.toBeInstanceOf(OutsideWorkspaceError);
    } finally {
      await f.fh.close();
    }
    expect(await readFile(join(outside, 'moved', 'in.txt'), 'utf8')).toBe('inside');
  });

  it('refuses O_TRUNC (truncating before the check would damage an outside file)', async () => {
    await expect(openContained(join(ws, 'dir', 'in.txt'), O_RDWR | O_TRUNC, { roots: [ws], via })).rejects.toThrow(/O_TRUNC/);
    expect(await readFile(join(ws, 'dir', 'in.txt'), 'utf8')).toBe('inside');
  });
});

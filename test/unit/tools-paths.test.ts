import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isInsideWorkspace, isWithin, resolvePath } from '../../src/util/paths.js';
import { removeDir, tempDir } from './tools-helpers.js';

describe('isWithin', () => {
  it('is the folder itself and what lies below it, by name: a child named "..x" is inside, ".." and a sibling are not', () => {
    expect(isWithin('/ws', '/ws')).toBe(true);
    expect(isWithin('/ws', '/ws/a/b.txt')).toBe(true);
    expect(isWithin('/ws', '/ws/..notes/a.md')).toBe(true);
    expect(isWithin('/ws', '/ws..x/a.md')).toBe(false);
    expect(isWithin('/ws/a', '/ws')).toBe(false);
    expect(isWithin('/ws', '/other/a')).toBe(false);
  });
});

describe('resolvePath', () => {
  it('resolves relative paths against the first root and normalizes', () => {
    expect(resolvePath('src/a.ts', ['/ws/one', '/ws/two'])).toBe('/ws/one/src/a.ts');
    expect(resolvePath('./x/../y.txt', ['/ws'])).toBe('/ws/y.txt');
    expect(resolvePath('/abs/./p', ['/ws'])).toBe('/abs/p');
  });

  it('expands ~ and accepts file URIs', () => {
    expect(resolvePath('~', ['/ws'])).toBe(homedir());
    expect(resolvePath('~/notes.md', ['/ws'])).toBe(join(homedir(), 'notes.md'));
    expect(resolvePath(pathToFileURL('/tmp/some file.txt').href, ['/ws'])).toBe('/tmp/some file.txt');
  });
});

describe('isInsideWorkspace', () => {
  let ws: string;
  let outside: string;
  beforeEach(async () => {
    ws = await tempDir();
    outside = await tempDir();
    await mkdir(join(ws, 'src'));
    await writeFile(join(ws, 'src', 'a.ts'), 'a');
    await writeFile(join(outside, 'secret.txt'), 's');
  });
  afterEach(async () => {
    await removeDir(ws);
    await removeDir(outside);
  });

  it('accepts existing and not-yet-existing paths inside, and the root itself', async () => {
    expect(await isInsideWorkspace(join(ws, 'src', 'a.ts'), [ws])).toBe(true);
    expect(await isInsideWorkspace(join(ws, 'new', 'deeper', 'file.ts'), [ws])).toBe(true);
    expect(await isInsideWorkspace(ws, [ws])).toBe(true);
  });

  it('rejects .. escapes and absolute paths outside', async () => {
    expect(await isInsideWorkspace(resolvePath('../escape.txt', [ws]), [ws])).toBe(false);
    expect(await isInsideWorkspace(resolvePath('src/../../x', [ws]), [ws])).toBe(false);
    expect(await isInsideWorkspace(join(outside, 'secret.txt'), [ws])).toBe(false);
    // A sibling whose name merely starts with the root's name is outside too.
    expect(await isInsideWorkspace(`${ws}-other/file`, [ws])).toBe(false);
  });

  it('rejects paths that leave through a symlink, existing or not', async () => {
    await symlink(outside, join(ws, 'link'));
    expect(await isInsideWorkspace(join(ws, 'link', 'secret.txt'), [ws])).toBe(false);
    expect(await isInsideWorkspace(join(ws, 'link', 'new', 'file.txt'), [ws])).toBe(false);
    await symlink(join(outside, 'secret.txt'), join(ws, 'file-link'));
    expect(await isInsideWorkspace(join(ws, 'file-link'), [ws])).toBe(false);
  });

  it('rejects a dangling symlink whose target is outside (a write would follow it)', async () => {
    await symlink(join(outside, 'not-yet', 'target.txt'), join(ws, 'dangling'));
    expect(await isInsideWorkspace(join(ws, 'dangling'), [ws])).toBe(false);
  });

  it('accepts a symlink that stays inside, and any of several roots', async () => {
    await symlink(join(ws, 'src'), join(ws, 'src-link'));
    expect(await isInsideWorkspace(join(ws, 'src-link', 'a.ts'), [ws])).toBe(true);
    expect(await isInsideWorkspace(join(outside, 'secret.txt'), [ws, outside])).toBe(true);
  });

  it('is false with no roots', async () => {
    expect(await isInsideWorkspace(join(ws, 'src'), [])).toBe(false);
  });
});

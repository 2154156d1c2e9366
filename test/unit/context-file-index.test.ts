import { execFileSync } from 'node:child_process';
import { rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileIndex } from '../../src/core/context/index.js';
import { eventually, gitRepo, removeWorkspace, tempWorkspace, writeFiles } from './context-helpers.js';

let ws: string;
const indexes: FileIndex[] = [];
function index(root: string, opts: ConstructorParameters<typeof FileIndex>[1] = {}): FileIndex {
  const ix = new FileIndex(root, { watch: false, ...opts });
  indexes.push(ix);
  return ix;
}
/** Every entry, as `d path/` or `f path`, relative to the workspace. */
function all(ix: FileIndex): string[] {
  return ix
    .query('', 10_000)
    .map((e) => `${e.type === 'directory' ? 'd' : 'f'} ${e.path.slice(ws.length + 1)}${e.type === 'directory' ? '/' : ''}`)
    .sort();
}
const rel = (p: string): string => p.slice(ws.length + 1);

beforeEach(() => {
  ws = tempWorkspace();
});
afterEach(() => {
  for (const ix of indexes.splice(0)) ix.dispose();
  removeWorkspace(ws);
});

describe('FileIndex listing', () => {
  it('in a git work tree, lists tracked and untracked files and honours .gitignore', async () => {
    writeFiles(ws, {
      '.gitignore': 'build/\n*.log\n',
      'src/a.ts': '',
      'src/lib/parser.ts': '',
      'build/out.js': '',
      'debug.log': '',
      'gone.ts': '',
    });
    gitRepo(ws);
    writeFiles(ws, { 'untracked.ts': '', 'src/lib/extra.log': '' });
    rmSync(join(ws, 'gone.ts')); // tracked but deleted from the work tree
    const ix = index(ws);
    await ix.warm();
    expect(ix.mode).toBe('git');
    expect(all(ix)).toEqual(['d src/', 'd src/lib/', 'f .gitignore', 'f src/a.ts', 'f src/lib/parser.ts', 'f untracked.ts']);
  });

  it("outside git, a repo's .gitignore that is a link to /dev/zero or a FIFO with no writer is skipped: the walk neither hangs nor fills memory", async () => {
    writeFiles(ws, { 'a.txt': '', 'sub/b.txt': '', 'other/c.txt': '' });
    symlinkSync('/dev/zero', join(ws, '.gitignore'));
    execFileSync('mkfifo', [join(ws, 'sub', '.gitignore')]);
    const ix = index(ws);
    await ix.warm();
    expect(ix.mode).toBe('walk');
    expect(all(ix)).toEqual(['d other/', 'd sub/', 'f .gitignore', 'f a.txt', 'f other/c.txt', 'f sub/.gitignore', 'f sub/b.txt']);
  });

  it('outside git, walks and honours nested .gitignore files, skipping .git and node_modules', async () => {
    writeFiles(ws, {
      '.gitignore': '*.log\nout/\n',
      'a.log': '',
      'keep.txt': '',
      'out/y.js': '',
      'sub/.gitignore': '!keep.log\nsecret.txt\n',
      'sub/keep.log': '',
      'sub/secret.txt': '',
      'sub/x.txt': '',
      'sub/deeper/secret.txt': '',
      'sub/deeper/ok.md': '',
      'other/secret.txt': '',
      'node_modules/pkg/index.js': '',
      '.git/config': '',
    });
    const ix = index(ws);
    await ix.warm();
    expect(ix.mode).toBe('walk');
    expect(all(ix)).toEqual(['d other/', 'd sub/', 'd sub/deeper/', 'f .gitignore', 'f keep.txt', 'f other/secret.txt', 'f sub/.gitignore', 'f sub/deeper/ok.md', 'f sub/keep.log', 'f sub/x.txt']);
  });

  it('builds synchronously on a first query without warm()', () => {
    writeFiles(ws, { 'src/main.ts': '' });
    const ix = index(ws);
    expect(ix.size).toBe(0);
    expect(ix.query('main').map((e) => rel(e.path))).toEqual(['src/main.ts']);
  });

  it('offers directories derived from file paths, and a blank query lists top-level entries first', async () => {
    writeFiles(ws, { 'README.md': '', 'src/lib/util.ts': '', 'docs/guide.md': '' });
    const ix = index(ws);
    const lib = ix.query('lib');
    expect(lib[0]).toMatchObject({ type: 'directory', path: join(ws, 'src/lib') });
    const top = ix.query('', 3).map((e) => `${e.type} ${rel(e.path)}`);
    expect(top).toEqual(['directory docs', 'directory src', 'file README.md']);
  });
});

describe('FileIndex fuzzy ranking', () => {
  it('ranks an exact basename above prefixes and scattered matches, and shorter paths on ties', async () => {
    writeFiles(ws, {
      'packages/app/remote/sync/emitter/registry.ts': '', // p…a…r…s…e…r scattered over the path
      'src/pa/rs/er.ts': '',
      'src/parser.test.ts': '',
      'deep/nested/dir/parser.ts': '',
      'lib/parser.ts': '',
    });
    const ix = index(ws);
    const ranked = ix.query('parser').map((e) => rel(e.path));
    expect(ranked.slice(0, 3)).toEqual(['lib/parser.ts', 'deep/nested/dir/parser.ts', 'src/parser.test.ts']);
    expect(ranked).toContain('src/pa/rs/er.ts');
    expect(ranked.indexOf('src/pa/rs/er.ts')).toBeGreaterThan(2);
    expect(ranked).toContain('packages/app/remote/sync/emitter/registry.ts');
    const scores = ix.query('parser').map((e) => e.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('prefers segment starts (camelCase, separators) over mid-word runs', () => {
    writeFiles(ws, { 'src/fuchsia.ts': '', 'src/UserController.ts': '', 'src/user_config.ts': '' });
    const ix = index(ws);
    expect(ix.query('uc').map((e) => rel(e.path))).toEqual(['src/user_config.ts', 'src/UserController.ts', 'src/fuchsia.ts']);
  });

  it('matches path-like queries across folders, case-insensitively, and rejects non-matches', () => {
    writeFiles(ws, { 'src/components/Button.tsx': '', 'test/components/Button.test.tsx': '', 'src/compiler.ts': '' });
    const ix = index(ws);
    const r = ix.query('SRC/comp').map((e) => rel(e.path));
    expect(r[0]).toBe('src/components');
    expect(r).toContain('src/components/Button.tsx');
    expect(r).toContain('src/compiler.ts');
    expect(r).not.toContain('test/components/Button.test.tsx');
    expect(ix.query('zzqx')).toEqual([]);
  });

  it('respects the limit and keeps the best', () => {
    const files: Record<string, string> = { 'target.ts': '' };
    for (let i = 0; i < 200; i++) files[`dir${i}/tar-${i}-get.ts`] = '';
    writeFiles(ws, files);
    const ix = index(ws);
    const r = ix.query('target', 5);
    expect(r).toHaveLength(5);
    expect(rel(r[0].path)).toBe('target.ts');
  });
});

describe('FileIndex freshness', () => {
  it('picks up a new file through the directory watchers', async () => {
    writeFiles(ws, { 'src/a.ts': '' });
    const ix = index(ws, { watch: true, debounceMs: 30, ttlMs: 60_000 });
    await ix.warm();
    expect(ix.query('fresh')).toEqual([]);
    writeFileSync(join(ws, 'src/fresh.ts'), '');
    const hit = await eventually(() => ix.query('fresh')[0]);
    expect(hit).toMatchObject({ type: 'file', path: join(ws, 'src/fresh.ts') });
  });

  it('picks up a new file in a git repository, and a removed one disappears', async () => {
    writeFiles(ws, { 'src/a.ts': '', 'src/old.ts': '' });
    gitRepo(ws);
    const ix = index(ws, { watch: true, debounceMs: 30 });
    await ix.warm();
    writeFiles(ws, { 'src/nested/brandnew.ts': '' });
    rmSync(join(ws, 'src/old.ts'));
    await eventually(() => ix.query('brandnew')[0]);
    await eventually(() => (ix.query('old.ts').some((e) => e.path.endsWith('old.ts')) ? undefined : true));
  });

  it('without watchers, rebuilds in the background once older than the TTL, serving the old list meanwhile', async () => {
    writeFiles(ws, { 'a.ts': '' });
    const ix = index(ws, { watch: false, ttlMs: 50 });
    await ix.warm();
    writeFileSync(join(ws, 'late.ts'), '');
    expect(ix.query('late')).toEqual([]); // fresh enough: no rebuild yet
    await new Promise((r) => setTimeout(r, 80));
    expect(ix.query('late')).toEqual([]); // stale: served as-is, rebuild scheduled
    const hit = await eventually(() => ix.query('late')[0]);
    expect(rel(hit.path)).toBe('late.ts');
  });

  it('stops updating after dispose()', async () => {
    writeFiles(ws, { 'a.ts': '' });
    const ix = index(ws, { watch: true, debounceMs: 10 });
    await ix.warm();
    ix.dispose();
    writeFileSync(join(ws, 'after.ts'), '');
    await new Promise((r) => setTimeout(r, 150));
    expect(ix.query('after')).toEqual([]);
  });
});

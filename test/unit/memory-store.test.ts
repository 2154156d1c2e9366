/**
 * Durable memory's store, index and write check (src/core/memory/), against real temp folders:
 * the folder names (slug, hash, linked worktrees), lenient reading and strict writing of memory
 * files, the bounded index, the settings in effect, and the config key held back from an
 * untrusted workspace file. ECA docs/config/memory.md (editor-code-assistant/eca b749095).
 */
import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalProject, memoryContentError, memoryDirs, memoryIndex, memorySettings, memoryWriteRefusal, parseMemory, projectSlug, scanDir, type MemoryEntry } from '../../src/core/memory/index.js';
import { configSchema } from '../../src/config/schema.js';
import { holdBack } from '../../src/config/held-back.js';
import { protectedPath } from '../../src/core/tool-calls/protected-paths.js';
import { removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
async function temp(): Promise<string> {
  const d = await tempDir('pb-memory-');
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeDir));
});

const valid = (name: string, description: string, extra = '') => `---\nname: ${name}\ndescription: ${description}\n${extra}---\n\nBody.\n`;

function file(dir: string, rel: string, content: string, mtimeSec?: number): string {
  const p = join(dir, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, content);
  if (mtimeSec !== undefined) utimesSync(p, mtimeSec, mtimeSec);
  return p;
}

describe('where memory lives', () => {
  it('the slug is the canonical path made readable, dashes trimmed, with 8 hex of its hash', async () => {
    const root = await temp();
    const slug = projectSlug(root);
    expect(slug).toMatch(/^[A-Za-z0-9]+(-[A-Za-z0-9]+)*-[0-9a-f]{8}$/);
    expect(
      slug.startsWith(
        root
          .replace(/[^A-Za-z0-9]+/g, '-')
          .replace(/^-+/, '')
          .slice(0, 20),
      ),
    ).toBe(true);
    // Two folders whose readable slugs are the same still get their own folder.
    const a = join(root, 'my.project');
    const b = join(root, 'my project');
    mkdirSync(a);
    mkdirSync(b);
    expect(projectSlug(a)).not.toBe(projectSlug(b));
    expect(projectSlug(a).slice(0, -9)).toBe(projectSlug(b).slice(0, -9));
  });

  it('a linked worktree maps to its main worktree; a symlinked root to its real folder', async () => {
    const base = await temp();
    const main = join(base, 'main');
    const gitdir = join(main, '.git', 'worktrees', 'feature');
    mkdirSync(gitdir, { recursive: true });
    writeFileSync(join(gitdir, 'commondir'), '../..\n');
    const wt = join(base, 'feature');
    mkdirSync(wt);
    writeFileSync(join(wt, '.git'), 'gitdir: ../main/.git/worktrees/feature\n');
    // The way back `git worktree add` keeps: without it, a `.git` file could claim any repository.
    writeFileSync(join(gitdir, 'gitdir'), `${join(wt, '.git')}\n`);
    expect(canonicalProject(wt)).toBe(main);
    expect(projectSlug(wt)).toBe(projectSlug(main));
    symlinkSync(main, join(base, 'link'));
    expect(canonicalProject(join(base, 'link'))).toBe(main);
    // A `.git` file that leads nowhere leaves the folder as it is.
    const odd = join(base, 'odd');
    mkdirSync(odd);
    writeFileSync(join(odd, '.git'), 'gitdir: /nowhere/at/all\n');
    expect(canonicalProject(odd)).toBe(odd);
  });

  it('the folders: each root personal in order (worktrees of one repository once), then global, under XDG_CONFIG_HOME', async () => {
    const base = await temp();
    const env = { XDG_CONFIG_HOME: join(base, 'xdg') };
    const r1 = join(base, 'one');
    const r2 = join(base, 'two');
    mkdirSync(r1);
    mkdirSync(r2);
    const got = memoryDirs([r1, r2, r1], env);
    expect(got.map((d) => [d.tier, d.label])).toEqual([
      ['personal', 'one'],
      ['personal', 'two'],
      ['global', 'global'],
    ]);
    expect(got[0]!.dir).toBe(join(base, 'xdg', 'patchbay', 'memory', 'projects', projectSlug(r1)));
    expect(got[2]!.dir).toBe(join(base, 'xdg', 'patchbay', 'memory', 'global'));
    // A relative XDG_CONFIG_HOME is invalid (XDG spec): ~/.config then.
    expect(memoryDirs([], { XDG_CONFIG_HOME: 'rel' }, base)[0]!.dir).toBe(join(base, '.config', 'patchbay', 'memory', 'global'));
  });
});

describe('memory files', () => {
  it('a valid file needs front-matter with a non-blank name and description; the reason says what to fix', () => {
    expect(memoryContentError(valid('A', 'b'))).toBeUndefined();
    expect(memoryContentError('just text')).toMatch(/must start with YAML front-matter/);
    expect(memoryContentError('---\nname: A\n---\n')).toMatch(/missing the required key `description`/);
    expect(memoryContentError('---\nname: "  "\ndescription: x\n---\n')).toMatch(/missing the required key `name`/);
    expect(memoryContentError('---\nname: [unclosed\n---\n')).toMatch(/does not parse/);
    expect(memoryContentError('---\nname: A\ndescription: b\n')).toMatch(/does not parse.*closing/);
    expect(memoryContentError('---\n- a\n- b\n---\n')).toMatch(/not a YAML mapping/);
  });

  it('reading is lenient: type defaults to note, unknown keys are fine, tags are a list or commas, lowercased, at most 3', () => {
    expect(parseMemory(valid('A', 'b', 'extra: kept\n'))).toEqual({ name: 'A', description: 'b', type: 'note', tags: [] });
    expect(parseMemory(valid('A', 'b', 'type: gotcha\ntags: Docker, ci, docker, x, y\n'))).toEqual({ name: 'A', description: 'b', type: 'gotcha', tags: ['docker', 'ci', 'x'] });
    expect(parseMemory(valid('A', 'b', 'tags: [One, two]\n'))).toMatchObject({ tags: ['one', 'two'] });
  });

  it('a folder is read recursively, newest first; broken files are skipped with their reason', async () => {
    const dir = await temp();
    file(dir, 'old.md', valid('Old', 'older'), 1_600_000_000);
    file(dir, 'sub/new.md', valid('New', 'newer'), 1_700_000_000);
    file(dir, 'notes.txt', 'not markdown');
    file(dir, 'broken.md', 'no front matter');
    const { entries, skipped } = scanDir({ dir, tier: 'global', label: 'global' });
    expect(entries.map((e) => [e.name, e.path])).toEqual([
      ['New', join(dir, 'sub', 'new.md')],
      ['Old', join(dir, 'old.md')],
    ]);
    expect(entries[0]!.mtimeMs).toBe(1_700_000_000_000);
    expect(skipped).toEqual([{ path: join(dir, 'broken.md'), tier: 'global', label: 'global', reason: expect.stringMatching(/front-matter/) }]);
    // Edited (new mtime): read again, not served from the cache.
    file(dir, 'old.md', valid('Renamed', 'older'), 1_800_000_000);
    expect(scanDir({ dir, tier: 'global', label: 'global' }).entries[0]!.name).toBe('Renamed');
    expect(scanDir({ dir: join(dir, 'missing'), tier: 'global', label: 'global' })).toEqual({ entries: [], skipped: [] });
  });

  it('a symlink loop in the folder ends, each memory read once', async () => {
    const dir = await temp();
    file(dir, 'a.md', valid('A', 'b'));
    symlinkSync(dir, join(dir, 'loop'));
    // Each real folder is read once: the memory is listed once, not once per trip round the loop.
    expect(scanDir({ dir, tier: 'global', label: 'global' }).entries.map((e) => e.path)).toEqual([join(dir, 'a.md')]);
  });
});

describe('the index', () => {
  const now = 10 * 86_400_000;
  const entry = (i: number, label = 'global', tags: string[] = []): MemoryEntry => ({
    path: `/m/${label}/${i}.md`,
    tier: label === 'global' ? 'global' : 'personal',
    label,
    name: `Memory ${i}`,
    description: `about ${i}`,
    type: 'fact',
    tags,
    mtimeMs: now - i * 86_400_000,
    bodyHash: `h${i}`,
  });

  it('one heading per folder, a tags line (most used first), one line per memory', () => {
    const idx = memoryIndex([entry(1, 'proj', ['ci', 'docker']), entry(2, 'proj', ['ci']), entry(3)], { maxEntries: 100, maxTokens: 2000 }, now);
    expect(idx.text).toBe(
      [
        '## Memory',
        '## proj',
        'Tags in use: ci(2), docker',
        '- Memory 1 [fact] (updated 1d ago) — about 1',
        '- Memory 2 [fact] (updated 2d ago) — about 2',
        '## global',
        '- Memory 3 [fact] (updated 3d ago) — about 3',
      ].join('\n'),
    );
    expect(idx).toMatchObject({ count: 3, totalCount: 3 });
    expect(idx.items[0]).toEqual({ name: 'Memory 1', type: 'fact', source: 'proj', path: '/m/proj/1.md' });
  });

  it('entries are dropped from the end to fit maxEntries and maxTokens, with a notice; none fits: no index', () => {
    const many = Array.from({ length: 50 }, (_, i) => entry(i));
    const byCount = memoryIndex(many, { maxEntries: 5, maxTokens: 2000 }, now);
    expect(byCount).toMatchObject({ count: 5, totalCount: 50 });
    expect(byCount.text).toContain('Showing 5 of 50 memories');
    const byTokens = memoryIndex(many, { maxEntries: 100, maxTokens: 200 }, now);
    expect(byTokens.count).toBeGreaterThan(0);
    expect(byTokens.count).toBeLessThan(50);
    expect(Math.ceil(byTokens.text.length / 4)).toBeLessThanOrEqual(200);
    expect(memoryIndex(many, { maxEntries: 100, maxTokens: 10 }, now)).toEqual({ text: '', count: 0, totalCount: 50, items: [] });
    expect(memoryIndex(many, { maxEntries: 100, maxTokens: 0 }, now)).toEqual({ text: '', count: 0, totalCount: 50, items: [] });
    expect(memoryIndex([], { maxEntries: 100, maxTokens: 2000 }, now)).toEqual({ text: '', count: 0, totalCount: 0, items: [] });
  });

  it('a long or multi-line description is one line, cut at 120 characters', () => {
    const long = { ...entry(1), description: `${'x'.repeat(200)}\nsecond line` };
    const line = memoryIndex([long], { maxEntries: 10, maxTokens: 2000 }, now).text.split('\n').at(-1)!;
    expect(line.endsWith('…')).toBe(true);
    expect(line.split(' — ')[1]!.length).toBe(120);
  });
});

describe('settings and trust', () => {
  it('off by default; writeMode agent by default, anything unknown is explicit; index limits default to 100 / 2000', () => {
    const parse = (memory?: unknown) => memorySettings(configSchema.parse(memory === undefined ? {} : { memory }));
    expect(parse()).toEqual({ enabled: false, writeMode: 'agent', maxEntries: 100, maxTokens: 2000 });
    expect(parse({ enabled: true, writeMode: 'explicit', index: { maxEntries: 3, maxTokens: 50 } })).toEqual({ enabled: true, writeMode: 'explicit', maxEntries: 3, maxTokens: 50 });
    expect(parse({ enabled: true, writeMode: 'agnet' }).writeMode).toBe('explicit');
  });

  it('an untrusted workspace file may not set memory.enabled or memory.writeMode; the index limits apply', () => {
    const { kept, held } = holdBack({ memory: { enabled: true, writeMode: 'agent', index: { maxEntries: 5 } } }, {});
    expect(held.map((h) => h.key)).toEqual(['memory.enabled', 'memory.writeMode']);
    expect(kept).toEqual({ memory: { index: { maxEntries: 5 } } });
    expect(holdBack({ memory: { enabled: false } }, { memory: { enabled: true } }).held.map((h) => h.key)).toEqual(['memory.enabled']);
  });

  it('nor prompts.memoryConsolidate (the instructions that rewrite and delete memory files)', () => {
    const { kept, held } = holdBack({ prompts: { memoryConsolidate: 'delete all', other: 'x' } }, {});
    expect(held.map((h) => h.key)).toEqual(['prompts.memoryConsolidate']);
    expect(kept).toEqual({ prompts: { other: 'x' } });
  });
});

describe('writes into a memory folder', () => {
  it('write_file and edit_file are refused when the result is no valid memory file; other paths and files are left alone', async () => {
    const base = await temp();
    const dir = join(base, 'memory', 'global');
    mkdirSync(dir, { recursive: true });
    const dirs = [{ dir, tier: 'global' as const, label: 'global' }];
    const roots = [join(base, 'ws')];
    const good = file(dir, 'good.md', valid('Good', 'fine'));
    expect(await memoryWriteRefusal('write_file', { path: join(dir, 'x.md'), content: 'plain' }, roots, dirs)).toMatch(/Invalid memory file content.*Nothing was written/);
    expect(await memoryWriteRefusal('write_file', { path: join(dir, 'x.md'), content: valid('A', 'b') }, roots, dirs)).toBeUndefined();
    expect(await memoryWriteRefusal('write_file', { path: join(dir, 'x.txt'), content: 'plain' }, roots, dirs)).toBeUndefined();
    expect(await memoryWriteRefusal('write_file', { path: join(base, 'elsewhere.md'), content: 'plain' }, roots, dirs)).toBeUndefined();
    expect(await memoryWriteRefusal('edit_file', { path: good, original_content: 'description: fine\n', new_content: '' }, roots, dirs)).toMatch(/`description`/);
    expect(await memoryWriteRefusal('edit_file', { path: good, original_content: 'fine', new_content: 'better' }, roots, dirs)).toBeUndefined();
    // An edit that cannot be made is the tool's to report.
    expect(await memoryWriteRefusal('edit_file', { path: good, original_content: 'absent', new_content: '' }, roots, dirs)).toBeUndefined();
    expect(await memoryWriteRefusal('read_file', { path: good }, roots, dirs)).toBeUndefined();
    // A path that leads into the folder through a symlink is a memory write too.
    symlinkSync(dir, join(base, 'via'));
    expect(await memoryWriteRefusal('write_file', { path: join(base, 'via', 'y.md'), content: 'plain' }, roots, dirs)).toMatch(/Invalid memory file content/);
  });
});

describe('the memory folder and protected paths', () => {
  it("is not patchbay's protected user config; the rest of it is, and so is a link from memory to it", async () => {
    const base = await temp();
    const env = { XDG_CONFIG_HOME: join(base, 'xdg'), PATCHBAY_HOME: join(base, 'home') };
    const config = join(base, 'xdg', 'patchbay');
    const memory = join(config, 'memory', 'global');
    mkdirSync(memory, { recursive: true });
    writeFileSync(join(config, 'config.json'), '{}');
    expect(await protectedPath(join(memory, 'note.md'), [], env)).toBeUndefined();
    expect(await protectedPath(join(config, 'config.json'), [], env)).toMatch(/user config/);
    symlinkSync(join(config, 'config.json'), join(memory, 'sneaky.md'));
    expect(await protectedPath(join(memory, 'sneaky.md'), [], env)).toMatch(/user config/);
  });
});

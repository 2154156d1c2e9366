import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_GREP_FILE_BYTES, directoryTreeTool, grepTool } from '../../src/core/tools/native/index.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

let ws: string;
let outside: string;
beforeEach(async () => {
  ws = await tempDir();
  outside = await tempDir();
  // A small project: a .gitignore at the root, one nested, build output and a .git directory.
  await writeFile(join(ws, '.gitignore'), 'dist/\n*.log\n');
  await mkdir(join(ws, '.git'));
  await writeFile(join(ws, '.git', 'HEAD'), 'ref: refs/heads/main // TODO-in-git\n');
  await mkdir(join(ws, 'src', 'util'), { recursive: true });
  await writeFile(join(ws, 'src', 'main.ts'), 'import { x } from "./util/x";\n// TODO: main\nconsole.log(x);\n');
  await writeFile(join(ws, 'src', 'util', 'x.ts'), 'export const x = 1; // todo lower\n');
  await writeFile(join(ws, 'src', 'util', 'y.js'), '// TODO: js\n');
  await writeFile(join(ws, 'src', 'app.log'), 'TODO: ignored log\n');
  await mkdir(join(ws, 'dist'));
  await writeFile(join(ws, 'dist', 'main.js'), '// TODO: built\n');
  await mkdir(join(ws, 'docs'));
  await writeFile(join(ws, 'docs', '.gitignore'), 'drafts/\n');
  await mkdir(join(ws, 'docs', 'drafts'));
  await writeFile(join(ws, 'docs', 'drafts', 'wip.md'), 'TODO: draft\n');
  await writeFile(join(ws, 'docs', 'guide.md'), '# Guide\nTODO: write guide\n');
  await writeFile(join(ws, 'README.md'), 'readme\n');
});
afterEach(async () => {
  await removeDir(ws);
  await removeDir(outside);
});

describe('directory_tree', () => {
  const tool = directoryTreeTool();

  it('draws the tree, respecting nested .gitignore files and skipping .git', async () => {
    const r = await tool.call({ path: ws }, context([ws]));
    expect(r.error).toBe(false);
    const out = text(r);
    expect(out).toBe(
      [
        `${ws}/`,
        '├── .gitignore',
        '├── README.md',
        '├── docs/',
        '│   ├── .gitignore',
        '│   └── guide.md',
        '└── src/',
        '    ├── main.ts',
        '    └── util/',
        '        ├── x.ts',
        '        └── y.js',
        '',
        '3 directories, 7 files',
      ].join('\n'),
    );
  });

  it('applies the workspace .gitignore when listing a subdirectory', async () => {
    const out = text(await tool.call({ path: 'src' }, context([ws])));
    expect(out).toContain('main.ts');
    expect(out).not.toContain('app.log');
  });

  it('lists an explicitly requested ignored directory', async () => {
    const out = text(await tool.call({ path: 'dist' }, context([ws])));
    expect(out).toContain('main.js');
  });

  it('limits depth with max_depth', async () => {
    const out = text(await tool.call({ path: ws, max_depth: 1 }, context([ws])));
    expect(out).toContain('├── docs/');
    expect(out).toContain('└── src/');
    expect(out).not.toContain('main.ts');
    expect(out).not.toContain('guide.md');
  });

  it('caps entries breadth-first, with a notice', async () => {
    const small = directoryTreeTool({ maxEntries: 4 });
    const out = text(await small.call({ path: ws }, context([ws])));
    // The four top-level entries fit; nothing deeper is listed.
    expect(out).toContain('├── README.md');
    expect(out).toContain('└── src/');
    expect(out).not.toContain('main.ts');
    expect(out).toMatch(/\[patchbay: listing capped at 4 entries; 2 directories not expanded\./);
  });

  it('shows symlinked directories without entering them', async () => {
    await writeFile(join(outside, 'secret.txt'), 's');
    await symlink(outside, join(ws, 'out-link'));
    const out = text(await tool.call({ path: ws }, context([ws])));
    expect(out).toContain(`out-link/ -> ${outside}`);
    expect(out).not.toContain('secret.txt');
  });

  it('errors for a missing path or a file', async () => {
    const missing = await tool.call({ path: 'nope' }, context([ws]));
    expect(missing.error).toBe(true);
    expect(text(missing)).toContain(join(ws, 'nope'));
    const file = await tool.call({ path: 'README.md' }, context([ws]));
    expect(file.error).toBe(true);
    expect(text(file)).toMatch(/read_file/);
  });
});

describe('grep', () => {
  const tool = grepTool();

  it('finds matching lines as file:line: text, respecting .gitignore and skipping .git', async () => {
    const r = await tool.call({ path: ws, pattern: 'TODO' }, context([ws]));
    expect(r.error).toBe(false);
    expect(text(r).split('\n')).toEqual(['docs/guide.md:2: TODO: write guide', 'src/main.ts:2: // TODO: main', 'src/util/y.js:1: // TODO: js']);
  });

  it('supports regexes and (?i)', async () => {
    const out = text(await tool.call({ path: ws, pattern: '(?i)^export\\s.*todo' }, context([ws])));
    expect(out).toBe('src/util/x.ts:1: export const x = 1; // todo lower');
  });

  it('filters with include against names and relative paths', async () => {
    const ts = text(await tool.call({ path: ws, pattern: 'TODO|todo', include: '*.ts' }, context([ws])));
    expect(ts.split('\n')).toEqual(['src/main.ts:2: // TODO: main', 'src/util/x.ts:1: export const x = 1; // todo lower']);
    const braces = text(await tool.call({ path: ws, pattern: 'TODO', include: '**/*.{js,md}' }, context([ws])));
    expect(braces.split('\n')).toEqual(['docs/guide.md:2: TODO: write guide', 'src/util/y.js:1: // TODO: js']);
    const rel = text(await tool.call({ path: ws, pattern: 'TODO', include: 'src/util/*' }, context([ws])));
    expect(rel).toBe('src/util/y.js:1: // TODO: js');
  });

  it('stops at max_results with a notice', async () => {
    await writeFile(join(ws, 'many.txt'), Array.from({ length: 50 }, (_, i) => `hit ${i}`).join('\n'));
    const out = text(await tool.call({ path: ws, pattern: '^hit', max_results: 5 }, context([ws])));
    const lines = out.split('\n');
    expect(lines.slice(0, 5)).toEqual(['many.txt:1: hit 0', 'many.txt:2: hit 1', 'many.txt:3: hit 2', 'many.txt:4: hit 3', 'many.txt:5: hit 4']);
    expect(lines).toHaveLength(7);
    expect(out).toMatch(/\[patchbay: stopped after 5 matches/);
    // Exactly max_results matches in all is not reported as capped.
    const exact = text(await tool.call({ path: ws, pattern: '^hit [0-4]$', max_results: 5 }, context([ws])));
    expect(exact.split('\n')).toHaveLength(5);
    expect(exact).not.toContain('[patchbay:');
  });

  it('skips binary files and files that are too large', async () => {
    await writeFile(join(ws, 'blob.bin'), Buffer.concat([Buffer.from('TODO binary'), Buffer.from([0, 1, 2])]));
    await writeFile(join(ws, 'huge.txt'), `TODO huge\n${'x'.repeat(MAX_GREP_FILE_BYTES)}`);
    const out = text(await tool.call({ path: ws, pattern: 'TODO' }, context([ws])));
    expect(out).not.toContain('blob.bin');
    expect(out).not.toContain('huge.txt:');
    expect(out).toMatch(/1 file over 4 MB skipped/);
  });

  it('searches a single file, and reports no matches plainly', async () => {
    const one = text(await tool.call({ path: 'src/main.ts', pattern: 'console' }, context([ws])));
    expect(one).toBe('src/main.ts:3: console.log(x);');
    const none = await tool.call({ path: ws, pattern: 'no-such-text' }, context([ws]));
    expect(none.error).toBe(false);
    expect(text(none)).toMatch(/^No matches for \/no-such-text\/ in 7 files/);
  });

  it('shows absolute paths for files outside the first root (a call the user approved)', async () => {
    await writeFile(join(outside, 'o.txt'), 'needle\n');
    const out = text(await tool.call({ path: outside, pattern: 'needle' }, context([ws], { confined: false })));
    expect(out).toBe(`${join(outside, 'o.txt')}:1: needle`);
  });

  it('reads no file outside the roots when the call is confined (a folder flipped to a symlink)', async () => {
    await writeFile(join(outside, 'o.txt'), 'needle\n');
    const out = text(await tool.call({ path: outside, pattern: 'needle' }, context([ws])));
    expect(out).not.toContain(`o.txt:1: needle`);
  });

  it('errors for an invalid regex or a missing path', async () => {
    const bad = await tool.call({ path: ws, pattern: '(unclosed' }, context([ws]));
    expect(bad.error).toBe(true);
    expect(text(bad)).toMatch(/Invalid regular expression/);
    const missing = await tool.call({ path: 'nope', pattern: 'x' }, context([ws]));
    expect(missing.error).toBe(true);
    expect(text(missing)).toContain(join(ws, 'nope'));
    const noPattern = await tool.call({ path: ws }, context([ws]));
    expect(noPattern.error).toBe(true);
    expect(text(noPattern)).toMatch(/pattern/);
  });

  it('returns a cancelled error when aborted mid-walk', async () => {
    for (let i = 0; i < 200; i++) await writeFile(join(ws, `f${i}.txt`), 'zzz\n');
    const ac = new AbortController();
    const p = tool.call({ path: ws, pattern: 'nomatch' }, context([ws], { signal: ac.signal }));
    ac.abort();
    const r = await p;
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/cancelled/);
  });
});

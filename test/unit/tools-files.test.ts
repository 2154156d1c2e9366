import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_READ_LINES, MAX_READ_CHARS, editFileTool, moveFileTool, readFileTool, writeFileTool } from '../../src/core/tools/native/index.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

let ws: string;
beforeEach(async () => {
  ws = await tempDir();
});
afterEach(async () => {
  await removeDir(ws);
});

const lines = (n: number, from = 1): string => Array.from({ length: n }, (_, i) => `line ${i + from}\n`).join('');

describe('read_file', () => {
  const tool = readFileTool();

  it('reads a whole small file, by absolute or relative path', async () => {
    await writeFile(join(ws, 'a.txt'), 'hello\nworld\n');
    const r = await tool.call({ path: join(ws, 'a.txt') }, context([ws]));
    expect(r.error).toBe(false);
    expect(text(r)).toBe('hello\nworld\n');
    expect(text(await tool.call({ path: 'a.txt' }, context([ws])))).toBe('hello\nworld\n');
  });

  it('honours line_offset and limit, with a notice saying how to read on', async () => {
    await writeFile(join(ws, 'a.txt'), lines(10));
    const r = await tool.call({ path: 'a.txt', line_offset: 2, limit: 3 }, context([ws]));
    expect(r.error).toBe(false);
    expect(text(r)).toMatch(/^line 3\nline 4\nline 5\n\n\[patchbay: showing lines 3-5 of 10\. .*line_offset=5\.\]$/);
  });

  it('gives the tail without a notice when it reaches the end (no trailing newline)', async () => {
    await writeFile(join(ws, 'a.txt'), 'a\nb\nc');
    const r = await tool.call({ path: 'a.txt', line_offset: 1 }, context([ws]));
    expect(text(r)).toBe('b\nc');
  });

  it(`caps at ${DEFAULT_READ_LINES} lines by default`, async () => {
    await writeFile(join(ws, 'big.txt'), lines(DEFAULT_READ_LINES + 500));
    const out = text(await tool.call({ path: 'big.txt' }, context([ws])));
    expect(out.split('\n').filter((l) => l.startsWith('line ')).length).toBe(DEFAULT_READ_LINES);
    expect(out).toContain(`showing lines 1-${DEFAULT_READ_LINES} of ${DEFAULT_READ_LINES + 500}`);
    expect(out).toContain(`line_offset=${DEFAULT_READ_LINES}`);
  });

  it(`caps at ${MAX_READ_CHARS / 1024} KB, including within one long line`, async () => {
    const long = `${'x'.repeat(MAX_READ_CHARS + 1000)}\nSECOND_LINE\n`;
    await writeFile(join(ws, 'long.txt'), long);
    const out = text(await tool.call({ path: 'long.txt' }, context([ws])));
    expect(out.startsWith('x'.repeat(MAX_READ_CHARS))).toBe(true);
    expect(out.includes('SECOND_LINE')).toBe(false);
    expect(out.includes('middle of line 1; showing lines 1-1 of 2')).toBe(true);
    expect(out.includes('line_offset=1')).toBe(true);
    expect(out.length).toBeLessThan(MAX_READ_CHARS + 500);
  });

  it('keeps CRLF line endings', async () => {
    await writeFile(join(ws, 'crlf.txt'), 'a\r\nb\r\n');
    expect(text(await tool.call({ path: 'crlf.txt' }, context([ws])))).toBe('a\r\nb\r\n');
  });

  it('errors for a missing file, naming the path', async () => {
    const r = await tool.call({ path: 'nope/missing.txt' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toContain(join(ws, 'nope/missing.txt'));
    expect(text(r)).toMatch(/No such file/);
  });

  it('errors for binary files and directories', async () => {
    await writeFile(join(ws, 'bin.dat'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const bin = await tool.call({ path: 'bin.dat' }, context([ws]));
    expect(bin.error).toBe(true);
    expect(text(bin)).toMatch(/binary/);
    await mkdir(join(ws, 'd'));
    const dir = await tool.call({ path: 'd' }, context([ws]));
    expect(dir.error).toBe(true);
    expect(text(dir)).toMatch(/directory/);
  });

  it('errors for a line_offset past the end, and for an empty file says it is empty', async () => {
    await writeFile(join(ws, 'a.txt'), lines(3));
    const r = await tool.call({ path: 'a.txt', line_offset: 3 }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/past the end .* 3 lines/);
    await writeFile(join(ws, 'empty.txt'), '');
    const e = await tool.call({ path: 'empty.txt' }, context([ws]));
    expect(e.error).toBe(false);
    expect(text(e)).toMatch(/empty/);
  });

  it('returns an error result naming the field for bad arguments', async () => {
    const r = await tool.call({ path: 'a.txt', line_offset: -1 }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/line_offset/);
    const missing = await tool.call({}, context([ws]));
    expect(missing.error).toBe(true);
    expect(text(missing)).toMatch(/- path:/);
  });

  it('treats null optional arguments as omitted', async () => {
    await writeFile(join(ws, 'a.txt'), 'x\n');
    const r = await tool.call({ path: 'a.txt', line_offset: null, limit: null }, context([ws]));
    expect(r.error).toBe(false);
    expect(text(r)).toBe('x\n');
  });

  it('does nothing once the signal is aborted', async () => {
    await writeFile(join(ws, 'a.txt'), 'x\n');
    const ac = new AbortController();
    ac.abort();
    const r = await tool.call({ path: 'a.txt' }, context([ws], { signal: ac.signal }));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/cancelled/);
  });
});

describe('write_file', () => {
  const tool = writeFileTool();

  it('creates parent directories and returns a fileChange', async () => {
    const r = await tool.call({ path: 'deep/er/new.txt', content: 'a\nb\n' }, context([ws]));
    expect(r.error).toBe(false);
    const abs = join(ws, 'deep/er/new.txt');
    expect(await readFile(abs, 'utf8')).toBe('a\nb\n');
    expect(r.details).toMatchObject({ type: 'fileChange', path: abs, linesAdded: 2, linesRemoved: 0 });
    expect(text(r)).toContain('Created');
  });

  it('overwrites, with a diff against the old content; preview changes nothing', async () => {
    const abs = join(ws, 'a.txt');
    await writeFile(abs, 'one\ntwo\n');
    const preview = await tool.preview!({ path: abs, content: 'one\n2\n3\n' }, context([ws]));
    expect(preview).toMatchObject({ path: abs, linesAdded: 2, linesRemoved: 1 });
    expect(await readFile(abs, 'utf8')).toBe('one\ntwo\n');
    const r = await tool.call({ path: abs, content: 'one\n2\n3\n' }, context([ws]));
    expect(r.details).toMatchObject({ linesAdded: 2, linesRemoved: 1 });
    expect(r.details?.type === 'fileChange' && r.details.diff).toContain('-two\n+2\n+3\n');
    expect(await readFile(abs, 'utf8')).toBe('one\n2\n3\n');
  });

  it('errors when the path is a directory', async () => {
    await mkdir(join(ws, 'd'));
    const r = await tool.call({ path: 'd', content: 'x' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/directory/);
  });

  it('declares its path, summary and kind', () => {
    expect(tool.paths!({ path: '../x', content: '' })).toEqual(['../x']);
    expect(tool.summary!({ path: 'src/a.ts', content: '' })).toBe('Writing file "src/a.ts"');
    expect(tool).toMatchObject({ readOnly: false, mutates: true, server: 'patchbay', origin: 'native' });
  });
});

describe('edit_file', () => {
  const tool = editFileTool();
  let abs: string;
  beforeEach(async () => {
    abs = join(ws, 'code.ts');
    await writeFile(abs, 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });

  it('replaces a unique match and returns a fileChange', async () => {
    const r = await tool.call({ path: abs, original_content: 'const b = 2;', new_content: 'const b = 3;\nconst c = 4;' }, context([ws]));
    expect(r.error).toBe(false);
    expect(await readFile(abs, 'utf8')).toBe('const a = 1;\nconst b = 3;\nconst c = 4;\nconst a2 = 1;\n');
    expect(r.details).toMatchObject({ type: 'fileChange', path: abs, linesAdded: 2, linesRemoved: 1 });
  });

  it('errors when not found, hinting to re-read, and leaves the file alone', async () => {
    const r = await tool.call({ path: abs, original_content: 'const z = 9;', new_content: 'x' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/not found/);
    expect(text(r)).toMatch(/re-read/);
    expect(await readFile(abs, 'utf8')).toBe('const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
  });

  it('errors on several matches, saying how many; all_occurrences replaces them all', async () => {
    const r = await tool.call({ path: abs, original_content: '= 1;', new_content: '= 10;' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/found 2 times/);
    expect(text(r)).toMatch(/all_occurrences/);
    const all = await tool.call({ path: abs, original_content: '= 1;', new_content: '= 10;', all_occurrences: true }, context([ws]));
    expect(all.error).toBe(false);
    expect(text(all)).toMatch(/2 occurrences/);
    expect(await readFile(abs, 'utf8')).toBe('const a = 10;\nconst b = 2;\nconst a2 = 10;\n');
    expect(all.details).toMatchObject({ linesAdded: 2, linesRemoved: 2 });
  });

  it('keeps $ patterns in new_content literal', async () => {
    await tool.call({ path: abs, original_content: 'const b = 2;', new_content: "const b = '$&$1$$';" }, context([ws]));
    expect(await readFile(abs, 'utf8')).toContain("const b = '$&$1$$';");
  });

  it('matches LF original_content against a CRLF file, writing CRLF', async () => {
    await writeFile(abs, 'a\r\nb\r\nc\r\n');
    const r = await tool.call({ path: abs, original_content: 'a\nb', new_content: 'a\nB\nb' }, context([ws]));
    expect(r.error).toBe(false);
    expect(await readFile(abs, 'utf8')).toBe('a\r\nB\r\nb\r\nc\r\n');
  });

  it('errors for a missing file (pointing at write_file) and for identical contents', async () => {
    const missing = await tool.call({ path: 'nope.ts', original_content: 'a', new_content: 'b' }, context([ws]));
    expect(missing.error).toBe(true);
    expect(text(missing)).toContain(join(ws, 'nope.ts'));
    expect(text(missing)).toMatch(/write_file/);
    const same = await tool.call({ path: abs, original_content: 'const b = 2;', new_content: 'const b = 2;' }, context([ws]));
    expect(same.error).toBe(true);
  });

  it('previews the change without writing', async () => {
    const p = await tool.preview!({ path: abs, original_content: 'const b = 2;', new_content: '' }, context([ws]));
    expect(p).toMatchObject({ linesAdded: 1, linesRemoved: 1 });
    expect(await readFile(abs, 'utf8')).toContain('const b = 2;');
    expect(await tool.preview!({ path: abs, original_content: 'absent', new_content: '' }, context([ws]))).toBeUndefined();
  });
});

describe('move_file', () => {
  const tool = moveFileTool();

  it('moves a file into a new directory', async () => {
    await writeFile(join(ws, 'a.txt'), 'A');
    const r = await tool.call({ source: 'a.txt', destination: 'sub/dir/b.txt' }, context([ws]));
    expect(r.error).toBe(false);
    expect(await readFile(join(ws, 'sub/dir/b.txt'), 'utf8')).toBe('A');
    await expect(stat(join(ws, 'a.txt'))).rejects.toThrow();
  });

  it('moves directories', async () => {
    await mkdir(join(ws, 'd1'));
    await writeFile(join(ws, 'd1', 'x'), 'X');
    const r = await tool.call({ source: 'd1', destination: 'd2' }, context([ws]));
    expect(r.error).toBe(false);
    expect(await readFile(join(ws, 'd2', 'x'), 'utf8')).toBe('X');
  });

  it('refuses to overwrite an existing destination', async () => {
    await writeFile(join(ws, 'a.txt'), 'A');
    await writeFile(join(ws, 'b.txt'), 'B');
    const r = await tool.call({ source: 'a.txt', destination: 'b.txt' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/already exists/);
    expect(await readFile(join(ws, 'b.txt'), 'utf8')).toBe('B');
    expect(await readFile(join(ws, 'a.txt'), 'utf8')).toBe('A');
  });

  it('errors for a missing source, and declares both paths', async () => {
    const r = await tool.call({ source: 'ghost.txt', destination: 'x.txt' }, context([ws]));
    expect(r.error).toBe(true);
    expect(text(r)).toContain(join(ws, 'ghost.txt'));
    expect(tool.paths!({ source: 'a', destination: '/etc/b' })).toEqual(['a', '/etc/b']);
  });
});

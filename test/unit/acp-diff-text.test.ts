/** A stored unified diff (core's `fileChange`) as ACP diffs: one per hunk, a new file with `oldText: null`. */
import { describe, expect, it } from 'vitest';
import { fileChange } from '../../src/core/tools/diff.js';
import { diffContents } from '../../src/server/acp/diff-text.js';

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';

describe('diffContents', () => {
  it('one hunk: the context and removed lines before, the context and added lines after', () => {
    const d = fileChange('/w/a.txt', 'one\ntwo\nthree\n', 'one\nTWO\nthree\n');
    expect(diffContents('/w/a.txt', d.diff)).toEqual([{ type: 'diff', path: '/w/a.txt', oldText: 'one\ntwo\nthree\n', newText: 'one\nTWO\nthree\n' }]);
  });

  it('a new file has no old text', () => {
    const d = fileChange('/w/new.txt', '', 'hello\nworld\n');
    expect(diffContents('/w/new.txt', d.diff)).toEqual([{ type: 'diff', path: '/w/new.txt', oldText: null, newText: 'hello\nworld\n' }]);
  });

  it('two distant changes are two diffs; empty lines and a missing final newline survive', () => {
    const before = lines(30, (i) => (i === 15 ? '' : `line ${i}`));
    const after = before.replace('line 2\n', 'LINE 2\n').replace('line 28\n', 'LINE 28\n').replace(/\n$/, '');
    const out = diffContents('/w/b.txt', fileChange('/w/b.txt', before, after).diff);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject({ oldText: expect.stringContaining('line 2\n') as string, newText: expect.stringContaining('LINE 2\n') as string });
    expect(out[1]).toMatchObject({ oldText: expect.stringContaining('line 28') as string, newText: expect.stringContaining('LINE 28') as string });
    expect(JSON.stringify(out)).not.toContain('No newline');
  });

  it('the texts are the file’s own: a final newline kept, a missing one not added (on either side)', () => {
    expect(diffContents('/w/n.txt', fileChange('/w/n.txt', '', 'a\nb').diff)).toEqual([{ type: 'diff', path: '/w/n.txt', oldText: null, newText: 'a\nb' }]);
    expect(diffContents('/w/n.txt', fileChange('/w/n.txt', 'a\nb', 'a\nb\n').diff)).toEqual([{ type: 'diff', path: '/w/n.txt', oldText: 'a\nb', newText: 'a\nb\n' }]);
    expect(diffContents('/w/n.txt', fileChange('/w/n.txt', 'a\nb\n', 'a\nc').diff)).toEqual([{ type: 'diff', path: '/w/n.txt', oldText: 'a\nb\n', newText: 'a\nc' }]);
    // Unchanged last line without a newline: a context line ends both sides without one.
    expect(diffContents('/w/n.txt', fileChange('/w/n.txt', 'x\ny\nz', 'X\ny\nz').diff)).toEqual([{ type: 'diff', path: '/w/n.txt', oldText: 'x\ny\nz', newText: 'X\ny\nz' }]);
  });

  it('no diff, no content', () => {
    expect(diffContents('/w/a.txt', '')).toEqual([]);
  });
});

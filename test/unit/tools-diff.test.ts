import { describe, expect, it } from 'vitest';
import { fileChange } from '../../src/core/tools/diff.js';

describe('fileChange', () => {
  it('counts added and removed lines and produces a unified diff', () => {
    const d = fileChange('/ws/a.txt', 'one\ntwo\nthree\n', 'one\nTWO\nthree\nfour\n');
    expect(d.type).toBe('fileChange');
    expect(d.path).toBe('/ws/a.txt');
    expect(d.linesAdded).toBe(2);
    expect(d.linesRemoved).toBe(1);
    expect(d.diff).toContain('--- /ws/a.txt');
    expect(d.diff).toContain('+++ /ws/a.txt');
    expect(d.diff).toContain('@@ -1,3 +1,4 @@');
    expect(d.diff).toContain('-two\n+TWO\n');
    expect(d.diff).toContain('+four\n');
  });

  it('treats a new file as all additions', () => {
    const d = fileChange('/ws/new.txt', '', 'a\nb\nc\n');
    expect(d.linesAdded).toBe(3);
    expect(d.linesRemoved).toBe(0);
  });

  it('is empty for identical content', () => {
    const d = fileChange('/ws/same.txt', 'x\n', 'x\n');
    expect(d).toMatchObject({ linesAdded: 0, linesRemoved: 0, diff: '' });
  });

  it('does not count the "No newline at end of file" marker as a change', () => {
    const d = fileChange('/ws/a.txt', 'a\nb', 'a\nc');
    expect(d.linesAdded).toBe(1);
    expect(d.linesRemoved).toBe(1);
    expect(d.diff).toContain('\\ No newline at end of file');
  });
});

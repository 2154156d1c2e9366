/**
 * The text helpers of inline completion and rewrite (src/core/assist/text.ts): where the cursor
 * splits a document, the code in a model's answer (ECA's `normalize-code-result` order,
 * eca src/eca/shared.clj), and the window of a long file.
 */
import { describe, expect, it } from 'vitest';
import { codeOf, fileWindow, splitAt } from '../../src/core/assist/text.js';

describe('splitAt', () => {
  it('splits at a 0-based line and character', () => {
    expect(splitAt('ab\ncd\n', 1, 1)).toEqual({ prefix: 'ab\nc', suffix: 'd\n' });
    expect(splitAt('ab\ncd', 0, 0)).toEqual({ prefix: '', suffix: 'ab\ncd' });
  });

  it('clamps a character past the line to its end (before a CRLF) and a line past the document to its end', () => {
    expect(splitAt('ab\r\ncd', 0, 9)).toEqual({ prefix: 'ab', suffix: '\r\ncd' });
    expect(splitAt('ab\ncd', 7, 0)).toEqual({ prefix: 'ab\ncd', suffix: '' });
    expect(splitAt('', 0, 3)).toEqual({ prefix: '', suffix: '' });
  });
});

describe('codeOf', () => {
  it('takes the code out of a fenced answer, single backticks, or the first fenced block', () => {
    expect(codeOf('```ts\nconst a = 1;\n```')).toBe('const a = 1;');
    expect(codeOf('  `x + 1`  ')).toBe('x + 1');
    expect(codeOf('Here it is:\n```\nfoo()\n```\nDone.')).toBe('foo()');
  });

  it('leaves an answer without fences as it is (whitespace included)', () => {
    expect(codeOf('  return a + b;\n')).toBe('  return a + b;\n');
    expect(codeOf('')).toBe('');
  });
});

describe('fileWindow', () => {
  const file = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join('\n');

  it('keeps a file within the limit whole', () => {
    expect(fileWindow(file, 5, 20)).toBe(file);
  });

  it('cuts a longer file to the limit around the line, kept inside the file at both ends', () => {
    expect(fileWindow(file, 10, 4)).toBe('[file truncated: lines 8-11 of 20]\nl8\nl9\nl10\nl11');
    expect(fileWindow(file, 1, 4)).toBe('[file truncated: lines 1-4 of 20]\nl1\nl2\nl3\nl4');
    expect(fileWindow(file, 20, 4)).toBe('[file truncated: lines 17-20 of 20]\nl17\nl18\nl19\nl20');
  });
});

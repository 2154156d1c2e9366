/**
 * The text helpers of inline completion and rewrite (src/core/assist/text.ts): where the cursor
 * splits a document, the code in a model's answer (ECA's `normalize-code-result` order,
 * eca src/eca/shared.clj), and the window of a long file.
 */
import { describe, expect, it } from 'vitest';
import { codeOf, fileWindow, headOf, splitAt, tailOf } from '../../src/core/assist/text.js';

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

  it('counts characters as code points, as eca-emacs sends them: an emoji is one, and its surrogate pair is never split', () => {
    // "😀" is two UTF-16 units; eca-emacs's column after it is 1.
    expect(splitAt('a😀b\nx', 0, 2)).toEqual({ prefix: 'a😀', suffix: 'b\nx' });
    expect(splitAt('x\n😀😀=1', 1, 1)).toEqual({ prefix: 'x\n😀', suffix: '😀=1' });
    expect(splitAt('😀\n', 0, 5)).toEqual({ prefix: '😀', suffix: '\n' });
    // A lone surrogate (broken text) counts as one character.
    expect(splitAt('\ud83dab', 0, 1)).toEqual({ prefix: '\ud83d', suffix: 'ab' });
  });
});

describe('codeOf', () => {
  it('takes the code out of a fenced answer, single backticks, or the first fenced block', () => {
    expect(codeOf('```ts\nconst a = 1;\n```')).toBe('const a = 1;');
    expect(codeOf('  `x + 1`  ')).toBe('x + 1');
    expect(codeOf('Here it is:\n```\nfoo()\n```\nDone.')).toBe('foo()');
  });

  it('the first fenced block: the language line may hold anything, a lone CR ends no opener line, an unclosed block is no block', () => {
    expect(codeOf('x ```py\r\nA\r\n``` y ```\nB\n```')).toBe('A');
    expect(codeOf('x ```a\rb ```\nC\n``` y')).toBe('C');
    expect(codeOf('see ```a```b\nbody\n``` z')).toBe('body');
    expect(codeOf('x ```\nno end')).toBe('x ```\nno end');
    expect(codeOf('x ``` no newline ```')).toBe('x ``` no newline ```');
  });

  it('agrees with the pattern it replaced on every short mix of fences, newlines and text', () => {
    const OLD_FIRST = /```[^\r\n]*\r?\n([\s\S]*?)\r?\n?```/;
    const parts = ['```', '`', '\n', '\r', 'a', ' '];
    const all = (n: number): string[] => (n === 0 ? [''] : all(n - 1).flatMap((s) => parts.map((p) => s + p)));
    // Prefixed with text so the whole-answer patterns do not take them first.
    for (const tail of all(5)) {
      const answer = `x${tail}`;
      const m = OLD_FIRST.exec(answer);
      const old = /^\s*```[^\r\n]*\r?\n([\s\S]*?)\r?\n?```\s*$/.exec(answer) ?? /^\s*`([\s\S]*?)`\s*$/.exec(answer) ?? m;
      expect(codeOf(answer), JSON.stringify(answer)).toBe(old ? old[1].trim() : answer);
    }
  });

  it('a 160 KB answer of "```a" repeated (quadratic for the old pattern) is scanned to the right answer', () => {
    const answer = '```a'.repeat(40_000);
    expect(codeOf(answer)).toBe(answer);
    expect(codeOf(`${answer}\nthe code\n\`\`\``)).toBe('the code');
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

  it('bounds the window by characters too: a one-line minified file is cut around the selection, not sent whole', () => {
    const min = `${'a'.repeat(50_000)}SELECTED${'b'.repeat(50_000)}`;
    const w = fileWindow(min, 1, 2000, 1000, 50_000);
    expect(w.startsWith('[file truncated: lines 1-1 of 1, 1000 of 100008 characters]\n')).toBe(true);
    expect(w).toContain('SELECTED');
    expect(w.length).toBeLessThan(1100);
  });

  it('a character cut inside the line window lands on line ends around the selection', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i + 1} ${'x'.repeat(40)}`).join('\n');
    const w = fileWindow(text, 500, 2000, 500);
    const [head, ...body] = w.split('\n');
    expect(head).toMatch(/^\[file truncated: lines \d+-\d+ of 1000, \d+ of \d+ characters\]$/);
    expect(body.every((l) => /^line \d+ x{40}$/.test(l))).toBe(true);
    expect(body.some((l) => l.startsWith('line 500 '))).toBe(true);
    expect(body.join('\n').length).toBeLessThanOrEqual(500);
  });
});

describe('tailOf / headOf', () => {
  it('keep whole lines when the cut falls inside the text, and never split a surrogate pair', () => {
    expect(tailOf('aaa\nbb\ncc', 6)).toBe('bb\ncc');
    expect(headOf('aa\nbb\nccc', 7)).toBe('aa\nbb\n');
    expect(tailOf('😀😀😀', 3)).toBe('😀');
    expect(headOf('😀😀😀', 3)).toBe('😀');
    expect(tailOf('short', 10)).toBe('short');
  });
});

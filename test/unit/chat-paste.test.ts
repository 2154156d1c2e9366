/** The paste filter of `patchbay chat` (src/cli/chat-paste.ts), fed the way a terminal splits its input. */
import { describe, expect, it } from 'vitest';
import { normalizePaste, PasteParser, PasteStore } from '../../src/cli/chat-paste.js';

function parse(chunks: string[]): Array<[string, string]> {
  const got: Array<[string, string]> = [];
  const p = new PasteParser(
    (t) => got.push(['typed', t]),
    (t) => got.push(['paste', t]),
  );
  for (const c of chunks) p.push(c);
  p.dispose();
  return got;
}

describe('PasteParser', () => {
  it('separates typed text from a pasted block', () => {
    expect(parse(['ab\x1b[200~x\ry\x1b[201~cd'])).toEqual([
      ['typed', 'ab'],
      ['paste', 'x\ry'],
      ['typed', 'cd'],
    ]);
  });

  it('finds markers split across chunks, one byte at a time', () => {
    const input = 'a\x1b[200~one\rtwo\x1b[201~\r';
    const got = parse([...input]);
    expect(got.filter(([k]) => k === 'paste')).toEqual([['paste', 'one\rtwo']]);
    expect(
      got
        .filter(([k]) => k === 'typed')
        .map(([, t]) => t)
        .join(''),
    ).toBe('a\r');
  });

  it('lets other escape sequences through at once, and a lone Escape soon after', async () => {
    const got: string[] = [];
    const p = new PasteParser(
      (t) => got.push(t),
      () => got.push('PASTE'),
    );
    p.push('\x1b[A');
    expect(got).toEqual(['\x1b[A']); // an arrow key is not the start of a marker
    p.push('\x1b');
    expect(got).toEqual(['\x1b[A']); // could be the start of one: held back…
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual(['\x1b[A', '\x1b']); // …not for long
    p.dispose();
  });
});

describe('paste text', () => {
  it('normalizes line breaks, drops control characters and the trailing break', () => {
    expect(normalizePaste('a\r\nb\rc\x03\x1b\td\n\n')).toBe('a\nb\nc\td');
  });

  it('expands placeholders to their blocks, and leaves unknown ones', () => {
    const s = new PasteStore();
    const ph = s.add('one\ntwo');
    expect(ph).toBe('[paste #1: 2 lines]');
    expect(s.expand(`see ${ph} and [paste #9: 2 lines]`)).toBe('see one\ntwo and [paste #9: 2 lines]');
  });
});

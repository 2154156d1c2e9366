import { describe, expect, it } from 'vitest';
import { incrementalChange } from '../../src/peers/lsp/documents.js';

/** Applies an LSP range edit the way a server does: positions are UTF-16 offsets within lines. */
function apply(text: string, change: ReturnType<typeof incrementalChange>): string {
  const offset = (pos: { line: number; character: number }) => {
    let line = 0;
    let i = 0;
    while (line < pos.line) {
      const c = text.charCodeAt(i);
      if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) line++;
      i++;
    }
    return i + pos.character;
  };
  return text.slice(0, offset(change.range.start)) + change.text + text.slice(offset(change.range.end));
}

describe('incremental didChange', () => {
  const cases: Array<[string, string, string]> = [
    ['one word changed', 'const n: number = 1;\nexport {};\n', 'const n: number = "x";\nexport {};\n'],
    ['insertion at the end', 'a\nb\n', 'a\nb\nc\n'],
    ['deletion in the middle', 'line1\nline2\nline3\n', 'line1\nline3\n'],
    ['emoji before the change', 'const s = "☕🎉"; let x = 1;\n', 'const s = "☕🎉"; let x = 2;\n'],
    ['surrogate pair replaced', 'a🎉b', 'a😀b'],
    ['CRLF line ends', 'x = 1\r\ny = 2\r\n', 'x = 1\r\ny = 3\r\n'],
    ['everything replaced', 'abc', 'xyz'],
    ['no change', 'same', 'same'],
  ];
  it.each(cases)('%s: applying the edit yields the new text', (_name, prev, next) => {
    const change = incrementalChange(prev, next);
    expect(apply(prev, change)).toBe(next);
  });

  it('is minimal: only the changed span is sent', () => {
    const change = incrementalChange('const n: number = 1;\nexport {};\n', 'const n: number = 2;\nexport {};\n');
    expect(change).toEqual({ range: { start: { line: 0, character: 18 }, end: { line: 0, character: 19 } }, text: '2' });
  });
});

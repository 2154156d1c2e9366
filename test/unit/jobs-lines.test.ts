/** A job's output cut into lines (src/core/jobs/lines.ts): line ends, progress bars, caps. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../src/core/jobs/lines.js';

async function lines(chunks: string[], max = 100): Promise<string[]> {
  const out: string[] = [];
  const s = new PassThrough();
  readLines(s, max, (l) => out.push(l));
  for (const c of chunks) s.write(c);
  s.end();
  await new Promise((r) => s.once('end', r));
  return out;
}

describe('readLines', () => {
  it('a lone \\r ends a line (a progress bar); \\r\\n is one line end, also split across chunks', async () => {
    expect(await lines(['10%\r50%\r100%\ndone\n'])).toEqual(['10%', '50%', '100%', 'done']);
    expect(await lines(['a\r\nb\r', '\nc\r', 'd'])).toEqual(['a', 'b', 'c', 'd']);
    expect(await lines(['x\r', '\r', 'y'])).toEqual(['x', '', 'y']);
  });

  it('cuts a long line at max and drops its rest up to the line end, \\r included', async () => {
    expect(await lines(['0123456789abc\rnext\n'], 10)).toEqual(['0123456789…', 'next']);
    expect(await lines(['é'.repeat(3), '\n'])).toEqual(['ééé']);
  });
});

/**
 * A job's output stream cut into lines. Unlike `util/capped-lines.ts`, a line reaching `max`
 * characters is handed on at once (marked "…") and the rest of it, up to the next line end, is
 * dropped: a job printing one line that never ends (`tr` over /dev/zero) shows its start instead
 * of nothing, and holds at most `max` characters. A lone `\r` ends a line too (a progress bar
 * redraws itself with it), `\r\n` is one line end, even split across two chunks.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export function readLines(input: Readable, max: number, onLine: (line: string) => void): void {
  const decoder = new StringDecoder('utf8');
  let cur = '';
  /** The current line was already handed on cut: drop until its line end. */
  let skipping = false;
  /** The last chunk ended in `\r`: a `\n` opening the next one belongs to it. */
  let afterCr = false;
  // A line is a slice of its chunk (or a concatenation of slices): kept as is, each of the 2000
  // lines a ring holds could pin a 64 KB chunk. A copy through bytes holds only its own characters.
  const emit = (line: string): void => onLine(Buffer.from(line, 'utf8').toString('utf8'));
  const take = (text: string): void => {
    let start = 0;
    if (afterCr && text.startsWith('\n')) start = 1;
    afterCr = false;
    for (;;) {
      const end = lineEnd(text, start);
      if (!skipping) {
        const piece = text.slice(start, end < 0 ? text.length : end);
        const room = max - cur.length;
        if (piece.length > room) {
          emit(`${cur}${piece.slice(0, room)}…`);
          cur = '';
          skipping = true;
        } else cur += piece;
      }
      if (end < 0) return;
      if (!skipping) emit(cur);
      cur = '';
      skipping = false;
      start = end + 1;
      if (text[end] === '\r') {
        if (end + 1 === text.length) afterCr = true;
        else if (text[end + 1] === '\n') start++;
      }
    }
  };
  input.on('data', (chunk: Buffer | string) => take(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
  input.once('end', () => {
    take(decoder.end());
    if (cur) emit(cur);
    cur = '';
  });
}

/** The index of the first `\n` or `\r` from `from`, or -1. */
function lineEnd(text: string, from: number): number {
  const nl = text.indexOf('\n', from);
  const cr = text.indexOf('\r', from);
  if (cr < 0) return nl;
  return nl < 0 ? cr : Math.min(nl, cr);
}

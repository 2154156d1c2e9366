/**
 * Lines of a text stream with a cap on each line's length: what a line has past `max`
 * characters is dropped (the line is marked with "…"), so a child that writes megabytes
 * without a newline costs `max` characters of memory. (readline keeps the whole line.)
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** Calls `onLine` for each line (without its line end); resolves once the stream has ended or closed. */
export function cappedLines(input: Readable, max: number, onLine: (line: string) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let cur = '';
  let cut = false;
  const emit = () => {
    const line = cur.endsWith('\r') ? cur.slice(0, -1) : cur;
    cur = '';
    const wasCut = cut;
    cut = false;
    onLine(wasCut ? `${line}…` : line);
  };
  const take = (text: string) => {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      const piece = text.slice(start, nl < 0 ? text.length : nl);
      if (!cut) {
        const room = max - cur.length;
        if (piece.length > room) {
          cur += piece.slice(0, room);
          cut = true;
        } else cur += piece;
      }
      if (nl < 0) return;
      emit();
      start = nl + 1;
    }
  };
  input.on('data', (chunk: Buffer | string) => take(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
  return new Promise((resolve) => {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      take(decoder.end());
      if (cur || cut) emit();
      resolve();
    };
    input.once('end', end);
    input.once('close', end);
    input.once('error', end);
  });
}

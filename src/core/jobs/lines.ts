/**
 * A job's output stream cut into lines. Unlike `util/capped-lines.ts`, a line reaching `max`
 * characters is handed on at once (marked "…") and the rest of it, up to the next newline, is
 * dropped: a job printing one line that never ends (a progress bar, `tr` over /dev/zero) shows
 * its start instead of nothing, and holds at most `max` characters.
 */
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export function readLines(input: Readable, max: number, onLine: (line: string) => void): void {
  const decoder = new StringDecoder('utf8');
  let cur = '';
  /** The current line was already handed on cut: drop until its newline. */
  let skipping = false;
  const take = (text: string): void => {
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (!skipping) {
        const piece = text.slice(start, nl < 0 ? text.length : nl);
        const room = max - cur.length;
        if (piece.length > room) {
          onLine(`${cur}${piece.slice(0, room)}…`);
          cur = '';
          skipping = true;
        } else cur += piece;
      }
      if (nl < 0) return;
      if (!skipping) onLine(cur.endsWith('\r') ? cur.slice(0, -1) : cur);
      cur = '';
      skipping = false;
      start = nl + 1;
    }
  };
  input.on('data', (chunk: Buffer | string) => take(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
  input.once('end', () => {
    take(decoder.end());
    if (cur) onLine(cur);
    cur = '';
  });
}

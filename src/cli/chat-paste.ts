/**
 * Bracketed paste for interactive `patchbay chat`: a pasted block is one message, not one prompt
 * per line. With mode 2004 on (`\x1b[?2004h`), the terminal wraps a paste in `\x1b[200~` …
 * `\x1b[201~` (https://invisible-island.net/xterm/ctlseqs/ctlseqs.html, "Bracketed Paste Mode").
 * Node's readline names those markers as keys but still turns every pasted CR into Enter, so the
 * paste is taken out of the byte stream before readline sees it: a one-line paste is typed in
 * as text; a longer one is kept here and stands in the line as `[paste #n: k lines]`, replaced
 * by the text when the line is sent (the REPL prints the block above the prompt).
 */
import { PassThrough } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { withoutControlChars } from '../util/text.js';

export const PASTE_MODE_ON = '\x1b[?2004h';
export const PASTE_MODE_OFF = '\x1b[?2004l';
const START = '\x1b[200~';
const END = '\x1b[201~';
/** A held-back partial marker (a lone ESC key) is let through after this long. */
const PARTIAL_MS = 40;

/** The length of the longest tail of `s` that is a proper prefix of `marker`. */
function partialTail(s: string, marker: string): number {
  for (let k = Math.min(marker.length - 1, s.length); k > 0; k--) if (s.endsWith(marker.slice(0, k))) return k;
  return 0;
}

/** Splits terminal input into typed text and pasted blocks; markers may arrive split across chunks. */
export class PasteParser {
  private pasting = false;
  private block = '';
  private held = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly onTyped: (text: string) => void,
    private readonly onPaste: (text: string) => void,
  ) {}

  push(chunk: string): void {
    clearTimeout(this.timer);
    let s = this.held + chunk;
    this.held = '';
    while (s) {
      const marker = this.pasting ? END : START;
      const i = s.indexOf(marker);
      if (i < 0) {
        const keep = partialTail(s, marker);
        this.take(s.slice(0, s.length - keep));
        this.held = s.slice(s.length - keep);
        // Outside a paste a held ESC is most likely the Escape key: do not sit on it.
        if (this.held && !this.pasting) this.timer = setTimeout(() => this.flush(), PARTIAL_MS);
        return;
      }
      this.take(s.slice(0, i));
      s = s.slice(i + marker.length);
      if (this.pasting) {
        const text = this.block;
        this.block = '';
        this.pasting = false;
        this.onPaste(text);
      } else this.pasting = true;
    }
  }

  private take(text: string): void {
    if (!text) return;
    if (this.pasting) this.block += text;
    else this.onTyped(text);
  }

  private flush(): void {
    const held = this.held;
    this.held = '';
    this.take(held);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }
}

/** A paste as text: CR / CRLF line breaks as LF, no trailing line break, no control characters but tab. */
export function normalizePaste(raw: string): string {
  return withoutControlChars(raw.replace(/\r\n?/g, '\n'), { keepNewlines: true }).replace(/\n+$/, '');
}

const PLACEHOLDER = /\[paste #(\d+): \d+ lines\]/g;

/** Pasted blocks of a session, by number, for the placeholders in typed lines. */
export class PasteStore {
  private readonly blocks = new Map<number, string>();
  private next = 1;

  /** The placeholder standing for `text` (several lines) in the line being edited. */
  add(text: string): string {
    const n = this.next++;
    this.blocks.set(n, text);
    return `[paste #${n}: ${text.split('\n').length} lines]`;
  }

  /** The line with each placeholder replaced by its block (unknown ones stay as typed). */
  expand(line: string): string {
    return line.replace(PLACEHOLDER, (whole, n: string) => this.blocks.get(Number(n)) ?? whole);
  }
}

export interface TtyInput {
  /** What readline reads: the terminal's input without pasted blocks. */
  input: NodeJS.ReadableStream & { isTTY: true; setRawMode(mode: boolean): unknown; isRaw: boolean };
  dispose(): void;
}

/**
 * Puts a PasteParser between the terminal and readline. `onPaste` gets each pasted block and
 * returns the text readline receives instead (typed in, as if by keys).
 */
export function pasteFilteredInput(stdin: NodeJS.ReadStream, onPaste: (raw: string) => string): TtyInput {
  const out = new PassThrough({ encoding: 'utf8' });
  const decoder = new StringDecoder('utf8');
  const parser = new PasteParser(
    (text) => out.write(text),
    (raw) => {
      const text = onPaste(raw);
      if (text) out.write(text);
    },
  );
  const onData = (d: Buffer | string) => parser.push(typeof d === 'string' ? d : decoder.write(d));
  stdin.on('data', onData);
  // A readline that asked something before (the trust question, chat-trust.ts) paused stdin as it
  // closed, and a 'data' listener does not resume a stream paused on purpose: no key would arrive.
  stdin.resume();
  // readline switches raw mode on and off through its input: pass that to the terminal.
  stdin.once('end', () => out.end());
  const input = Object.defineProperties(out, {
    isTTY: { value: true },
    setRawMode: { value: (mode: boolean) => stdin.setRawMode(mode) },
    isRaw: { get: () => stdin.isRaw },
  }) as unknown as TtyInput['input'];
  return {
    input,
    dispose() {
      parser.dispose();
      stdin.off('data', onData);
      stdin.pause();
      out.end();
    },
  };
}

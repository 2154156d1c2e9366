/**
 * The terminal side of `patchbay chat`: where text goes (stdout for the transcript, stderr for
 * status), colors (only on a TTY and without NO_COLOR), line tracking so status lines never land
 * in the middle of streamed text, and a one-line spinner on stderr.
 */

export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** https://no-color.org: set and not empty disables colors. */
export function colorAllowed(stream: OutStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return !!stream.isTTY && !env.NO_COLOR;
}

export type Style = 'dim' | 'bold' | 'red' | 'green' | 'yellow' | 'cyan' | 'magenta';
const CODES: Record<Style, [number, number]> = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  magenta: [35, 39],
};

export class Term {
  readonly outColor: boolean;
  readonly errColor: boolean;
  /** stdout and stderr are the same terminal: they share one cursor. */
  private readonly shared: boolean;
  private bol = { out: true, err: true };
  private spinner: { text: string; frame: number; timer: NodeJS.Timeout } | undefined;
  /** Questions on screen now: while any is, the status line stays off (its redraw would erase them). */
  private questions = 0;

  constructor(
    readonly stdout: OutStream = process.stdout,
    readonly stderr: OutStream = process.stderr,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.outColor = colorAllowed(stdout, env);
    this.errColor = colorAllowed(stderr, env);
    this.shared = !!stdout.isTTY && !!stderr.isTTY;
  }

  /** Whether the spinner / transient status line can be drawn. */
  get live(): boolean {
    return !!this.stderr.isTTY;
  }

  paint(style: Style, text: string, stream: 'out' | 'err' = 'out'): string {
    if (!(stream === 'out' ? this.outColor : this.errColor) || !text) return text;
    const [on, off] = CODES[style];
    // Re-open the style after each newline so pagers and line-based terminals keep it.
    return `\x1b[${on}m${text.replace(/\n/g, `\x1b[${off}m\n\x1b[${on}m`)}\x1b[${off}m`;
  }

  private key(stream: 'out' | 'err'): 'out' | 'err' {
    return this.shared ? 'out' : stream;
  }

  private raw(stream: 'out' | 'err', text: string): void {
    if (!text) return;
    this.clearStatus();
    (stream === 'out' ? this.stdout : this.stderr).write(text);
    const plain = text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    if (plain) this.bol[this.key(stream)] = plain.endsWith('\n');
  }

  /** Streamed transcript text (no newline added). */
  out(text: string): void {
    this.raw('out', text);
  }

  /** A whole transcript line, starting on a fresh line. */
  outLine(text: string): void {
    this.newline('out');
    this.raw('out', `${text}\n`);
  }

  err(text: string): void {
    this.raw('err', text);
  }

  errLine(text: string): void {
    this.newline('err');
    this.raw('err', `${text}\n`);
  }

  /** Ends a partial line, if any. */
  newline(stream: 'out' | 'err' = 'out'): void {
    if (!this.bol[this.key(stream)]) this.raw(stream, '\n');
  }

  /** Shows (or replaces) the transient status line on stderr; `undefined` clears it. */
  status(text: string | undefined): void {
    if (!this.live) return;
    if (text === undefined || this.questions) return this.clearStatus();
    if (!this.spinner) {
      this.newline('err');
      const timer = setInterval(() => this.drawStatus(), 80);
      timer.unref();
      this.spinner = { text, frame: 0, timer };
    } else this.spinner.text = text;
    this.drawStatus();
  }

  private drawStatus(): void {
    const s = this.spinner;
    if (!s) return;
    s.frame = (s.frame + 1) % FRAMES.length;
    const width = Math.max(10, (this.stderr.columns || 80) - 3);
    const oneLine = s.text.replace(/\s+/g, ' ').trim();
    const text = oneLine.length > width ? `${oneLine.slice(0, width - 1)}…` : oneLine;
    this.stderr.write(`\r\x1b[K${this.paint('cyan', FRAMES[s.frame], 'err')} ${this.paint('dim', text, 'err')}`);
  }

  /**
   * A question (an approval, `ask_user`) is on screen until `fn` settles: the status line is cleared
   * and stays off meanwhile, since the server's "Waiting for tool call approval" would redraw it
   * every 80 ms over the question and what the user types.
   */
  async asking<T>(fn: () => Promise<T>): Promise<T> {
    this.clearStatus();
    this.questions++;
    try {
      return await fn();
    } finally {
      this.questions--;
    }
  }

  clearStatus(): void {
    if (!this.spinner) return;
    clearInterval(this.spinner.timer);
    this.spinner = undefined;
    this.stderr.write('\r\x1b[K');
  }
}

/**
 * The answers `patchbay login` reads from stdin: lines (a terminal in its cooked mode echoes and
 * edits them; a pipe gives them as they come, so tests and scripts can feed a key) and secrets,
 * which on a terminal are read in raw mode so nothing is echoed. In raw mode the terminal sends no
 * SIGINT for Ctrl-C: it arrives as a byte, and reading stops with `InputCancelled`.
 */
export class InputCancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

export class StdinAnswers {
  private buf = '';
  private ended = false;
  private wake: (() => void) | undefined;
  private rawMode = false;

  constructor(private readonly input: NodeJS.ReadStream = process.stdin) {
    input.setEncoding('utf8');
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    // A closed or broken stdin is the end of the answers, not a crash.
    input.on('error', this.onEnd);
    input.pause();
  }

  private readonly onData = (d: string): void => {
    this.buf += d;
    this.wake?.();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.wake?.();
  };

  /** Waits for more input; false at the end of it. Paused in between, so an idle stdin keeps nothing running. */
  private async more(): Promise<boolean> {
    if (this.ended) return false;
    this.input.resume();
    await new Promise<void>((r) => (this.wake = r));
    this.wake = undefined;
    this.input.pause();
    return true;
  }

  /** The next line (without its line ending); undefined at the end of the input. */
  async line(): Promise<string | undefined> {
    for (;;) {
      const nl = this.buf.indexOf('\n');
      if (nl >= 0) {
        const line = this.buf.slice(0, nl).replace(/\r$/, '');
        this.buf = this.buf.slice(nl + 1);
        return line;
      }
      if (!(await this.more())) {
        const rest = this.buf;
        this.buf = '';
        return rest || undefined;
      }
    }
  }

  /** A line not echoed on a terminal (raw mode, the terminal's own echo off); a plain line from a pipe. */
  async secret(): Promise<string | undefined> {
    if (!this.input.isTTY) return this.line();
    this.input.setRawMode(true);
    this.rawMode = true;
    let typed = '';
    try {
      for (;;) {
        while (this.buf) {
          const c = this.buf[0];
          this.buf = this.buf.slice(1);
          if (c === '\r' || c === '\n') return typed;
          if (c === '\x03') throw new InputCancelled();
          if (c === '\x04') return typed || undefined;
          if (c === '\x7f' || c === '\b') typed = typed.slice(0, -1);
          else if (c === '\x15') typed = '';
          else if (c === '\x1b')
            this.buf = this.buf.replace(/^\[[0-9;?]*[~A-Za-z]/, ''); // arrow keys and the like
          else if (c >= ' ') typed += c;
        }
        if (!(await this.more())) return typed || undefined;
      }
    } finally {
      this.restore();
    }
  }

  /** Leaves the terminal as it was and lets the process exit. */
  close(): void {
    this.restore();
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onEnd);
    this.input.pause();
  }

  private restore(): void {
    if (!this.rawMode) return;
    this.rawMode = false;
    this.input.setRawMode(false);
  }
}

/**
 * Runs a program in a real pseudo-terminal (test/fixtures/pty-run.py, Python's stdlib `pty`),
 * so end-to-end tests see what a user at a terminal sees: raw mode, echo, colors, Ctrl-C, Tab.
 *
 *   const spawn = usePty();                     // in a describe: kills every pty after each test
 *   const p = spawn(process.execPath, [BIN, 'chat'], { cwd, env });
 *   await p.waitFor('> ');                      // ANSI stripped, \r\n as \n
 *   p.write(`hello${KEY.enter}`);
 *   p.write(paste('one\ntwo'));                 // bracketed paste, as a terminal sends it
 *   expect(await p.exit()).toBe(0);
 *
 * waitFor works like expect(1): it searches from a cursor, and moves the cursor past the match,
 * so successive waits read the output in order. No timing assertions: the deadline is generous.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { resolve } from 'node:path';
import { afterEach } from 'vitest';

export const PTY_RUN = resolve(import.meta.dirname, '../fixtures/pty-run.py');

/** Keys as a terminal sends them (Enter is CR, as in a real terminal). */
export const KEY = {
  enter: '\r',
  tab: '\t',
  ctrlC: '\x03',
  ctrlD: '\x04',
  escape: '\x1b',
  backspace: '\x7f',
  up: '\x1b[A',
  down: '\x1b[B',
  right: '\x1b[C',
  left: '\x1b[D',
} as const;

/**
 * `text` pasted into a terminal with bracketed paste on: the markers around it, and newlines as
 * CR (what xterm, iTerm2, GNOME Terminal and Windows Terminal send for pasted line breaks).
 */
export function paste(text: string): string {
  return `\x1b[200~${text.replace(/\r?\n/g, '\r')}\x1b[201~`;
}

// CSI (with private/intermediate bytes), OSC (ended by BEL or ST), and two-byte escapes.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '');
}

export interface PtyOptions {
  cwd?: string;
  /** The whole environment of the program (nothing is inherited). TERM defaults to xterm-256color. */
  env?: Record<string, string>;
  cols?: number;
  rows?: number;
}

export interface WaitOptions {
  /** Default 15 s. */
  timeoutMs?: number;
  /** Where in text() to start looking (default: the cursor, just past the previous match). */
  from?: number;
}

export class Pty {
  private readonly child: ChildProcessWithoutNullStreams;
  /** Everything the program wrote, unchanged. */
  raw = '';
  /** Position in text() where the next waitFor starts. */
  cursor = 0;
  readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;
  private waiters = new Set<() => void>();

  constructor(command: string, args: string[], opts: PtyOptions = {}) {
    const env = { TERM: 'xterm-256color', ...(opts.env ?? { PATH: process.env.PATH ?? '' }) };
    this.child = spawn('python3', [PTY_RUN, '--cols', String(opts.cols ?? 100), '--rows', String(opts.rows ?? 30), '--', command, ...args], {
      cwd: opts.cwd,
      env,
      stdio: 'pipe',
    });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => {
      this.raw += d;
      for (const w of [...this.waiters]) w();
    });
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => (this.raw += d)); // pty-run.py's own errors
    this.child.stdin.on('error', () => {}); // EPIPE after the program exited
    this.exited = new Promise((res) => {
      // 'close', not 'exit': by then all its output has arrived.
      this.child.once('close', (code) => {
        this.exitCode = code; // null: pty-run.py itself was killed by a signal
        res(this.exitCode);
        for (const w of [...this.waiters]) w();
      });
    });
  }

  /** The output so far, ANSI stripped and with CRLF as LF. */
  text(): string {
    return stripAnsi(this.raw).replace(/\r+\n/g, '\n');
  }

  /** The output from `from` (default: the cursor) on. */
  since(from = this.cursor): string {
    return this.text().slice(from);
  }

  get alive(): boolean {
    return this.exitCode === undefined;
  }

  /** Types `data` (keys, text, paste(...)). */
  write(data: string): void {
    this.child.stdin.write(data);
  }

  /** Waits until text() matches after the cursor; moves the cursor past the match and returns it. */
  waitFor(match: string | RegExp, opts: WaitOptions = {}): Promise<RegExpExecArray> {
    const from = opts.from ?? this.cursor;
    const re = typeof match === 'string' ? new RegExp(match.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : new RegExp(match.source, match.flags.replace('g', ''));
    return new Promise((res, reject) => {
      const check = (): boolean => {
        const text = this.text();
        const m = re.exec(text.slice(from));
        if (m) {
          m.index += from;
          this.cursor = m.index + m[0].length;
          res(m);
          return true;
        }
        if (!this.alive) {
          reject(new Error(`the program exited (code ${this.exitCode}) before ${re} appeared; output after the cursor:\n${text.slice(from).slice(-3000)}`));
          return true;
        }
        return false;
      };
      if (check()) return;
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`timed out waiting for ${re}; output after the cursor:\n${this.text().slice(from).slice(-3000)}`));
      }, opts.timeoutMs ?? 15_000);
      const waiter = () => {
        if (check()) {
          clearTimeout(timer);
          this.waiters.delete(waiter);
        }
      };
      this.waiters.add(waiter);
    });
  }

  /** Waits for the program to exit (fails after `timeoutMs`); resolves with its exit code. */
  async exit(timeoutMs = 15_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.exited,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the program did not exit; output:\n${this.text().slice(-3000)}`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops it: SIGTERM to the program's group (pty-run.py passes it on), SIGKILL if it lingers. */
  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 5_000)))]);
    clearTimeout(timer);
    if (!gone) {
      // The pty closes with pty-run.py, which hangs up the terminal: the program gets SIGHUP.
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

/** Starts a program in a pty; it is killed when the test ends. */
export function spawnPty(command: string, args: string[], opts: PtyOptions = {}): Pty {
  const p = new Pty(command, args, opts);
  live.add(p);
  void p.exited.then(() => live.delete(p));
  return p;
}

const live = new Set<Pty>();

/** Registers an afterEach that kills every pty the test started; returns spawnPty. */
export function usePty(): typeof spawnPty {
  afterEach(async () => {
    await Promise.all([...live].map((p) => p.kill()));
  });
  return spawnPty;
}

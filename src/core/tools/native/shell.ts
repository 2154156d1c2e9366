/**
 * Running one shell command as a tool call: its own process group (so every process it starts
 * can be stopped together), combined output kept within a budget, and a hard stop on timeout
 * or cancellation. Invariants:
 * - the returned promise always settles, and never rejects;
 * - on timeout or abort the whole group gets SIGTERM, then SIGKILL after KILL_GRACE_MS;
 * - processes the command leaves running in the background are stopped when it exits
 *   (ARCHITECTURE.md "Rules of the house": every process patchbay starts is stopped).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { notice } from '../../../util/fs-util.js';
import { withAgentEnv } from '../../tool-calls/agent-env.js';
import type { Argv } from '../../../util/sandbox.js';

export const KILL_GRACE_MS = 500;
/** After the shell exits, how long its stdio may stay open before it is abandoned. */
const CLOSE_WAIT_MS = KILL_GRACE_MS + 1500;

export interface ShellRun {
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Background processes were still running when the command exited, and were stopped. */
  strays: boolean;
  spawnError?: string;
}

export interface ShellRunOptions {
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  maxOutputChars: number;
  /** The chat that runs it: `ECA_CHAT_ID` / `PATCHBAY_CHAT_ID` (core/tool-calls/agent-env.ts). */
  chatId?: string;
  /** The environment it starts from (the host's: runtime/host-core.ts); the process's own without it. */
  env?: NodeJS.ProcessEnv;
  /** Starts the shell inside the OS sandbox (util/sandbox.ts `SandboxPlan.wrap`); unsandboxed without. */
  wrap?: WrapArgv;
}

/** Turns a program and its arguments into the ones that run it elsewhere (the OS sandbox), in `cwd`. */
export type WrapArgv = (argv: Argv, cwd: string) => Argv;

const isWindows = process.platform === 'win32';

export function runShell(command: string, opts: ShellRunOptions): Promise<ShellRun> {
  return new Promise((settle) => {
    const out = new OutputBuffer(opts.maxOutputChars);
    const child = spawnShell(command, opts.cwd, opts.chatId, opts.env, opts.wrap);

    let timedOut = false;
    let aborted = false;
    let strays = false;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let done = false;
    const timers: NodeJS.Timeout[] = [];

    const finish = (spawnError?: string): void => {
      if (done) return;
      done = true;
      timers.forEach(clearTimeout);
      opts.signal.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      settle({
        output: out.text(),
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        timedOut,
        aborted,
        strays,
        spawnError,
      });
    };
    const stop = (): void => {
      killGroup(child, 'SIGTERM');
      // Not cleared by finish: a process ignoring SIGTERM must not outlive the call.
      setTimeout(() => killGroup(child, 'SIGKILL'), KILL_GRACE_MS).unref();
    };
    const onAbort = (): void => {
      if (exit || aborted) return;
      aborted = true;
      stop();
    };

    for (const stream of [child.stdout, child.stderr]) {
      const decoder = new StringDecoder('utf8');
      stream?.on('data', (b: Buffer) => out.push(decoder.write(b)));
      stream?.on('end', () => out.push(decoder.end()));
      stream?.on('error', () => {});
    }
    child.on('error', (err) => finish(err.message));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (!isWindows && child.pid && groupAlive(child.pid)) {
        // In the sandbox the kernel stops what is left with its pid namespace (its own first process may still be going).
        strays = !timedOut && !aborted && !opts.wrap;
        stop();
      }
      timers.push(setTimeout(() => finish(), CLOSE_WAIT_MS));
    });
    child.on('close', () => finish());

    timers.push(
      setTimeout(
        () => {
          if (exit || aborted) return;
          timedOut = true;
          stop();
        },
        Math.min(opts.timeoutMs, 2 ** 31 - 1),
      ),
    );
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The command under the system shell, in its own process group (not on Windows), with no input
 * and its output piped: the one way a foreground call and a background job start a command, so
 * both get the same shell, environment (patchbay's, with core/tool-calls/agent-env.ts's variables for the
 * chat that runs it) and working directory.
 */
export function spawnShell(command: string, cwd: string, chatId?: string, base?: NodeJS.ProcessEnv, wrap?: WrapArgv): ChildProcess {
  const shell = shellArgv(command);
  const env = withAgentEnv(chatId, base);
  if (wrap && !isWindows) {
    const run = wrap(shell, cwd);
    return spawn(run.command, run.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  }
  return isWindows
    ? spawn(shell.command, ['/d', '/s', '/c', `"${command}"`], {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsVerbatimArguments: true,
        windowsHide: true,
      })
    : spawn(shell.command, shell.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
}

/**
 * The program and arguments that run a command line under the same shell as `spawnShell`, for a
 * runner that starts it elsewhere (the editor's terminal, ACP `terminal/create`). On Windows the
 * line is one argument: whoever spawns it quotes it (cmd's own `/s /c "…"` quoting needs verbatim
 * arguments, which a remote runner cannot be asked for).
 */
export function shellArgv(line: string): { command: string; args: string[] } {
  return isWindows ? { command: process.env.ComSpec ?? 'cmd.exe', args: ['/d', '/s', '/c', line] } : { command: '/bin/sh', args: ['-c', line] };
}

export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid) return;
  if (isWindows) {
    // taskkill /T walks the process tree, the nearest Windows has to a process group.
    spawn('taskkill', ['/pid', String(child.pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true }).on('error', () => {});
    return;
  }
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * Keeps the first and last parts of a stream of text within `max` characters in all, so a
 * command printing gigabytes costs bounded memory, and reports how much was cut.
 */
export class OutputBuffer {
  private head = '';
  private tail: string[] = [];
  private tailLength = 0;
  private total = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(private readonly max: number) {
    this.headMax = Math.floor(max / 2);
    this.tailMax = max - this.headMax;
  }

  push(s: string): void {
    if (!s) return;
    this.total += s.length;
    if (this.head.length < this.headMax) {
      const room = this.headMax - this.head.length;
      this.head += s.slice(0, room);
      s = s.slice(room);
      if (!s) return;
    }
    this.tail.push(s);
    this.tailLength += s.length;
    while (this.tail.length > 1 && this.tailLength - this.tail[0].length >= this.tailMax) {
      this.tailLength -= this.tail.shift()!.length;
    }
  }

  text(): string {
    let tail = this.tail.join('');
    if (this.total <= this.max) return this.head + tail;
    if (tail.length > this.tailMax) tail = tail.slice(tail.length - this.tailMax);
    const cut = this.total - this.head.length - tail.length;
    return (
      `${this.head}\n\n` +
      notice(
        `output truncated: ${cut} of ${this.total} characters cut from the middle; showing the first ${this.head.length} and the last ${tail.length}. ` +
          'To see all of it, redirect the output to a file and search it with grep or read_file.',
      ) +
      `\n\n${tail}`
    );
  }
}

/**
 * Runs one hook action: a shell script with the event as JSON on stdin, as ECA does
 * (eca features/hooks.clj `run-shell-cmd`, tools/shell.clj `start-shell-process!`: `bash -c
 * <shell>` or `bash <file>`, in the first workspace folder). The process gets its own process
 * group so a timeout, a stop or shutdown kills everything it started, never just the shell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { killGroup } from '../tools/native/shell.js';
import type { Argv } from '../../util/sandbox.js';

/** ECA's default per-action timeout (hooks.clj `default-hook-timeout-ms`). */
export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
/**
 * Output kept: a hook printing without end costs bounded memory. stdout's cap leaves room for a
 * postToolCall `replacedOutput` of a large tool result (cut, it would no longer parse and the
 * unredacted result would go on); stderr is only ever a message.
 */
export const MAX_STDOUT_CHARS = 8 * 1024 * 1024;
const MAX_STDERR_CHARS = 256 * 1024;
/**
 * After the shell exits, how long its pipes may stay open (a child it left in the background
 * holding them) before the output read so far is taken as all of it and that child is killed:
 * holding our pipes, it belongs to this run, and in its own process group it would outlive
 * patchbay. (A child that let go of the pipes, `cmd >/dev/null 2>&1 &`, is left to run.)
 */
const PIPE_GRACE_MS = 200;

export interface ActionRun {
  /** The exit code; 1 when it timed out, was stopped, or could not start (as ECA reports those). */
  exit: number;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  /** stdout went past MAX_STDOUT_CHARS: the rest was dropped. */
  truncated?: boolean;
}

export interface RunActionOptions {
  script: { shell: string } | { file: string };
  cwd: string;
  input: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** Told of each process started and ended (the owner kills what is left at shutdown). */
  track?: { started(child: ChildProcess): void; ended(child: ChildProcess): void };
  /** Runs it in the OS sandbox: `bash …` becomes `bwrap … -- bash …` (a hook from a workspace's own config). */
  wrap?: (argv: Argv, cwd: string) => Argv;
}

export function runAction(opts: RunActionOptions): Promise<ActionRun> {
  const bash: Argv = { command: 'bash', args: 'shell' in opts.script ? ['-c', opts.script.shell] : [opts.script.file] };
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      // bwrap leads the process group: killing the group kills it, and its pid namespace goes with it.
      const { command, args } = opts.wrap ? opts.wrap(bash, opts.cwd) : bash;
      child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    } catch (e) {
      resolve({ exit: 1, stdout: '', stderr: `Hook could not start: ${e instanceof Error ? e.message : String(e)}` });
      return;
    }
    opts.track?.started(child);
    let stdout = '';
    let stderr = '';
    let truncated = false;
    let outcome: { exit: number; why?: string; timedOut?: boolean } | undefined;
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      opts.signal?.removeEventListener('abort', onAbort);
      opts.track?.ended(child);
      const o = outcome ?? { exit: 1 };
      resolve({ exit: o.exit, stdout, stderr: o.why ?? stderr, ...(o.timedOut ? { timedOut: true } : {}), ...(truncated ? { truncated: true } : {}) });
    };
    const kill = (why: string, timedOut = false) => {
      outcome ??= { exit: 1, why, timedOut };
      killGroup(child, 'SIGKILL');
    };
    const timer = setTimeout(() => kill(`Hook timed out after ${opts.timeoutMs / 1000} seconds`, true), opts.timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    const onAbort = () => kill('Hook stopped: the prompt was stopped');
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    // Appended only while under the cap (re-slicing the whole text at each chunk would copy it each time).
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      if (stdout.length < MAX_STDOUT_CHARS) stdout += d.slice(0, MAX_STDOUT_CHARS - stdout.length);
      else truncated = true;
    });
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      if (stderr.length < MAX_STDERR_CHARS) stderr += d.slice(0, MAX_STDERR_CHARS - stderr.length);
    });
    // A hook that exits without reading its input closes the pipe under us: not an error.
    child.stdin?.on('error', () => {});
    child.stdin?.end(opts.input);
    child.on('error', (e) => {
      outcome ??= { exit: 1, why: `Hook could not start: ${e.message}` };
      finish();
    });
    child.on('exit', (code, sig) => {
      outcome ??= { exit: code ?? (sig ? 128 : 1) };
      grace = setTimeout(() => {
        killGroup(child, 'SIGKILL');
        finish();
      }, PIPE_GRACE_MS);
    });
    child.on('close', finish);
  });
}

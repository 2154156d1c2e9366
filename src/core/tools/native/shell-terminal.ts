/**
 * A foreground `shell_command` run in the editor's terminal (`EditorBridge.runInTerminal`, ACP
 * `terminal/*`) instead of a local process: the same shell line, working directory, timeout and
 * output budget as the local run (./shell.ts), so the model reads the same kind of result. The
 * editor shows the command as it runs; the bridge kills it at the timeout or when the call stops.
 */
import type { EditorBridge, ToolContext } from '../../../shapes/tool.js';
import { notice } from '../../../util/fs-util.js';
import { shellArgv, type WrapArgv } from './shell.js';
import { agentEnv } from '../../tool-calls/agent-env.js';

export type TerminalRunner = NonNullable<EditorBridge['runInTerminal']>;

export interface TerminalShellRun {
  /** The output the model reads: within the budget, with a notice when its beginning was cut. */
  output: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** The editor could not run it (no terminal, a failed request): the call fails with this. */
  error?: string;
}

export interface TerminalShellOptions {
  cwd: string;
  timeoutMs: number;
  maxOutputChars: number;
  /** The OS sandbox the terminal's command runs in (the editor runs it on this machine). */
  wrap?: WrapArgv;
}

export async function runInEditorTerminal(run: TerminalRunner, line: string, opts: TerminalShellOptions, ctx: ToolContext): Promise<TerminalShellRun> {
  const shell = shellArgv(line);
  const { command, args } = opts.wrap ? opts.wrap(shell, opts.cwd) : shell;
  let r;
  try {
    r = await run({
      chatId: ctx.chatId,
      ...(ctx.toolCallId ? { toolCallId: ctx.toolCallId } : {}),
      signal: ctx.signal,
      command,
      args,
      cwd: opts.cwd,
      // The editor's terminal adds these to its own environment, as a local run has them.
      env: agentEnv(ctx.chatId),
      // One byte is at most one character, so what the editor keeps fits the tool's character budget.
      outputByteLimit: opts.maxOutputChars,
      timeoutMs: opts.timeoutMs,
    });
  } catch (err) {
    // The bridge promises to settle with `error`; a throw is reported the same way, never run locally instead.
    return { output: '', exitCode: null, signal: null, timedOut: false, aborted: false, error: err instanceof Error ? err.message : String(err) };
  }
  if (r.error !== undefined) return { output: '', exitCode: null, signal: null, timedOut: false, aborted: false, error: r.error || 'unknown error' };
  // An editor may ignore the limit: the budget is kept here too, keeping the end as the editor would.
  let output = typeof r.output === 'string' ? r.output : '';
  let truncated = r.truncated === true;
  if (output.length > opts.maxOutputChars) {
    output = output.slice(output.length - opts.maxOutputChars);
    truncated = true;
  }
  if (truncated && output) {
    output =
      notice(`output truncated: the editor's terminal kept only the last ${output.length} characters. ` + 'To see all of it, redirect the output to a file and search it with grep or read_file.') +
      `\n\n${output}`;
  }
  return { output, exitCode: r.exitCode ?? null, signal: r.signal ?? null, timedOut: r.timedOut === true, aborted: r.aborted === true };
}

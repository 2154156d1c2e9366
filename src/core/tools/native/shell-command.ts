/** `shell_command`: run a command through the system shell. */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { fsErrorText, notice } from '../../../util/fs-util.js';
import { runShell } from './shell.js';

export const DEFAULT_SHELL_TIMEOUT_SECONDS = 60;
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
const MAX_TIMEOUT_SECONDS = 24 * 60 * 60;

export const shellCommandSchema = z.object({
  command: z.string().min(1).describe('The command line, run by /bin/sh -c (cmd /c on Windows).'),
  working_directory: z.string().min(1).optional().describe('Directory to run in. Default: the first workspace root.'),
  timeout: z.number().positive().max(MAX_TIMEOUT_SECONDS).optional().describe('Seconds before the command is killed.'),
});

export interface ShellCommandOptions {
  shellTimeoutSeconds?: number;
  maxOutputChars?: number;
}

export function shellCommandTool(opts: ShellCommandOptions = {}): Tool {
  const defaultTimeout = opts.shellTimeoutSeconds ?? DEFAULT_SHELL_TIMEOUT_SECONDS;
  const maxOutputChars = opts.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  return defineNativeTool({
    name: 'shell_command',
    description: `Run a shell command and return its combined stdout and stderr, and its exit code.

Usage:
- \`command\` is run by /bin/sh -c (cmd /c on Windows) with no input; quote paths that contain spaces.
- Optional: \`working_directory\` (default: the first workspace root) and \`timeout\` in seconds (default ${defaultTimeout}).
- On timeout the command and every process it started are killed.
- Output over ${maxOutputChars} characters keeps its beginning and end; a notice says how much was cut.
- Processes left running in the background when the command exits are stopped: do not use it to start servers.
- Prefer grep, read_file and directory_tree over grep, cat and ls.`,
    schema: shellCommandSchema,
    readOnly: false,
    mutates: true,
    pathArgs: ['working_directory'],
    summary: (a) => (a.command ? `Running "${shorten(a.command)}"` : 'Running command'),
    async run(args, ctx) {
      const cwd = args.working_directory ? resolvePath(args.working_directory, ctx.roots) : (ctx.roots[0] ?? process.cwd());
      try {
        if (!(await stat(cwd)).isDirectory()) return textResult(`working_directory ${cwd} is not a directory.`, true);
      } catch (err) {
        return textResult(`Bad working_directory: ${fsErrorText(err, cwd)}`, true);
      }
      const timeout = args.timeout ?? defaultTimeout;
      const r = await runShell(args.command, { cwd, timeoutMs: timeout * 1000, signal: ctx.signal, maxOutputChars });
      if (r.spawnError) return textResult(`Could not start the shell: ${r.spawnError}`, true);

      const body = r.output.length ? r.output.replace(/\n$/, '') : '(no output)';
      let status: string;
      let error = true;
      if (r.timedOut) status = notice(`timed out after ${timeout} s; the command and its processes were killed`);
      else if (r.aborted) status = notice('cancelled; the command and its processes were killed');
      else if (r.exitCode !== null) {
        status = `Exit code: ${r.exitCode}`;
        error = r.exitCode !== 0;
      } else status = `Killed by signal ${r.signal ?? 'unknown'}`;
      if (r.strays) status += `\n${notice('background processes still running when the command exited were stopped')}`;
      return textResult(`${body}\n\n${status}`, error);
    },
  });
}

/** One line of at most 80 characters, for the chat's summary of the call. */
function shorten(command: string): string {
  const line = command.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

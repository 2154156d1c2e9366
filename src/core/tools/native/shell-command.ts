/** `shell_command`: run a command through the system shell. */
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool, ToolContext, ToolResult } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { fsErrorText, notice } from '../../../util/fs-util.js';
import { runShell, type WrapArgv } from './shell.js';
import { sandboxFailure, type SandboxPolicy } from '../../../util/sandbox.js';
import { runInEditorTerminal } from './shell-terminal.js';
import type { JobRegistry } from '../../jobs/registry.js';
import { lineText, newestWithin } from '../../jobs/format.js';

export const DEFAULT_SHELL_TIMEOUT_SECONDS = 60;
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000;
const MAX_TIMEOUT_SECONDS = 24 * 60 * 60;

export const shellCommandSchema = z.object({
  command: z.string().min(1).describe('The command line, run by /bin/sh -c (cmd /c on Windows).'),
  working_directory: z.string().min(1).optional().describe('Directory to run in. Default: the first workspace root.'),
  timeout: z.number().positive().max(MAX_TIMEOUT_SECONDS).optional().describe('Seconds before the command is killed.'),
  // ECA's `background` is a string, the job's description; `true` is accepted for a job without one,
  // and null (some models send every optional key) means foreground, as ECA's `(if (get …))`.
  background: z
    .union([z.string(), z.boolean()])
    .nullable()
    .optional()
    .describe("Set to a brief description to run this command in the background (e.g., 'dev-server', 'file-watcher'). Use patchbay__bg_job to read output or kill the process later."),
  sandbox: z.boolean().optional().describe('Set to false only to retry a command that failed because of the sandbox (a read-only path, no network); the user is asked every time.'),
});

/** ECA `resources/prompts/tools/shell_command.md` "Background execution", with patchbay's names. */
const BACKGROUND_USAGE = `

Background execution:
- Set \`background\` to a brief description for long-running commands that don't terminate on their own (e.g., \`"dev-server"\`, \`"file-watcher"\`): the call returns after about 2 seconds with the job ID and the output so far; the command keeps running (no timeout), in the same working directory and environment.
- Use \`patchbay__bg_job\` with action \`read_output\` to check its output, or \`kill\` to stop it and every process it started.
- Do not end a background command with \`&\`: the job is the shell, so it would exit at once and what it left running would be stopped.`;

/** How long a background call waits for the job's first output (ECA `initial-output-wait-ms`). */
export const INITIAL_OUTPUT_WAIT_MS = 2_000;

export interface ShellCommandOptions {
  shellTimeoutSeconds?: number;
  maxOutputChars?: number;
  /** Where background jobs are kept; without it `background` is refused. */
  jobs?: JobRegistry;
  /** The environment commands start from (the host's); the process's own without it. */
  env?: NodeJS.ProcessEnv;
}

export function shellCommandTool(opts: ShellCommandOptions = {}): Tool {
  const defaultTimeout = opts.shellTimeoutSeconds ?? DEFAULT_SHELL_TIMEOUT_SECONDS;
  const maxOutputChars = opts.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS;
  const usage = (background: boolean) => `Run a shell command and return its combined stdout and stderr, and its exit code.

Usage:
- \`command\` is run by /bin/sh -c (cmd /c on Windows) with no input; quote paths that contain spaces.
- Optional: \`working_directory\` (default: the first workspace root) and \`timeout\` in seconds (default ${defaultTimeout}).
- On timeout the command and every process it started are killed.
- Output over ${maxOutputChars} characters keeps its beginning and end; a notice says how much was cut.
- Processes a foreground command leaves running when it exits are stopped${background ? ': start servers and watchers with `background`' : ''}.
- Prefer grep, read_file and directory_tree over grep, cat and ls.
- Where an OS sandbox is on, commands run in it: they write only in the workspace folders and /tmp, and have no network. A command that fails because of it says so; only then retry it with \`"sandbox": false\` (the user is asked).${background && opts.jobs ? BACKGROUND_USAGE : ''}`;
  const tool = defineNativeTool({
    name: 'shell_command',
    description: usage(true),
    schema: shellCommandSchema,
    // A small-context model gets no background jobs (bg_job is not offered to it either).
    smallContext: { description: usage(false), schema: shellCommandSchema.omit({ background: true }) },
    readOnly: false,
    mutates: true,
    pathArgs: ['working_directory'],
    summary: (a) => {
      // The approval shows this: a background call must say it leaves a process running.
      if (isBackground(a.background)) {
        const what = typeof a.background === 'string' && a.background.trim() ? ` "${shorten(a.background)}"` : '';
        return a.command ? `Starting background job${what}: ${shorten(a.command)}` : 'Starting background job';
      }
      return a.command ? `Running "${shorten(a.command)}"` : 'Running command';
    },
    async run(args, ctx) {
      const cwd = args.working_directory ? resolvePath(args.working_directory, ctx.roots) : (ctx.roots[0] ?? process.cwd());
      try {
        if (!(await stat(cwd)).isDirectory()) return textResult(`working_directory ${cwd} is not a directory.`, true);
      } catch (err) {
        return textResult(`Bad working_directory: ${fsErrorText(err, cwd)}`, true);
      }
      // `"sandbox": false` was asked about (core/tool-calls/tool-gate.ts): the user said yes.
      const plan = args.sandbox === false || !ctx.sandbox ? undefined : await ctx.sandbox();
      if (plan?.kind === 'refuse') return textResult(`Not run: ${plan.why}. Ask the user to fix the sandbox, or retry with "sandbox": false to ask them to run it unsandboxed.`, true);
      const sandbox = plan?.kind === 'sandboxed' ? { wrap: plan.wrap } : {};
      const failed = (r: ToolResult): ToolResult => (plan?.kind === 'sandboxed' && r.error ? explainSandbox(r, plan.policy) : r);
      if (isBackground(args.background)) {
        // Stopped while the directory was checked: a job started now would outlive the stop (ECA's words).
        if (ctx.signal.aborted) return textResult('Tool call is stopping, background job not started.', true);
        return failed(await startJob(opts.jobs, args.command, cwd, args.background, ctx, maxOutputChars, plan?.kind === 'sandboxed' ? plan.wrap : undefined));
      }
      const timeout = args.timeout ?? defaultTimeout;
      const runOpts = { cwd, timeoutMs: timeout * 1000, maxOutputChars, ...(opts.env ? { env: opts.env } : {}), ...sandbox };
      // The editor runs it in a terminal it shows, when it offers one (ACP `terminal/*`). Background jobs stay local (core/jobs/).
      const inTerminal = ctx.editor.runInTerminal;
      if (inTerminal) {
        const r = await runInEditorTerminal(inTerminal, args.command, runOpts, ctx);
        // The user chose the editor's terminal: a failure there is reported, not run locally instead.
        if (r.error !== undefined) return textResult(`Could not run the command in the editor's terminal: ${r.error}`, true);
        return failed(shellResult(r, timeout));
      }
      const r = await runShell(args.command, { ...runOpts, signal: ctx.signal, chatId: ctx.chatId });
      if (r.spawnError) return textResult(`Could not start the shell: ${r.spawnError}`, true);
      return failed(shellResult(r, timeout));
    },
  });
  return { ...tool, sandboxed: true };
}

/** A failed sandboxed command whose output shows the sandbox stopped it: the model is told why, and how to retry. */
function explainSandbox(r: ToolResult, policy: SandboxPolicy): ToolResult {
  const text = r.outputs.map((o) => (o.type === 'text' ? o.text : '')).join('\n');
  const why = sandboxFailure(text, policy);
  if (!why) return r;
  return {
    ...r,
    outputs: [
      {
        type: 'text',
        text: `${text}\n${notice(`this may have failed because of the OS sandbox: ${why}. If the command really needs it, call shell_command again with "sandbox": false; the user will be asked.`)}`,
      },
    ],
  };
}

/** What the model reads of a foreground run, local or in the editor's terminal: the output, then how it ended. */
function shellResult(r: { output: string; exitCode: number | null; signal: string | null; timedOut: boolean; aborted: boolean; strays?: boolean }, timeout: number): ToolResult {
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
}

/**
 * ECA `background-shell-command`: start the job, wait up to 2 s for its first output (less if it
 * ends or the call is stopped), and say how to follow it; a job that already failed is an error.
 */
async function startJob(jobs: JobRegistry | undefined, command: string, cwd: string, background: string | true, ctx: ToolContext, maxOutputChars: number, wrap?: WrapArgv): Promise<ToolResult> {
  if (!jobs) return textResult('Background jobs are not available here: run the command without `background`.', true);
  const started = jobs.start({
    command,
    cwd,
    chatId: ctx.chatId,
    ...(typeof background === 'string' ? { summary: background } : {}),
    ...(ctx.toolCallId ? { toolCallId: ctx.toolCallId } : {}),
    ...(wrap ? { wrap } : {}),
  });
  if (!started.ok) return textResult(started.message, true);
  const id = started.job.id;
  await jobs.settle(id, INITIAL_OUTPUT_WAIT_MS, ctx.signal);
  const out = jobs.read(id);
  const initial = newestWithin((out?.lines ?? []).map(lineText), maxOutputChars);
  if (out?.status === 'killed') return textResult(`Background job ${id} was killed before it had run 2 seconds.\nOutput:\n${initial}`, true);
  if (out?.status === 'failed') {
    const code = out.exitCode !== null ? `exit code ${out.exitCode}` : out.status;
    return textResult(`Background job ${id} failed immediately (${code}).\nOutput:\n${initial}`, true);
  }
  // Ended within the wait (often a command ending in `&`): calling it started would hide that what it left running is gone.
  if (out?.status === 'completed') {
    return textResult(
      `Background job ${id} already exited (exit ${out.exitCode ?? 0}); processes it left running were stopped; do not end a background command with \`&\`.` + (initial ? `\nOutput:\n${initial}` : ''),
    );
  }
  const result = textResult(
    `Background job ${id} started.\nCommand: ${command}\nWorking directory: ${cwd}\n` +
      `Use patchbay__bg_job with action "read_output" and job_id "${id}" to check output.\n` +
      `Use patchbay__bg_job with action "kill" and job_id "${id}" to stop it.` +
      (initial ? `\n\nInitial output:\n${initial}` : ''),
  );
  // On the call's result, so the plugins show it as a running job and link it (by tool call id) to the Jobs panel.
  return { ...result, details: { type: 'shellCommand', commands: [], background: true } };
}

function isBackground(b: string | boolean | null | undefined): b is string | true {
  return b !== undefined && b !== null && b !== false;
}

/** One line of at most 80 characters, for the chat's summary of the call. */
function shorten(command: string): string {
  const line = command.replace(/\s*\n\s*/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

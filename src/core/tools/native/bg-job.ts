/**
 * `bg_job`: the model's view of its background jobs, as ECA's one tool with three actions
 * (`src/eca/features/tools/background.clj`, `resources/prompts/tools/bg_job.md`): `list`,
 * `read_output` (only what is new since the last read: the registry keeps the cursor) and `kill`.
 */
import { z } from 'zod';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { elapsedText, jobName, lineText, newestWithin } from '../../jobs/format.js';
import { DEFAULT_MAX_OUTPUT_CHARS } from './shell-command.js';
import type { JobRegistry } from '../../jobs/registry.js';

export const bgJobSchema = z.object({
  action: z.enum(['list', 'read_output', 'kill']).describe('The action to perform: list all background jobs, read_output from a job, or kill a job.'),
  job_id: z.string().min(1).optional().describe('The background job ID (e.g. "job-1"). Required for read_output and kill actions.'),
});

/** `maxOutputChars`: what one `read_output` hands the model at most (its newest part), as a foreground `shell_command`. */
export function bgJobTool(jobs: JobRegistry, maxOutputChars = DEFAULT_MAX_OUTPUT_CHARS): Tool {
  return defineNativeTool({
    name: 'bg_job',
    // Background jobs are not for a small-context model (Tool.smallContext).
    smallContext: false,
    description: `Manage background jobs (long-running shell processes).

Actions:
- \`list\`: Show all background jobs with their ID, status, elapsed time, and command.
- \`read_output\`: Read new output from a background job since the last read. Requires \`job_id\`.
- \`kill\`: Terminate a running background job and every process it started. Requires \`job_id\`.

Usage notes:
- Background jobs are started via \`patchbay__shell_command\` with \`background\` set to a brief description (e.g., \`"dev-server"\`).
- \`read_output\` returns only **new** output since your last read, so call it periodically to monitor.
- Job IDs follow the pattern \`job-1\`, \`job-2\`, etc.
- Use \`list\` to discover running jobs if you don't remember the ID.
- All background jobs are stopped when patchbay exits.`,
    schema: bgJobSchema,
    // Asks by default, as ECA (its default `toolCall.approval.allow` has no `bg_job`): `kill` stops
    // processes. `{"allow": {"bg_job": {"argsMatchers": {"action": ["list", "read_output"]}}}}` lets reads run.
    readOnly: false,
    // The plan agent may list and read its jobs (ECA's plan agent has `bg_job`), not kill them.
    mutates: false,
    mutatesCall: (a) => a.action === 'kill',
    pathArgs: [],
    summary: (a) => {
      const name = a.job_id ? jobName(jobs.get(a.job_id) ?? { id: a.job_id, summary: null }) : undefined;
      if (a.action === 'list') return 'Listing background jobs';
      if (a.action === 'read_output') return `Reading output of ${name ?? 'a job'}`;
      if (a.action === 'kill') return `Killing ${name ?? 'a job'}`;
      return 'Managing background job';
    },
    async run(args) {
      if (args.action === 'list') return list(jobs);
      if (!args.job_id) return textResult(`job_id is required for ${args.action} action.`, true);
      return args.action === 'read_output' ? readOutput(jobs, args.job_id, maxOutputChars) : kill(jobs, args.job_id);
    },
  });
}

function list(jobs: JobRegistry) {
  const all = jobs.list();
  if (!all.length) return textResult('No background jobs.');
  return textResult(all.map((j) => `- ${jobName(j)} [${j.type}] ${j.status}${j.exitCode !== null ? ` (exit ${j.exitCode})` : ''} | ${elapsedText(j)} | ${j.label}`).join('\n'));
}

function readOutput(jobs: JobRegistry, id: string, maxOutputChars: number) {
  const out = jobs.read(id);
  const job = jobs.get(id);
  if (!out || !job) return textResult(`Background job ${id} not found.`, true);
  const body = out.lines.length ? newestWithin(out.lines.map(lineText), maxOutputChars) : '(no new output)';
  const exit = out.exitCode !== null ? ` (exit ${out.exitCode})` : '';
  const dropped = out.dropped > 0 ? `\n[${out.dropped} lines dropped from buffer]` : '';
  return textResult(`Job ${jobName(job)} — ${out.status}${exit}${dropped}\n\n${body}`);
}

function kill(jobs: JobRegistry, id: string) {
  const job = jobs.get(id);
  if (!job) return textResult(`Background job ${id} not found.`, true);
  if (jobs.kill(id)) return textResult(`Background job ${jobName(job)} killed.`);
  return textResult(`Background job ${jobName(job)} is not running (status: ${job.status}).`, true);
}

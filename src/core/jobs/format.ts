/** How jobs read as text: to the model (`bg_job`) and in a front end's list. */
import type { OutputLine } from './output-ring.js';
import type { JobInfo } from './registry.js';

/** ECA `elapsed-str`: `42s`, `5m23s`, `2h5m`, from the start to the end (or now). */
export function elapsedText(job: Pick<JobInfo, 'startedAt' | 'endedAt'>, now = new Date()): string {
  const secs = Math.max(0, Math.floor(((job.endedAt ?? now).getTime() - job.startedAt.getTime()) / 1000));
  if (secs < 60) return `${secs}s`;
  if (secs < 3600) return `${Math.floor(secs / 60)}m${secs % 60}s`;
  return `${Math.floor(secs / 3600)}h${Math.floor(secs / 60) % 60}m`;
}

/** ECA `format-output-line`: stderr lines are marked. */
export function lineText(l: OutputLine): string {
  return l.stream === 'stderr' ? `[stderr] ${l.text}` : l.text;
}

/** ECA's `job-prefix`: `"dev-server" (job-1)` when the job has a summary, else its id. */
export function jobName(job: Pick<JobInfo, 'id' | 'summary'>): string {
  return job.summary ? `"${job.summary}" (${job.id})` : job.id;
}

/**
 * What the model is told when a job of its chat ends (ECA chat.clj
 * `consume-pending-job-notifications!`): status, exit code and the last lines of output.
 */
export function jobEndedText(job: Pick<JobInfo, 'id' | 'label' | 'status' | 'exitCode'>, tail: OutputLine[]): string {
  const head = `Background job ${job.id} (\`${job.label}\`) ${job.status} with exit code ${job.exitCode ?? 'none'}.`;
  return tail.length ? `${head}\nLast ${tail.length} lines of output:\n${tail.map(lineText).join('\n')}` : head;
}

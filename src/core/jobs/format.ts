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

/** How much of a job's last lines the job-ended notice carries: it joins every later request. */
export const ENDED_TAIL_CHARS = 4_000;

/**
 * The newest of `lines` that fit in `maxChars`, after a notice of how many lines and characters
 * before them were left out (a line alone longer than the budget keeps its end): background
 * output reaches the model as cut as a foreground call's.
 */
export function newestWithin(lines: string[], maxChars: number): string {
  let kept = 0;
  let chars = 0;
  while (kept < lines.length && chars + lines[lines.length - 1 - kept].length + (kept ? 1 : 0) <= maxChars) {
    chars += lines[lines.length - 1 - kept].length + (kept ? 1 : 0);
    kept++;
  }
  if (kept === lines.length) return lines.join('\n');
  const shown = kept ? lines.slice(-kept) : [lines[lines.length - 1].slice(-maxChars)];
  const omittedLines = lines.length - kept;
  const omittedChars = lines.reduce((n, l) => n + l.length, 0) - shown.reduce((n, l) => n + l.length, 0);
  return `[${omittedLines} lines / ${omittedChars} characters omitted]\n${shown.join('\n')}`;
}

/**
 * What the model is told when a job of its chat ends (ECA chat.clj
 * `consume-pending-job-notifications!`): status, exit code and the last lines of output, at most
 * ENDED_TAIL_CHARS of them.
 */
export function jobEndedText(job: Pick<JobInfo, 'id' | 'label' | 'status' | 'exitCode'>, tail: OutputLine[]): string {
  const head = `Background job ${job.id} (\`${job.label}\`) ${job.status} with exit code ${job.exitCode ?? 'none'}.`;
  return tail.length ? `${head}\nLast ${tail.length} lines of output:\n${newestWithin(tail.map(lineText), ENDED_TAIL_CHARS)}` : head;
}

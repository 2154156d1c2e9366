/**
 * Background jobs as ECA's Jobs panels read them (ECA docs/protocol.md "Background Jobs";
 * `src/eca/features/background_tasks.clj` `jobs-summary`, `src/eca/handlers.clj` `jobs-*`).
 */
import type { z } from 'zod';
import type { JobSummary, jobsReadOutputResultSchema } from '../../protocol/eca/settings.js';
import { elapsedText, type JobInfo, type JobRegistry } from '../../core/jobs/index.js';

/** Every job, each with its chat's title as `chatLabel` (the id when the chat has none). */
export function ecaJobs(jobs: JobRegistry, titleOf: (chatId: string) => string | undefined): { jobs: JobSummary[] } {
  const now = new Date();
  return { jobs: jobs.list().map((j) => ecaJob(j, titleOf(j.chatId) ?? j.chatId, now)) };
}

function ecaJob(j: JobInfo, chatLabel: string, now: Date): JobSummary {
  return {
    id: j.id,
    type: j.type,
    status: j.status,
    label: j.label,
    summary: j.summary,
    startedAt: j.startedAt.toISOString(),
    elapsed: elapsedText(j, now),
    exitCode: j.exitCode,
    chatId: j.chatId,
    chatLabel,
    ...(j.toolCallId ? { toolCallId: j.toolCallId } : {}),
  };
}

/** `jobs/readOutput`: a snapshot (the model's cursor stays); ECA's empty answer for an unknown job. */
export function ecaJobOutput(jobs: JobRegistry, jobId: string): z.input<typeof jobsReadOutputResultSchema> {
  const out = jobs.peek(jobId);
  if (!out) return { lines: [], status: null, exitCode: null };
  return { lines: out.lines.map((l) => ({ text: l.text, stream: l.stream })), status: out.status, exitCode: out.exitCode };
}

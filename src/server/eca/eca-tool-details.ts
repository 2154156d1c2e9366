/**
 * A tool call's core `details` as ECA's `ToolCallDetails` (ECA docs/protocol.md "TaskDetails").
 * Core keeps a task list in its own terms; ECA's shape adds the aggregates the plugins read
 * (`inProgressTaskIds`, `summary`) and spells the running status `in-progress`.
 */
import type { TaskDetails as CoreTaskDetails, ToolDetails } from '../../shapes/tool.js';
import type { TaskDetails } from '../../protocol/eca/content.js';

export type EcaToolDetails = Exclude<ToolDetails, CoreTaskDetails> | TaskDetails;

export function toEcaToolDetails(d: ToolDetails): EcaToolDetails {
  return d.type === 'task' ? toEcaTaskDetails(d) : d;
}

function toEcaTaskDetails(d: CoreTaskDetails): TaskDetails {
  const count = (status: CoreTaskDetails['tasks'][number]['status']): number => d.tasks.filter((t) => t.status === status).length;
  return {
    type: 'task',
    tasks: d.tasks.map((t) => ({
      id: t.id,
      subject: t.subject,
      description: t.description,
      status: t.status === 'inProgress' ? 'in-progress' : t.status,
      priority: t.priority,
      isBlocked: t.isBlocked,
      // ECA (task.clj `task-details`) sends `blockedBy` only when the task has dependencies.
      ...(t.blockedBy.length ? { blockedBy: [...t.blockedBy].sort((a, b) => a - b) } : {}),
    })),
    inProgressTaskIds: d.tasks.filter((t) => t.status === 'inProgress').map((t) => t.id),
    summary: { done: count('done'), inProgress: count('inProgress'), pending: count('pending'), total: d.tasks.length },
    ...(d.activeSummary !== undefined ? { activeSummary: d.activeSummary } : {}),
  };
}

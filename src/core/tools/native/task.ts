/**
 * `task`: the model plans and tracks its work as a per-chat task list (ECA's task tool:
 * src/eca/features/tools/task.clj, description resources/prompts/tools/task.md). Every result
 * carries the whole list as `task` details so editors can show it as a checklist.
 *
 * It changes nothing outside the chat, so it is read-only for approval and offered to `plan`
 * too (ECA's config allows `eca__task` in the plan agent).
 */
import { z } from 'zod';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { add, complete, EMPTY_TASK_LIST, listText, plan, remove, start, taskDetails, update, type Outcome, type TaskInput, type TaskList } from './task-list.js';
import { memoryTaskLists, type TaskLists } from './task-lists.js';

const OPS = ['read', 'plan', 'add', 'update', 'start', 'complete', 'delete', 'clear'] as const;

// Loose objects: a `status` the model adds must reach the checks that refuse it, not be stripped.
const taskFields = {
  subject: z.string().describe('Task subject/title (required)'),
  description: z.string().describe('Detailed description of the task (required)'),
  priority: z.enum(['high', 'medium', 'low']),
  blocked_by: z.array(z.number().int()),
};

export const taskSchema = z.object({
  op: z.enum(OPS).describe('Operation to perform'),
  id: z.number().int().optional().describe('Task ID (required for update)'),
  ids: z.array(z.number().int()).optional().describe('Task IDs (required for start/complete/delete)'),
  active_summary: z.string().optional().describe('Summary of what will be done in the current active session. Required for start operation.'),
  task: z
    .looseObject({
      subject: taskFields.subject.optional(),
      description: taskFields.description.optional(),
      priority: taskFields.priority.optional().describe('Task priority (default: medium)'),
      blocked_by: taskFields.blocked_by.optional().describe('IDs of blocking tasks'),
    })
    .optional()
    .describe('Single task data (for add/update)'),
  tasks: z
    .array(z.looseObject({ ...taskFields, priority: taskFields.priority.optional(), blocked_by: taskFields.blocked_by.optional() }))
    .optional()
    .describe('Array of tasks (required for plan, alternative for add)'),
});

/** ECA's tool description (resources/prompts/tools/task.md), the model's guide to the workflow. */
const DESCRIPTION = `Task management for planning and tracking work.

This tool is the authoritative tracker for executable work in the current chat. Use it with \`plan/start/complete\` for multi-step work you intend to execute.

When to Use:
- Non-trivial work where progress tracking helps (multiple tasks, dependencies, or iterative debugging)
- User provides multiple actionable tasks/requests
- User explicitly requests task tracking or a plan/todo list

When NOT to Use:
- A single small action you can complete immediately without losing context
- Purely informational or conversational queries

Operations:
- read: View current task list state
- plan: Create/replace task list with initial tasks (required: tasks)
- add: Append task(s) to existing task list
- update: Modify a single task metadata by \`id\` (subject, description, priority, blocked_by) — cannot change status
- start: Begin work on tasks by \`ids\` (sets to in_progress; rejects blocked or done tasks). Requires \`active_summary\` (MAX 8 WORDS) to briefly state what you are about to do.
- complete: Mark tasks by \`ids\` as done (verify acceptance criteria in description first)
- delete: Remove tasks by \`ids\`
- clear: Reset entire task list (removes all tasks)

Task Schema:
- \`subject\`: A brief, actionable title in imperative form (e.g. "Fix login bug")
- \`description\`: Detailed description of what needs to be done, including context and STRICT acceptance criteria. Objective verification of these criteria is required for completion.

Task Creation Guidance:
- Order tasks by expected execution flow. Put prerequisite tasks before tasks that depend on them, and use \`blocked_by\` to record those dependencies explicitly.
- Create tasks as independently executable units with concise, outcome-focused subjects. Keep steps separate if one can be completed before the next begins. If several planned steps will be carried out in the same unit of work, combine them into one task and put the substeps in the description.

Workflow & Strict Execution Rules:
1. PLAN: Use 'plan' to create the task list with initial tasks. You MUST wait for the tool to return the generated task ids before doing anything else. Do NOT execute any work or call other tools in the same step as 'plan'.
2. START & SYNC: Use 'start' immediately before beginning work on a task. Start ONLY tasks you are about to work on. Do not start tasks preemptively. You are FORBIDDEN to execute any work on a task unless its status is explicitly \`in_progress\`.
3. DO THE WORK FIRST: After calling 'start', you MUST actually perform the work (write code, use tools, etc.). NEVER call 'complete' preemptively; only call 'complete' after the work has been done and objectively verified against the task's \`description\` acceptance criteria since the corresponding 'start'.
4. PARALLEL WORK: For sequential work, keep only one task \`in_progress\`; later tasks must stay pending until you start them.
5. COMPLETION TIMING: Once a task is verified, close it as soon as possible. Do not delay completion just to align with other tasks.
6. ADAPTABILITY: If completing tasks reveals follow-up work, use 'add' to append new tasks.`;

type TaskArgs = z.infer<typeof taskSchema>;

function apply(list: TaskList, a: TaskArgs): Outcome {
  switch (a.op) {
    case 'read':
      return { ok: true, list, text: '' };
    case 'plan':
      return plan(a.tasks);
    case 'add':
      return add(list, { task: a.task as TaskInput | undefined, tasks: a.tasks });
    case 'update':
      return update(list, a.id, a.task as TaskInput | undefined);
    case 'start':
      return start(list, a.ids, a.active_summary);
    case 'complete':
      return complete(list, a.ids);
    case 'delete':
      return remove(list, a.ids);
    case 'clear':
      return { ok: true, list: EMPTY_TASK_LIST, text: 'Task list cleared' };
  }
}

export function taskTool(lists: TaskLists = memoryTaskLists()): Tool {
  return defineNativeTool({
    name: 'task',
    description: DESCRIPTION,
    schema: taskSchema,
    readOnly: true,
    mutates: false,
    pathArgs: [],
    summary: (a) => (a.op === 'read' || a.op === undefined ? 'Reading tasks' : 'Updating tasks'),
    // Synchronous from read to write, so two calls in one chat cannot lose each other's change.
    async run(args, ctx) {
      const out = apply(lists.get(ctx.chatId) ?? EMPTY_TASK_LIST, args);
      if (!out.ok) return textResult(out.error, true);
      lists.set(ctx.chatId, out.list);
      const body = listText(out.list);
      return { ...textResult(out.text ? `${out.text}\n\n${body}` : body), details: taskDetails(out.list) };
    },
  });
}

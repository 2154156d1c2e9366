/**
 * A chat's task list and the operations the `task` tool applies to it. The rules and the texts the
 * model reads follow ECA's task tool (src/eca/features/tools/task.clj), so a model prompted for
 * ECA works the same here. Pure: an operation takes a list and returns the next one or an error.
 */
import type { TaskDetails, TaskItem } from '../../../shapes/tool.js';

export type TaskStatus = TaskItem['status'];
export type TaskPriority = TaskItem['priority'];

export interface Task {
  id: number;
  subject: string;
  description: string;
  status: TaskStatus;
  priority: TaskPriority;
  /** Ids of the tasks this one waits for, sorted. */
  blockedBy: number[];
}

export interface TaskList {
  nextId: number;
  activeSummary?: string;
  tasks: Task[];
}

export const EMPTY_TASK_LIST: TaskList = { nextId: 1, tasks: [] };

/** A task as the model writes it (`task` / `tasks` arguments); fields are checked here, as ECA does. */
export interface TaskInput {
  subject?: unknown;
  description?: unknown;
  priority?: unknown;
  blocked_by?: unknown;
  status?: unknown;
}

export type Outcome = { ok: true; list: TaskList; text: string } | { ok: false; error: string };

const fail = (error: string): Outcome => ({ ok: false, error });
const PRIORITIES: readonly string[] = ['high', 'medium', 'low'];

function nonBlank(label: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return `${label} must be a non-blank string`;
  if (typeof v !== 'string') return `${label} must be a string`;
  if (v.trim() === '') return `${label} must be a non-blank string`;
  return undefined;
}

function checkPriority(v: unknown): string | undefined {
  return typeof v === 'string' && PRIORITIES.includes(v) ? undefined : `Invalid priority: ${String(v)}. Allowed: high, medium, low`;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

function checkBlockedBy(raw: unknown, allowed: ReadonlySet<number>, self: number): { ids: number[] } | { error: string } {
  if (raw === undefined || raw === null) return { ids: [] };
  if (!Array.isArray(raw)) return { error: 'blocked_by must be an array' };
  if (!raw.every(isInt)) return { error: 'blocked_by must contain integer task IDs' };
  const ids = raw as number[];
  if (ids.includes(self)) return { error: `Task cannot block itself (id: ${self})` };
  const bad = ids.filter((id) => !allowed.has(id)).sort((a, b) => a - b);
  if (bad.length) return { error: `Invalid blocked_by references: ${bad.join(', ')}` };
  return { ids: [...new Set(ids)].sort((a, b) => a - b) };
}

/** Ids among `task`'s blockers that are not done yet, sorted. */
export function activeBlockers(tasks: readonly Task[], task: Task): number[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return task.blockedBy.filter((id) => byId.get(id)?.status !== 'done').sort((a, b) => a - b);
}

/** A dependency cycle as ECA words it ("Task 1 -> Task 2 -> Task 1"), or undefined. */
function findCycle(tasks: readonly Task[]): string | undefined {
  const graph = new Map(tasks.map((t) => [t.id, t.blockedBy]));
  const seen = new Set<number>();
  const visit = (node: number, path: number[]): string | undefined => {
    const at = path.indexOf(node);
    if (at >= 0) return `Dependency cycle detected: ${[...path.slice(at), node].map((id) => `Task ${id}`).join(' -> ')}`;
    if (seen.has(node)) return undefined;
    seen.add(node);
    for (const dep of [...(graph.get(node) ?? [])].sort((a, b) => a - b)) {
      const found = visit(dep, [...path, node]);
      if (found) return found;
    }
    return undefined;
  };
  for (const id of [...graph.keys()].sort((a, b) => a - b)) {
    const found = visit(id, []);
    if (found) return found;
  }
  return undefined;
}

function makeTask(raw: TaskInput, id: number, allowed: ReadonlySet<number>): { task: Task } | { error: string } {
  const err =
    nonBlank('subject', raw.subject) ??
    nonBlank('description', raw.description) ??
    ('status' in raw ? "Cannot set status when creating tasks. New tasks always start as pending; use 'start' or 'complete'." : undefined) ??
    ('priority' in raw ? checkPriority(raw.priority) : undefined);
  if (err) return { error: err };
  const blocked = checkBlockedBy(raw.blocked_by, allowed, id);
  if ('error' in blocked) return blocked;
  const priority = 'priority' in raw ? (raw.priority as TaskPriority) : 'medium';
  return { task: { id, subject: raw.subject as string, description: raw.description as string, status: 'pending', priority, blockedBy: blocked.ids } };
}

function buildTasks(list: TaskList, raw: unknown): { tasks: Task[] } | { error: string } {
  if (!Array.isArray(raw) || raw.length === 0) return { error: 'tasks must be a non-empty array' };
  const allowed = new Set([...list.tasks.map((t) => t.id), ...raw.map((_, i) => list.nextId + i)]);
  const tasks: Task[] = [];
  for (const [i, r] of raw.entries()) {
    if (r === null || typeof r !== 'object' || Array.isArray(r)) return { error: `Task at index ${i} must be an object` };
    const made = makeTask(r as TaskInput, list.nextId + i, allowed);
    if ('error' in made) return made;
    tasks.push(made.task);
  }
  return { tasks };
}

function resolveIds(list: TaskList, raw: unknown): { ids: number[] } | { error: string } {
  if (!Array.isArray(raw) || raw.length === 0) return { error: "'ids' must be a non-empty array" };
  if (!raw.every(isInt)) return { error: 'All IDs must be integers' };
  const ids = raw as number[];
  if (new Set(ids).size !== ids.length) return { error: 'Duplicate IDs are not allowed' };
  const existing = new Set(list.tasks.map((t) => t.id));
  const missing = ids.filter((id) => !existing.has(id)).sort((a, b) => a - b);
  return missing.length ? { error: `Tasks not found: ${missing.join(', ')}` } : { ids };
}

const withoutIdleSummary = (list: TaskList): TaskList => (list.tasks.some((t) => t.status === 'inProgress') ? list : { nextId: list.nextId, tasks: list.tasks });

export function plan(raw: unknown): Outcome {
  if (!Array.isArray(raw) || raw.length === 0) return fail("plan requires 'tasks' (non-empty array)");
  const built = buildTasks(EMPTY_TASK_LIST, raw);
  if ('error' in built) return fail(built.error);
  const cycle = findCycle(built.tasks);
  if (cycle) return fail(cycle);
  return { ok: true, list: { nextId: built.tasks.length + 1, tasks: built.tasks }, text: `Task list created with ${built.tasks.length} tasks` };
}

export function add(list: TaskList, args: { task?: TaskInput; tasks?: unknown }): Outcome {
  let added: Task[];
  if (args.tasks !== undefined) {
    const built = buildTasks(list, args.tasks);
    if ('error' in built) return fail(built.error);
    added = built.tasks;
  } else if (args.task !== undefined) {
    const made = makeTask(args.task, list.nextId, new Set(list.tasks.map((t) => t.id)));
    if ('error' in made) return fail(made.error);
    added = [made.task];
  } else return fail("add requires 'task' or 'tasks'");
  const tasks = [...list.tasks, ...added];
  const cycle = findCycle(tasks);
  if (cycle) return fail(cycle);
  return { ok: true, list: { ...list, tasks, nextId: list.nextId + added.length }, text: `Added ${added.length} task(s): ${added.map((t) => t.id).join(', ')}` };
}

const UPDATABLE = ['subject', 'description', 'priority', 'blocked_by'] as const;

export function update(list: TaskList, id: unknown, task: TaskInput | undefined): Outcome {
  if (!isInt(id)) return fail('Task ID must be an integer');
  const current = list.tasks.find((t) => t.id === id);
  if (!current) return fail(`Task ${id} not found`);
  if (task === undefined) return fail("Missing 'task' object");
  if ('status' in task) return fail("Cannot set status via update. Use 'start' or 'complete'.");
  if (!UPDATABLE.some((k) => k in task)) return fail('No updatable fields in task');
  const err =
    ('subject' in task ? nonBlank('subject', task.subject) : undefined) ??
    ('description' in task ? nonBlank('description', task.description) : undefined) ??
    ('priority' in task ? checkPriority(task.priority) : undefined);
  if (err) return fail(err);
  let blockedBy = current.blockedBy;
  if ('blocked_by' in task) {
    const checked = checkBlockedBy(task.blocked_by, new Set(list.tasks.map((t) => t.id)), id);
    if ('error' in checked) return fail(checked.error);
    blockedBy = checked.ids;
  }
  const next: Task = {
    ...current,
    ...('subject' in task ? { subject: task.subject as string } : {}),
    ...('description' in task ? { description: task.description as string } : {}),
    ...('priority' in task ? { priority: task.priority as TaskPriority } : {}),
    blockedBy,
  };
  const tasks = list.tasks.map((t) => (t.id === id ? next : t));
  const cycle = findCycle(tasks);
  if (cycle) return fail(cycle);
  return { ok: true, list: { ...list, tasks }, text: `Task ${id} updated` };
}

const setStatus = (tasks: readonly Task[], ids: ReadonlySet<number>, status: TaskStatus): Task[] => tasks.map((t) => (ids.has(t.id) ? { ...t, status } : t));

export function start(list: TaskList, rawIds: unknown, activeSummary: unknown): Outcome {
  const err = nonBlank('active_summary', activeSummary);
  if (err) return fail(err);
  const r = resolveIds(list, rawIds);
  if ('error' in r) return fail(r.error);
  for (const id of r.ids) {
    const task = list.tasks.find((t) => t.id === id)!;
    if (task.status === 'done') return fail(`Cannot start task ${id}: already done`);
    const blockers = activeBlockers(list.tasks, task);
    if (blockers.length) return fail(`Cannot start task ${id}: blocked by ${blockers.join(', ')}`);
  }
  const tasks = setStatus(list.tasks, new Set(r.ids), 'inProgress');
  return { ok: true, list: { ...list, tasks, activeSummary: activeSummary as string }, text: `Started task(s): ${r.ids.join(', ')}` };
}

export function complete(list: TaskList, rawIds: unknown): Outcome {
  const r = resolveIds(list, rawIds);
  if ('error' in r) return fail(r.error);
  for (const id of r.ids) {
    const task = list.tasks.find((t) => t.id === id)!;
    const blockers = activeBlockers(list.tasks, task);
    if (task.status !== 'done' && blockers.length) return fail(`Cannot complete task ${id}: blocked by ${blockers.join(', ')}`);
  }
  const ids = new Set(r.ids);
  const next = withoutIdleSummary({ ...list, tasks: setStatus(list.tasks, ids, 'done') });
  // A pending task that waited on one of these and now waits on nothing: the model may start it.
  const unblocked = next.tasks.filter((t) => t.status === 'pending' && t.blockedBy.some((b) => ids.has(b)) && !activeBlockers(next.tasks, t).length).map((t) => t.id);
  const text = `Completed task(s): ${[...r.ids].sort((a, b) => a - b).join(', ')}${unblocked.length ? `\nUnblocked: ${unblocked.join(', ')}` : ''}`;
  return { ok: true, list: next, text };
}

export function remove(list: TaskList, rawIds: unknown): Outcome {
  const r = resolveIds(list, rawIds);
  if ('error' in r) return fail(r.error);
  const ids = new Set(r.ids);
  const tasks = list.tasks.filter((t) => !ids.has(t.id)).map((t) => ({ ...t, blockedBy: t.blockedBy.filter((b) => !ids.has(b)) }));
  return { ok: true, list: withoutIdleSummary({ ...list, tasks }), text: `Deleted task(s): ${r.ids.join(', ')}` };
}

/** The list as the model reads it after every operation (ECA task.clj `read-text`). */
export function listText(list: TaskList): string {
  const count = (s: TaskStatus): number => list.tasks.filter((t) => t.status === s).length;
  const lines = list.tasks.map((t) => {
    const status = t.status === 'inProgress' ? 'in-progress' : t.status;
    return [`- #${t.id} [${status}] [${t.priority}] ${t.subject}`, `  description: ${t.description}`, ...(t.blockedBy.length ? [`  blocked_by: ${t.blockedBy.join(', ')}`] : [])].join('\n');
  });
  return (
    (list.activeSummary !== undefined ? `Active Summary: ${list.activeSummary}\n` : '') +
    `Summary: ${count('done')} done, ${count('inProgress')} in progress, ${count('pending')} pending, ${list.tasks.length} total\n` +
    `Tasks:\n${lines.length ? lines.join('\n') : '(none)'}`
  );
}

/** The list for front ends (core's neutral shape; each façade words it its own way). */
export function taskDetails(list: TaskList): TaskDetails {
  return {
    type: 'task',
    tasks: list.tasks.map((t) => ({ ...t, blockedBy: [...t.blockedBy], isBlocked: activeBlockers(list.tasks, t).length > 0 })),
    ...(list.activeSummary !== undefined ? { activeSummary: list.activeSummary } : {}),
    nextId: list.nextId,
  };
}

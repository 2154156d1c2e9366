/** The `task` tool: ECA's rules and texts (src/eca/features/tools/task.clj), kept per chat. */
import { describe, expect, it } from 'vitest';
import { taskTool } from '../../src/core/tools/native/task.js';
import { storedTaskLists } from '../../src/core/tools/native/task-lists.js';
import type { StoredMessage } from '../../src/core/chat/messages.js';
import type { Tool, ToolContext, ToolResult } from '../../src/shapes/tool.js';
import { toEcaToolDetails } from '../../src/server/eca/eca-tool-details.js';
import { context, text } from './tools-helpers.js';

const chat = (chatId: string): ToolContext => ({ ...context([]), chatId });

async function call(tool: Tool, args: Record<string, unknown>, ctx = chat('c1')) {
  const r = await tool.call(args, ctx);
  return { r, text: text(r) };
}

const twoTasks = [
  { subject: 'Write parser', description: 'Parse the input; tests pass' },
  { subject: 'Wire CLI', description: 'Call the parser from main', priority: 'high', blocked_by: [1] },
];

describe('task tool', () => {
  it("plans a list and answers with ECA's text and the list as details", async () => {
    const tool = taskTool();
    const { r, text: t } = await call(tool, { op: 'plan', tasks: twoTasks });
    expect(r.error).toBe(false);
    expect(t).toBe(
      [
        'Task list created with 2 tasks',
        '',
        'Summary: 0 done, 0 in progress, 2 pending, 2 total',
        'Tasks:',
        '- #1 [pending] [medium] Write parser',
        '  description: Parse the input; tests pass',
        '- #2 [pending] [high] Wire CLI',
        '  description: Call the parser from main',
        '  blocked_by: 1',
      ].join('\n'),
    );
    expect(r.details).toEqual({
      type: 'task',
      tasks: [
        { id: 1, subject: 'Write parser', description: 'Parse the input; tests pass', status: 'pending', priority: 'medium', blockedBy: [], isBlocked: false },
        { id: 2, subject: 'Wire CLI', description: 'Call the parser from main', status: 'pending', priority: 'high', blockedBy: [1], isBlocked: true },
      ],
      nextId: 3,
    });
  });

  it('starts, refuses a blocked task, completes and reports what it unblocked', async () => {
    const tool = taskTool();
    await call(tool, { op: 'plan', tasks: twoTasks });
    const blocked = await call(tool, { op: 'start', ids: [2], active_summary: 'Wiring' });
    expect(blocked.r.error).toBe(true);
    expect(blocked.text).toBe('Cannot start task 2: blocked by 1');
    expect((await call(tool, { op: 'start', ids: [1] })).text).toBe('active_summary must be a non-blank string');

    const started = await call(tool, { op: 'start', ids: [1], active_summary: 'Writing the parser' });
    expect(started.text).toMatch(/^Started task\(s\): 1\n\nActive Summary: Writing the parser\nSummary: 0 done, 1 in progress, 1 pending, 2 total\n/);
    expect(started.text).toContain('- #1 [in-progress] [medium] Write parser');
    expect(started.r.details).toMatchObject({ activeSummary: 'Writing the parser', tasks: [{ status: 'inProgress' }, { isBlocked: true }] });

    const done = await call(tool, { op: 'complete', ids: [1] });
    expect(done.text).toMatch(/^Completed task\(s\): 1\nUnblocked: 2\n\nSummary: 1 done, 0 in progress, 1 pending, 2 total/);
    // The summary goes once nothing is in progress (task.clj `clean-summary-if-no-in-progress`).
    expect(done.r.details).not.toHaveProperty('activeSummary');
    expect(done.r.details).toMatchObject({ tasks: [{ status: 'done' }, { isBlocked: false }] });
  });

  it('keeps one list per chat', async () => {
    const tool = taskTool();
    await call(tool, { op: 'plan', tasks: twoTasks }, chat('a'));
    expect((await call(tool, { op: 'read' }, chat('b'))).text).toBe('Summary: 0 done, 0 in progress, 0 pending, 0 total\nTasks:\n(none)');
    expect((await call(tool, { op: 'read' }, chat('a'))).text).toContain('2 pending, 2 total');
  });

  it('adds, updates and deletes, dropping deleted ids from blocked_by', async () => {
    const tool = taskTool();
    await call(tool, { op: 'plan', tasks: twoTasks });
    expect((await call(tool, { op: 'add', task: { subject: 'Docs', description: 'README' } })).text).toMatch(/^Added 1 task\(s\): 3\n/);
    expect(
      (
        await call(tool, {
          op: 'add',
          tasks: [
            { subject: 'A', description: 'a' },
            { subject: 'B', description: 'b', blocked_by: [4] },
          ],
        })
      ).text,
    ).toMatch(/^Added 2 task\(s\): 4, 5\n/);
    const upd = await call(tool, { op: 'update', id: 3, task: { priority: 'low', blocked_by: [2] } });
    expect(upd.text).toMatch(/^Task 3 updated\n/);
    expect(upd.text).toContain('- #3 [pending] [low] Docs');
    const del = await call(tool, { op: 'delete', ids: [1, 4] });
    expect(del.text).toMatch(/^Deleted task\(s\): 1, 4\n/);
    expect(del.r.details).toMatchObject({
      tasks: [
        { id: 2, blockedBy: [] },
        { id: 3, blockedBy: [2] },
        { id: 5, blockedBy: [] },
      ],
    });
    const cleared = await call(tool, { op: 'clear' });
    expect(cleared.text).toBe('Task list cleared\n\nSummary: 0 done, 0 in progress, 0 pending, 0 total\nTasks:\n(none)');
    expect(cleared.r.details).toEqual({ type: 'task', tasks: [], nextId: 1 });
    // After a clear, ids start again from 1 (ECA's empty list has next-id 1).
    expect((await call(tool, { op: 'add', task: { subject: 'X', description: 'x' } })).text).toMatch(/^Added 1 task\(s\): 1\n/);
  });

  it("answers bad operations with ECA's error texts and leaves the list as it was", async () => {
    const tool = taskTool();
    await call(tool, { op: 'plan', tasks: twoTasks });
    const cases: [Record<string, unknown>, string][] = [
      [{ op: 'plan' }, "plan requires 'tasks' (non-empty array)"],
      [
        {
          op: 'plan',
          tasks: [
            { subject: 'a', description: 'b', blocked_by: [2] },
            { subject: 'c', description: 'd', blocked_by: [1] },
          ],
        },
        'Dependency cycle detected: Task 1 -> Task 2 -> Task 1',
      ],
      [{ op: 'add' }, "add requires 'task' or 'tasks'"],
      [{ op: 'add', task: { subject: ' ', description: 'x' } }, 'subject must be a non-blank string'],
      [{ op: 'add', task: { subject: 'a', description: 'x', status: 'done' } }, "Cannot set status when creating tasks. New tasks always start as pending; use 'start' or 'complete'."],
      [{ op: 'add', task: { subject: 'a', description: 'x', blocked_by: [9] } }, 'Invalid blocked_by references: 9'],
      [{ op: 'update', id: 7, task: { subject: 'x' } }, 'Task 7 not found'],
      [{ op: 'update', id: 1, task: { status: 'done' } }, "Cannot set status via update. Use 'start' or 'complete'."],
      [{ op: 'update', id: 1, task: {} }, 'No updatable fields in task'],
      [{ op: 'update', id: 1, task: { blocked_by: [1] } }, 'Task cannot block itself (id: 1)'],
      [{ op: 'update', id: 1, task: { blocked_by: [2] } }, 'Dependency cycle detected: Task 1 -> Task 2 -> Task 1'],
      [{ op: 'complete', ids: [] }, "'ids' must be a non-empty array"],
      [{ op: 'complete', ids: [1, 1] }, 'Duplicate IDs are not allowed'],
      [{ op: 'complete', ids: [3, 8] }, 'Tasks not found: 3, 8'],
      [{ op: 'complete', ids: [2] }, 'Cannot complete task 2: blocked by 1'],
    ];
    for (const [args, message] of cases) {
      const { r, text: t } = await call(tool, args);
      expect({ args, error: r.error, t }).toEqual({ args, error: true, t: message });
      expect(r.details).toBeUndefined();
    }
    expect((await call(tool, { op: 'read' })).text).toContain('0 done, 0 in progress, 2 pending, 2 total');
    const bad = await call(tool, { op: 'launch' });
    expect(bad.r.error).toBe(true);
    expect(bad.text).toMatch(/^Invalid arguments for task:\n- op: /);
  });

  it('is read-only and not hidden from plan (ECA allows eca__task in the plan agent)', () => {
    expect(taskTool()).toMatchObject({ name: 'task', readOnly: true, mutates: false });
  });
});

describe("task lists kept in the chat's stored messages", () => {
  const toolMessage = (r: ToolResult, extra: Partial<Extract<StoredMessage, { role: 'tool' }>> = {}): StoredMessage => ({
    role: 'tool',
    toolCallId: 'x',
    name: 'task',
    server: 'patchbay',
    origin: 'native',
    args: {},
    outcome: 'called',
    error: r.error,
    outputs: r.outputs,
    llmText: '',
    ...(r.details ? { details: r.details } : {}),
    totalTimeMs: 1,
    ...extra,
  });

  it('reads back the latest successful task result, ids of deleted tasks not reused (ECA next-id)', async () => {
    const stored = new Map<string, StoredMessage[]>();
    const tool = taskTool(storedTaskLists((id) => stored.get(id) ?? []));
    // As core commits each result before the next call (core/tool-calls/tool-call.ts).
    const run = async (args: Record<string, unknown>) => {
      const { r, text: t } = await call(tool, args);
      stored.set('c1', [...(stored.get('c1') ?? []), toolMessage(r)]);
      return t;
    };
    await run({ op: 'plan', tasks: twoTasks });
    await run({ op: 'delete', ids: [2] });
    expect(await run({ op: 'complete', ids: [9] })).toBe('Tasks not found: 9'); // an error result changes nothing
    // A rejected call and another tool's details are not the list.
    stored.get('c1')!.push(toolMessage({ error: false, outputs: [] }, { outcome: 'rejected' }), toolMessage({ error: false, outputs: [] }, { name: 'write_file' }));
    expect(await run({ op: 'add', task: { subject: 'Docs', description: 'README' } })).toMatch(/^Added 1 task\(s\): 3\n/);
    expect((await call(tool, { op: 'read' }, chat('other'))).text).toContain('0 total');
    // A list whose tasks are all done is cleared by the next prompt, as ECA's auto-clear does.
    await run({ op: 'complete', ids: [1, 3] });
    expect((await call(tool, { op: 'read' })).text).toContain('2 done, 0 in progress, 0 pending, 2 total');
    stored.get('c1')!.push({ role: 'user', text: 'next' });
    expect((await call(tool, { op: 'read' })).text).toContain('0 total');
    stored.set('c1', []); // the chat was cleared
    expect((await call(tool, { op: 'read' })).text).toContain('0 total');
  });
});

describe('task details on the ECA wire', () => {
  it("become ECA TaskDetails: in-progress spelled ECA's way, ids and counts added, blockedBy only when set", () => {
    const wire = toEcaToolDetails({
      type: 'task',
      activeSummary: 'Parsing',
      nextId: 4,
      tasks: [
        { id: 1, subject: 'a', description: 'A', status: 'done', priority: 'low', blockedBy: [], isBlocked: false },
        { id: 2, subject: 'b', description: 'B', status: 'inProgress', priority: 'high', blockedBy: [1], isBlocked: false },
        { id: 3, subject: 'c', description: 'C', status: 'pending', priority: 'medium', blockedBy: [2], isBlocked: true },
      ],
    });
    expect(wire).toEqual({
      type: 'task',
      tasks: [
        { id: 1, subject: 'a', description: 'A', status: 'done', priority: 'low', isBlocked: false },
        { id: 2, subject: 'b', description: 'B', status: 'in-progress', priority: 'high', isBlocked: false, blockedBy: [1] },
        { id: 3, subject: 'c', description: 'C', status: 'pending', priority: 'medium', isBlocked: true, blockedBy: [2] },
      ],
      inProgressTaskIds: [2],
      summary: { done: 1, inProgress: 1, pending: 1, total: 3 },
      activeSummary: 'Parsing',
    });
  });
});

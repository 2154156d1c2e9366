/**
 * The native `task` tool over real stdio, checked against what the ECA plugins render:
 *
 * eca-emacs eca-chat.el:
 *   (defun eca-chat--task-tool-call-p (content)
 *     (and (string= "eca" (plist-get content :server))
 *          (string= "task" (plist-get content :name))))
 *   … ("toolCalled" … (if (eca-chat--task-tool-call-p content) (eca-chat--update-task-state content) …))
 *   `eca-chat--update-task-state' reads :details :tasks (each :status "done"/"in-progress", :subject)
 *   and :activeSummary.
 *
 * eca-webview src/redux/slices/chat.ts:
 *   function isTaskToolCall(content) { … return content.server === 'eca' && content.name === 'task'; }
 *   case 'toolCalled': if (content.details?.type === 'task') { … chat.taskState = details; }
 *   with `TaskDetails` from src/protocol.ts (tasks, inProgressTaskIds, summary, activeSummary?).
 *
 * The details' shape is ECA's task.clj `task-details` (docs/protocol.md "TaskDetails").
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(home = tempDir(), root = workspace({ 'a.txt': 'alpha\n' })) {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat') }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, home, root };
}

const toolContents = (p: EcaProc, chatId: string, type: string) =>
  p
    .contents(chatId)
    .filter((c) => c.content.type === type && c.content.name === 'task')
    .map((c) => c.content);

const PLAN = {
  op: 'plan',
  tasks: [
    { subject: 'Write parser', description: 'Parse the input' },
    { subject: 'Wire CLI', description: 'Call it from main', priority: 'high', blocked_by: [1] },
  ],
};

describe('task tool (ECA task.clj) as the plugins render it', () => {
  it('two calls: each toolCalled carries the whole list as ECA TaskDetails, under server "eca", with no approval asked', async () => {
    const { p } = await boot();
    llm().script(
      [{ toolCall: { id: 't1', name: 'patchbay__task', args: PLAN } }],
      [{ toolCall: { id: 't2', name: 'patchbay__task', args: { op: 'start', ids: [1], active_summary: 'Writing the parser' } } }],
      [{ text: 'on it' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'plan the work' })).result.chatId;
    await p.turnDone(chatId);

    // Allowed without asking, as ECA's default approval allows `eca__task`.
    expect(toolContents(p, chatId, 'toolCallRun').map((c) => [c.id, c.server, c.manualApproval])).toEqual([
      ['t1', 'eca', false],
      ['t2', 'eca', false],
    ]);
    const called = toolContents(p, chatId, 'toolCalled');
    expect(called.map((c) => [c.id, c.server, c.error])).toEqual([
      ['t1', 'eca', false],
      ['t2', 'eca', false],
    ]);
    expect(called[0].details).toEqual({
      type: 'task',
      tasks: [
        { id: 1, subject: 'Write parser', description: 'Parse the input', status: 'pending', priority: 'medium', isBlocked: false },
        { id: 2, subject: 'Wire CLI', description: 'Call it from main', status: 'pending', priority: 'high', isBlocked: true, blockedBy: [1] },
      ],
      inProgressTaskIds: [],
      summary: { done: 0, inProgress: 0, pending: 2, total: 2 },
    });
    expect(called[1].details).toEqual({
      type: 'task',
      tasks: [
        { id: 1, subject: 'Write parser', description: 'Parse the input', status: 'in-progress', priority: 'medium', isBlocked: false },
        { id: 2, subject: 'Wire CLI', description: 'Call it from main', status: 'pending', priority: 'high', isBlocked: true, blockedBy: [1] },
      ],
      inProgressTaskIds: [1],
      summary: { done: 0, inProgress: 1, pending: 1, total: 2 },
      activeSummary: 'Writing the parser',
    });
    expect(called[1].outputs[0].text).toMatch(/^Started task\(s\): 1\n\nActive Summary: Writing the parser\n/);

    // The model reads ECA's text for the second call (the list after the first one was kept).
    const third = llm().requests[2].body.messages;
    const toolMsgs = third.filter((m: any) => m.role === 'tool').map((m: any) => m.content);
    expect(toolMsgs[1]).toContain('- #1 [in-progress] [medium] Write parser');

    // A chat's list is its own: a new chat starts empty.
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__task', args: { op: 'read' } } }], [{ text: 'empty' }]);
    const other = (await p.request(ECA.chatPrompt, { message: 'read' })).result.chatId;
    await p.turnDone(other);
    expect(toolContents(p, other, 'toolCalled')[0].details).toEqual({ type: 'task', tasks: [], inProgressTaskIds: [], summary: { done: 0, inProgress: 0, pending: 0, total: 0 } });
  });

  it('a bad operation is an error result the model reads, without details; the plan agent is offered the tool', async () => {
    const { p } = await boot();
    llm().script([{ toolCall: { id: 'b1', name: 'patchbay__task', args: { op: 'complete', ids: [7] } } }], [{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'x', agent: 'plan' })).result.chatId;
    await p.turnDone(chatId);
    expect(llm().requests[0].body.tools.map((t: any) => t.function.name)).toContain('patchbay__task');
    const [called] = toolContents(p, chatId, 'toolCalled');
    expect(called).toMatchObject({ server: 'eca', error: true, outputs: [{ type: 'text', text: 'Tasks not found: 7' }] });
    expect(called).not.toHaveProperty('details');
  });

  it('chat/open replays the stored task details in ECA shape after a restart (eca-emacs eca-chat-resume); the list lives on, and chat/clear drops it (ECA chat.clj clear-chat)', async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'alpha\n' });
    const { p } = await boot(home, root);
    llm().script([{ toolCall: { id: 't1', name: 'patchbay__task', args: PLAN } }], [{ text: 'planned' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'plan' })).result.chatId;
    await p.turnDone(chatId);
    await p.stop();

    const { p: q } = await boot(home, root);
    await q.request(ECA.chatOpen, { chatId });
    const [replayed] = toolContents(q, chatId, 'toolCalled');
    expect(replayed).toMatchObject({ id: 't1', server: 'eca', details: { type: 'task', inProgressTaskIds: [], summary: { pending: 2, total: 2 } } });
    expect(replayed.details.tasks[1]).toEqual({ id: 2, subject: 'Wire CLI', description: 'Call it from main', status: 'pending', priority: 'high', isBlocked: true, blockedBy: [1] });

    // The restarted server goes on with the same list (ECA saves `:task` with the chat).
    llm().script([{ toolCall: { id: 't2', name: 'patchbay__task', args: { op: 'complete', ids: [1] } } }], [{ text: 'done' }]);
    await q.request(ECA.chatPrompt, { chatId, message: 'finish one' });
    await q.turnDone(chatId);
    const [completed] = toolContents(q, chatId, 'toolCalled').filter((c) => c.id === 't2');
    expect(completed.outputs[0].text).toMatch(/^Completed task\(s\): 1\nUnblocked: 2\n/);
    expect(completed.details.summary).toEqual({ done: 1, inProgress: 0, pending: 1, total: 2 });

    // eca-emacs `eca-chat-clear` sends chat/clear with `:messages t`.
    await q.request(ECA.chatClear, { chatId, messages: true });
    llm().script([{ toolCall: { id: 't3', name: 'patchbay__task', args: { op: 'read' } } }], [{ text: 'nothing' }]);
    await q.request(ECA.chatPrompt, { chatId, message: 'what is left' });
    await q.turnDone(chatId, 2);
    const [read] = toolContents(q, chatId, 'toolCalled').filter((c) => c.id === 't3');
    expect(read.details).toMatchObject({ tasks: [], summary: { total: 0 } });
  });
  it('a list whose tasks are all done is cleared as the next prompt starts, and the editor is told before the user message (ECA chat.clj prompt → task.clj auto-clear-completed!; eca-webview chat.ts sets taskState null on an empty task toolCalled)', async () => {
    const { p } = await boot();
    llm().script(
      [{ toolCall: { id: 't1', name: 'patchbay__task', args: { op: 'plan', tasks: [{ subject: 'Only one', description: 'x' }] } } }],
      [{ toolCall: { id: 't2', name: 'patchbay__task', args: { op: 'complete', ids: [1] } } }],
      [{ text: 'all done' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'do it' })).result.chatId;
    await p.turnDone(chatId);
    expect(toolContents(p, chatId, 'toolCalled').map((c) => c.id)).toEqual(['t1', 't2']);

    llm().script([{ text: 'next thing' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'something else', contentId: 'u2' });
    await p.turnDone(chatId, 2);
    const all = p.contents(chatId).map((c) => c.content);
    const cleared = all.findIndex((c) => c.type === 'toolCalled' && c.name === 'task' && c.server === 'eca' && !['t1', 't2'].includes(c.id));
    const user = all.findIndex((c) => c.type === 'text' && c.contentId === 'u2');
    expect(cleared).toBeGreaterThan(0);
    expect(cleared).toBeLessThan(user);
    expect(all[cleared].details).toEqual({ type: 'task', tasks: [], inProgressTaskIds: [], summary: { done: 0, inProgress: 0, pending: 0, total: 0 } });

    // Told once: the prompt after that has no list left to clear.
    llm().script([{ text: 'again' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'third' });
    await p.turnDone(chatId, 3);
    expect(toolContents(p, chatId, 'toolCalled')).toHaveLength(3);
  });
});

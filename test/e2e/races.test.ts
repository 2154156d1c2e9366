/** Approvals, agents, delete, clear and stop racing a running turn. */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(extra: Record<string, unknown> = {}) {
  const root = workspace({ 'a.txt': 'a' });
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'openai-chat', extra) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  return { p, root };
}

const runOf = (p: EcaProc, id: string) => p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === id, id);

describe('turn races', () => {
  it('a session approval does not cover paths outside the workspace', async () => {
    const { p, root } = await boot();
    const outside = join(tempDir('pb-out-'), 'x.txt');
    llm().script(
      [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'in.txt', content: '1' } } }],
      [{ toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: outside, content: '2' } } }],
      [{ text: 'done' }],
    );
    const chatId = (await p.request('chat/prompt', { message: 'go' })).result.chatId;
    await runOf(p, 'w1');
    p.notify('chat/toolCallApprove', { chatId, toolCallId: 'w1', save: 'session' });
    const second = await runOf(p, 'w2');
    expect(second.params.content.manualApproval).toBe(true);
    p.notify('chat/toolCallReject', { chatId, toolCallId: 'w2' });
    await p.turnDone(chatId);
    expect(existsSync(join(root, 'in.txt'))).toBe(true);
    expect(existsSync(outside)).toBe(false);
  });

  it('a prompt queued with another agent does not change the running turn', async () => {
    const { p } = await boot({ toolCall: { approval: { byDefault: 'allow' } } });
    llm().script([{ delay: 300 }, { toolCall: { id: 'p1', name: 'patchbay__write_file', args: { path: 'x.txt', content: 'x' } } }], [{ text: 'planned' }], [{ text: 'second' }]);
    const chatId = (await p.request('chat/prompt', { message: 'plan it', agent: 'plan' })).result.chatId;
    await p.request('chat/prompt', { chatId, message: 'now do it', agent: 'code' });
    await p.turnDone(chatId, 2);
    const rejected = p.contents(chatId).find((c) => c.content.type === 'toolCallRejected');
    expect(rejected?.content.reason).toBe('userConfigDeny');
    const firstTools = llm().requests[0].body.tools.map((t: any) => t.function.name);
    expect(firstTools).not.toContain('patchbay__write_file');
    const lastTools = llm()
      .requests.at(-1)!
      .body.tools.map((t: any) => t.function.name);
    expect(lastTools).toContain('patchbay__write_file');
  });

  it('delete during a turn: nothing more is sent for the chat and queued prompts are dropped', async () => {
    const { p } = await boot();
    llm().script([{ text: 'partial' }, { stall: 'forever' }], [{ text: 'should not run' }]);
    const chatId = (await p.request('chat/prompt', { message: 'one' })).result.chatId;
    await p.request('chat/prompt', { chatId, message: 'two' });
    await p.waitFor((m) => m.params?.content?.text === 'partial');
    await p.request('chat/delete', { chatId });
    const deletedAt = p.messages.findIndex((m) => m.method === 'chat/deleted');
    await new Promise((r) => setTimeout(r, 400));
    const after = p.messages.slice(deletedAt + 1).filter((m) => m.params?.chatId === chatId);
    expect(after).toEqual([]);
    expect(llm().requests).toHaveLength(1);
    expect(p.stderr).not.toMatch(/FOREIGN KEY/);
  });

  it('stop after steering does not start another turn', async () => {
    const { p } = await boot();
    llm().script([{ text: 'working' }, { stall: 'forever' }]);
    const chatId = (await p.request('chat/prompt', { message: 'go' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.text === 'working');
    p.notify('chat/promptSteer', { chatId, message: 'also this' });
    p.notify('chat/promptStop', { chatId });
    await p.turnDone(chatId);
    await new Promise((r) => setTimeout(r, 300));
    const statuses = p.messages.filter((m) => m.method === 'chat/statusChanged').map((m) => m.params.status);
    expect(statuses).toEqual(['running', 'stopping', 'idle']);
    expect(llm().requests).toHaveLength(1);
  });

  it('a file: URI with a remote host in a tool path asks instead of failing the turn', async () => {
    const { p } = await boot();
    llm().script([{ toolCall: { id: 'u1', name: 'patchbay__read_file', args: { path: 'file://evil/etc/passwd' } } }], [{ text: 'ok' }]);
    const chatId = (await p.request('chat/prompt', { message: 'read' })).result.chatId;
    const run = await runOf(p, 'u1');
    expect(run.params.content.manualApproval).toBe(true);
    p.notify('chat/toolCallReject', { chatId, toolCallId: 'u1' });
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('ok');
  });
});

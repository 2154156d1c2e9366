// "Reject always" (ACP `session/request_permission` option kind `reject_always`, schema.json
// PermissionOptionKind): ChatService.reject(chatId, id, true) refuses every later call of that tool
// in the chat without asking, the way approve(…, true) allows them (core/tool-calls/tool-call.ts decide()).
// ECA has no such answer (`chat/toolCallReject` carries no scope), so this drives a Workspace as
// the ACP façade will, with the fake LLM over real HTTP.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { turnsWorkspace, type TurnsWorkspace } from '../support/workspace-turns.js';

let t: TurnsWorkspace | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const write = (id: string, path: string) => ({ toolCall: { id, name: 'patchbay__write_file', args: { path, content: 'x\n' } } });

describe('reject for the session', () => {
  it('a tool rejected for the session is refused unasked at its next call; another tool, and the same tool in another chat, still ask', { timeout: 30_000 }, async () => {
    t = await turnsWorkspace();
    const { ws, llm } = t;
    // The user rejects write_file for the session, and approves anything else once.
    t.onEvent((chatId, e) => {
      if (e.type !== 'toolCall' || e.state !== 'announced' || !e.needsApproval) return;
      if (e.name === 'write_file' && chatId === 'c1') ws.chats.reject(chatId, e.id, true);
      else ws.chats.approve(chatId, e.id);
    });
    llm.script([write('w1', 'a.txt')], [{ text: 'ok, not written' }]);
    expect(await ws.chats.prompt({ chatId: 'c1', message: 'write a.txt' }).done).toEqual({ stopReason: 'end_turn' });
    expect(t.calls('c1')).toEqual(['announced!:write_file', 'rejected:write_file']);

    // Next turn: the same tool is refused without an approval request; a different tool still asks and runs.
    llm.script([write('w2', 'b.txt'), { toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'echo shell-ran' } } }], [{ text: 'done' }]);
    const before = t.calls('c1').length;
    expect(await ws.chats.prompt({ chatId: 'c1', message: 'try again' }).done).toEqual({ stopReason: 'end_turn' });
    expect(t.calls('c1').slice(before)).toEqual(['rejected:write_file', 'announced!:shell_command', 'running:shell_command', 'done:shell_command']);
    const refused = t.events.find(({ e }) => e.type === 'toolCall' && e.id === 'w2' && e.state === 'rejected')?.e;
    expect(refused).toMatchObject({ reason: 'denied' });
    // The model reads why, in the tool message of the request that follows.
    const lastRequest = llm.requests.at(-1)!.body;
    const toolMessage = lastRequest.messages.find((m: { role: string; tool_call_id?: string }) => m.role === 'tool' && m.tool_call_id === 'w2');
    expect(toolMessage.content).toContain('rejected "write_file" for the rest of this chat');
    expect(existsSync(join(t.root, 'a.txt')) || existsSync(join(t.root, 'b.txt'))).toBe(false);

    // Per chat: another chat is asked about write_file (and approves it here).
    llm.script([write('w3', 'c.txt')], [{ text: 'written' }]);
    expect(await ws.chats.prompt({ chatId: 'c2', message: 'write c.txt' }).done).toEqual({ stopReason: 'end_turn' });
    expect(t.calls('c2')).toEqual(['announced!:write_file', 'running:write_file', 'done:write_file']);
    expect(existsSync(join(t.root, 'c.txt'))).toBe(true);
  });

  it('a plain reject (not for the session) asks again at the next call', { timeout: 30_000 }, async () => {
    t = await turnsWorkspace();
    const { ws, llm } = t;
    t.onEvent((chatId, e) => e.type === 'toolCall' && e.state === 'announced' && e.needsApproval && ws.chats.reject(chatId, e.id));
    llm.script([write('w1', 'a.txt')], [{ text: 'no' }], [write('w2', 'a.txt')], [{ text: 'no again' }]);
    await ws.chats.prompt({ chatId: 'c1', message: 'one' }).done;
    await ws.chats.prompt({ chatId: 'c1', message: 'two' }).done;
    expect(t.calls('c1')).toEqual(['announced!:write_file', 'rejected:write_file', 'announced!:write_file', 'rejected:write_file']);
  });
});

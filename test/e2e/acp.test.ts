/**
 * `patchbay acp` with the ACP SDK's client over real stdio: the handshake, a streamed answer, a
 * tool call that asks permission and arrives with its diff, modes and models as config options.
 * The contract is ACP v1 (agentclientprotocol.com: initialization.mdx, prompt-turn.mdx,
 * tool-calls.mdx, session-config-options.mdx) as the SDK's schema encodes it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods, type SessionUpdate } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

function start(extra: Record<string, unknown> = {}): { p: AcpProc; root: string } {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'const a = 1;\nconst b = 2;\n' }));
  const p = track(new AcpProc({ home, config: { ...fakeProviderConfig(llm().url), ...extra } }));
  return { p, root };
}

const ofKind = <K extends SessionUpdate['sessionUpdate']>(us: SessionUpdate[], k: K) => us.filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === k);

describe('patchbay acp', () => {
  it('answers initialize with protocol 1, its capabilities and its name', async () => {
    const { p } = start();
    const r = await p.initialize({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });
    expect(r.protocolVersion).toBe(1);
    expect(r.agentCapabilities?.loadSession).toBe(true);
    expect(r.agentCapabilities?.promptCapabilities).toMatchObject({ image: true, embeddedContext: true, audio: false });
    expect(r.agentInfo?.name).toBe('patchbay');
  });

  it('streams the answer as agent message chunks and ends the prompt with end_turn; commands are offered', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'Hello from patchbay', chunks: 3 }]);
    const r = await p.prompt(sessionId, 'hi');
    expect(r.stopReason).toBe('end_turn');
    expect(p.text(sessionId)).toBe('Hello from patchbay');
    // The user's own message is not echoed back.
    expect(ofKind(p.updates(sessionId), 'user_message_chunk')).toEqual([]);
    const cmds = ofKind(p.updates(sessionId), 'available_commands_update')[0];
    expect(cmds?.availableCommands.map((c) => c.name)).toEqual(expect.arrayContaining(['compact', 'rules']));
    // The model got the prompt.
    expect(JSON.stringify(llm().requests.at(-1)?.body)).toContain('hi');
  });

  it('an edit asks permission with its diff; allowed, the file changes and the call completes', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: join(root, 'a.txt'), original_content: 'const b = 2;', new_content: 'const b = 3;' } } }], [{ text: 'edited' }]);
    const r = await p.prompt(sessionId, 'edit it');
    expect(r.stopReason).toBe('end_turn');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
    const ask = p.permissionRequests[0]!;
    expect(ask.sessionId).toBe(sessionId);
    expect(ask.toolCall.toolCallId).toBe('e1');
    expect(ask.options.map((o) => o.kind)).toEqual(expect.arrayContaining(['allow_once', 'allow_always', 'reject_once']));
    const call = ofKind(p.updates(sessionId), 'tool_call')[0]!;
    expect(call).toMatchObject({ toolCallId: 'e1', kind: 'edit', status: 'pending', locations: [{ path: join(root, 'a.txt') }] });
    expect(call.content).toEqual([{ type: 'diff', path: join(root, 'a.txt'), oldText: 'const a = 1;\nconst b = 2;\n', newText: 'const a = 1;\nconst b = 3;\n' }]);
    const statuses = ofKind(p.updates(sessionId), 'tool_call_update').map((u) => u.status);
    expect(statuses).toContain('in_progress');
    expect(statuses.at(-1)).toBe('completed');
    expect(p.text(sessionId)).toBe('edited');
  });

  it('rejected, the file is untouched and the call is failed with the reason', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    p.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'reject' } });
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: join(root, 'a.txt'), original_content: 'const b = 2;', new_content: 'const b = 3;' } } }], [{ text: 'ok' }]);
    expect((await p.prompt(sessionId, 'edit it')).stopReason).toBe('end_turn');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('const a = 1;\nconst b = 2;\n');
    const last = ofKind(p.updates(sessionId), 'tool_call_update').at(-1)!;
    expect(last).toMatchObject({ toolCallId: 'e1', status: 'failed' });
    expect(JSON.stringify(last.content)).toContain('Rejected by the user');
  });

  it('modes and models are config options; plan mode hides the edit tools from the model', async () => {
    const { p, root } = start();
    await p.initialize();
    const r = await p.agent.request(methods.agent.session.new, { cwd: root, mcpServers: [] });
    expect(r.modes?.currentModeId).toBe('code');
    expect(r.configOptions?.map((o) => o.id)).toEqual(['mode', 'model']);
    const set = await p.agent.request(methods.agent.session.setConfigOption, { sessionId: r.sessionId, configId: 'mode', value: 'plan' });
    expect(set.configOptions.find((o) => o.id === 'mode')).toMatchObject({ currentValue: 'plan' });
    llm().script([{ text: 'planned' }]);
    await p.prompt(r.sessionId, 'plan it');
    const tools = JSON.stringify((llm().requests.at(-1)?.body as { tools?: unknown }).tools ?? []);
    expect(tools).toContain('read_file');
    expect(tools).not.toContain('edit_file');
    await expect(p.agent.request(methods.agent.session.setConfigOption, { sessionId: r.sessionId, configId: 'model', value: 'nope/none' })).rejects.toMatchObject({ code: -32602 });
  });

  it("a second session in another folder works in that folder's workspace: its files are inside", async () => {
    const { p, root } = start();
    const other = scratch(workspace({ 'b.txt': 'in the other folder\n' }));
    await p.initialize();
    await p.newSession(root);
    const second = await p.newSession(other);
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: join(other, 'b.txt') } } }], [{ text: 'read' }]);
    expect((await p.prompt(second, 'read b')).stopReason).toBe('end_turn');
    // Read without asking (read-only, inside the workspace), and the model got the text.
    expect(p.permissionRequests).toEqual([]);
    expect(JSON.stringify(llm().requests[1]?.body)).toContain('in the other folder');
  });

  it('session/list with a cwd lists the chats started in that folder, each with its own cwd; without one, all', async () => {
    const { p, root } = start();
    const other = scratch(workspace({ 'b.txt': 'b\n' }));
    await p.initialize();
    const a = await p.newSession(root);
    const b = await p.newSession(other);
    llm().script([{ text: 'a' }], [{ text: 'b' }]);
    await p.prompt(a, 'in a');
    await p.prompt(b, 'in b');
    const inA = await p.agent.request(methods.agent.session.list, { cwd: root });
    expect(inA.sessions.map((x) => [x.sessionId, x.cwd])).toEqual([[a, root]]);
    const inB = await p.agent.request(methods.agent.session.list, { cwd: other });
    expect(inB.sessions.map((x) => [x.sessionId, x.cwd])).toEqual([[b, other]]);
    const all = await p.agent.request(methods.agent.session.list, {});
    expect(all.sessions.map((x) => x.sessionId).sort()).toEqual([a, b].sort());
  });
});

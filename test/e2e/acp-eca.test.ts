/**
 * One store behind two façades: a chat started over ECA (eca-emacs `chat/prompt`) is loaded over
 * ACP (`session/load` replays it, ACP session-setup.mdx "Loading Sessions") and continued there,
 * and a session started over ACP is opened over ECA (`chat/open`, ECA docs/protocol.md) and
 * continued there. The model sees the whole conversation each time.
 */
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useEcaProcs, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const trackAcp = useAcpProcs();
const trackEca = useEcaProcs();

/** The user and assistant texts the model was sent in its last request, in order. */
function lastConversation(): string[] {
  const body = llm().requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
  return body.messages.filter((m) => m.role !== 'system').map((m) => `${m.role}: ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
}

describe('ECA and ACP share chats', () => {
  it('a chat started over ECA is loaded over ACP, replayed, and continued', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'x.txt': 'x\n' }));
    const config = fakeProviderConfig(llm().url);
    const eca = trackEca(new EcaProc({ home, config }));
    await eca.initialize(root);
    llm().script([{ text: 'the answer is 42' }]);
    const chatId = (await eca.request(ECA.chatPrompt, { message: 'what is the answer?' })).result.chatId as string;
    await eca.turnDone(chatId);
    await eca.stop();

    const acp = trackAcp(new AcpProc({ home, config }));
    await acp.initialize();
    const loaded = await acp.agent.request(methods.agent.session.load, { sessionId: chatId, cwd: root, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('code');
    // The replay came before the answer: the user's message and the assistant's, in order.
    expect(acp.text(chatId, 'user_message_chunk')).toBe('what is the answer?');
    expect(acp.text(chatId)).toBe('the answer is 42');
    const kinds = acp.updates(chatId).map((u) => u.sessionUpdate);
    expect(kinds.indexOf('user_message_chunk')).toBeLessThan(kinds.indexOf('agent_message_chunk'));
    // session/list finds it.
    const list = await acp.agent.request(methods.agent.session.list, { cwd: root });
    expect(list.sessions.map((s) => s.sessionId)).toContain(chatId);

    llm().script([{ text: 'still 42' }]);
    expect((await acp.prompt(chatId, 'are you sure?')).stopReason).toBe('end_turn');
    expect(lastConversation()).toEqual([expect.stringContaining('what is the answer?'), 'assistant: the answer is 42', expect.stringContaining('are you sure?')]);
  });

  it('a session started over ACP is opened over ECA and continued', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'x.txt': 'x\n' }));
    const config = fakeProviderConfig(llm().url);
    const acp = trackAcp(new AcpProc({ home, config }));
    await acp.initialize();
    const sessionId = await acp.newSession(root);
    llm().script([{ text: 'hello over ACP' }]);
    await acp.prompt(sessionId, 'first over ACP');
    await acp.stop();

    const eca = trackEca(new EcaProc({ home, config }));
    await eca.initialize(root);
    await eca.request(ECA.chatOpen, { chatId: sessionId });
    expect(eca.text(sessionId)).toBe('hello over ACP');
    llm().script([{ text: 'hello over ECA' }]);
    await eca.request(ECA.chatPrompt, { chatId: sessionId, message: 'second over ECA' });
    await eca.turnDone(sessionId);
    expect(lastConversation()).toEqual([expect.stringContaining('first over ACP'), 'assistant: hello over ACP', expect.stringContaining('second over ECA')]);
  });

  it("an ACP session never prompted is not in ECA's chat/list (its pickers never show an empty chat); once prompted, it is", async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'x.txt': 'x\n' }));
    const config = fakeProviderConfig(llm().url);
    const acp = trackAcp(new AcpProc({ home, config }));
    await acp.initialize();
    const empty = await acp.newSession(root);
    const used = await acp.newSession(root);
    llm().script([{ text: 'hello' }]);
    await acp.prompt(used, 'hi');
    // ACP's own list keeps the empty one: the client made it and may come back to it.
    expect((await acp.agent.request(methods.agent.session.list, { cwd: root })).sessions.map((s) => s.sessionId).sort()).toEqual([empty, used].sort());
    await acp.stop();

    const eca = trackEca(new EcaProc({ home, config }));
    await eca.initialize(root);
    const ids = (await eca.request(ECA.chatList, {})).result.chats.map((c: { id: string }) => c.id);
    expect(ids).toEqual([used]);
    // It is still there to open.
    expect((await eca.request(ECA.chatOpen, { chatId: empty })).result).toMatchObject({ found: true });
  });

  it('a replayed edit comes back as a completed call with its diff; the replay is not echoed as live', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'x.txt': 'one\ntwo\n' }));
    const config = fakeProviderConfig(llm().url);
    const first = trackAcp(new AcpProc({ home, config }));
    await first.initialize();
    const sessionId = await first.newSession(root);
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: `${root}/x.txt`, original_content: 'two', new_content: 'TWO' } } }], [{ text: 'edited' }]);
    await first.prompt(sessionId, 'edit x');
    await first.stop();

    const again = trackAcp(new AcpProc({ home, config }));
    await again.initialize();
    await again.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    const updates = again.updates(sessionId);
    expect(again.text(sessionId, 'user_message_chunk')).toBe('edit x');
    const call = updates.find((u) => u.sessionUpdate === 'tool_call');
    expect(call).toMatchObject({ toolCallId: 'e1', kind: 'edit' });
    const last = updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'e1').at(-1);
    expect(last).toMatchObject({ status: 'completed' });
    expect(JSON.stringify([call, last])).toContain('"type":"diff"');
    expect(again.text(sessionId)).toBe('edited');
    // Nothing asked again on replay.
    expect(again.permissionRequests).toEqual([]);
  });
});

/**
 * Tool-call ids are unique within a chat. A provider may repeat one (a later call reusing an
 * earlier call's id, in a later step or in the same one); editors key a call's card by its id
 * (ECA `toolCall*` contents, eca-webview `applyContentToMessages`; ACP `toolCallId`) and the store
 * keys the call's row by it, so a repeat overwrote the earlier card and stored call. patchbay
 * gives the repeat an id of its own, and that id is the one the model reads back: in the
 * assistant message's calls and in the tool results (OpenAI `tool_calls[].id` / `tool_call_id`,
 * Anthropic `tool_use.id` / `tool_use_id`, whose ids must match `^[a-zA-Z0-9_-]+$`).
 */
import { describe, expect, it } from 'vitest';
import { methods, type SessionUpdate } from '@agentclientprotocol/sdk';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const trackAcp = useAcpProcs();

const FILES = { 'a.txt': 'alpha\n', 'b.txt': 'beta\n' };
const read = (id: string, path: string) => ({ toolCall: { id, name: 'patchbay__read_file', args: { path } } });

async function boot(home: string, root: string, api = 'openai-chat'): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, api) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** Two turns, each calling read_file under the same id `dup`: a.txt, then b.txt. */
async function repeatedAcrossTurns(p: EcaProc, chatId: string): Promise<void> {
  llm().script([read('dup', 'a.txt')], [{ text: 'read a' }]);
  await p.request(ECA.chatPrompt, { chatId, message: 'read a', contentId: 'u1' });
  await p.turnDone(chatId, 1);
  llm().script([read('dup', 'b.txt')], [{ text: 'read b' }]);
  await p.request(ECA.chatPrompt, { chatId, message: 'read b', contentId: 'u2' });
  await p.turnDone(chatId, 2);
}

/** Each `toolCalled` of the contents: its id and the text it returned. */
function called(contents: Array<{ content: any }>): Array<{ id: string; out: string }> {
  return contents.filter((c) => c.content.type === 'toolCalled').map((c) => ({ id: c.content.id, out: c.content.outputs.map((o: any) => o.text).join('') }));
}

/** What the chat's calls return, in order: a.txt's text, then b.txt's (read_file numbers its lines). */
function expectAlphaThenBeta(calls: Array<{ out: string }>): void {
  expect(calls).toHaveLength(2);
  expect(calls[0].out).toContain('alpha');
  expect(calls[1].out).toContain('beta');
}

describe('tool-call ids are unique within a chat (ECA)', () => {
  it('a later turn reusing an id gets its own: two cards live, both calls after chat/open, and the model reads matching ids (OpenAI)', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace(FILES));
    const p = await boot(home, root);
    await repeatedAcrossTurns(p, 'c1');

    const live = called(p.contents('c1'));
    expectAlphaThenBeta(live);
    expect(live[0].id).toBe('dup');
    expect(live[1].id).not.toBe('dup');
    // Every stage of the second call names its own id: none updates the first card.
    const second = p.contents('c1').filter((c) => c.content.id === live[1].id && c.content.type?.startsWith('toolCall'));
    expect(second.map((c) => c.content.type)).toEqual(expect.arrayContaining(['toolCallPrepare', 'toolCallRun', 'toolCallRunning', 'toolCalled']));
    expect(p.contents('c1').filter((c) => c.content.id === 'dup' && c.content.type === 'toolCalled')).toHaveLength(1);

    // The model's history of turn 2's last step: each call's id matches its result's, and they differ.
    const body = llm().requests.at(-1)!.body;
    const asked = body.messages.filter((m: any) => m.role === 'assistant' && m.tool_calls).flatMap((m: any) => m.tool_calls.map((c: any) => c.id));
    const answered = body.messages.filter((m: any) => m.role === 'tool').map((m: any) => [m.tool_call_id, m.content]);
    expect(asked).toEqual(['dup', live[1].id]);
    expect(answered.map(([id]: string[]) => id)).toEqual(asked);
    expect(answered[0][1]).toContain('alpha');
    expect(answered[1][1]).toContain('beta');

    // After a restart, chat/open replays both calls, each with its own result.
    await p.stop();
    const q = await boot(home, root);
    const from = q.messages.length;
    expect((await q.request(ECA.chatOpen, { chatId: 'c1' })).result.found).toBe(true);
    const replayed = called(
      q.messages
        .slice(from)
        .filter((m) => m.method === ECA.chatContentReceived.method)
        .map((m) => m.params),
    );
    expect(replayed).toEqual(live);
  });

  it('two calls of one step under one id are two calls; Anthropic reads ids in its own pattern', async () => {
    const p = await boot(scratch(tempDir()), scratch(workspace(FILES)), 'anthropic');
    llm().script([read('toolu_same', 'a.txt'), read('toolu_same', 'b.txt')], [{ text: 'both read' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c2', message: 'read both', contentId: 'u1' });
    await p.turnDone('c2');

    const calls = called(p.contents('c2'));
    expectAlphaThenBeta(calls);
    expect(calls[0].id).toBe('toolu_same');
    expect(calls[1].id).not.toBe('toolu_same');
    expect(calls[1].id).toMatch(/^[a-zA-Z0-9_-]+$/);

    const body = llm().requests.at(-1)!.body;
    const blocks = body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []));
    const uses = blocks.filter((b: any) => b.type === 'tool_use').map((b: any) => b.id);
    const results = blocks.filter((b: any) => b.type === 'tool_result').map((b: any) => b.tool_use_id);
    expect(uses).toEqual(calls.map((c) => c.id));
    expect(results).toEqual(uses);
  });
});

describe('tool-call ids are unique within a chat (ACP)', () => {
  const toolCalls = (us: SessionUpdate[]) => us.filter((u): u is Extract<SessionUpdate, { sessionUpdate: 'tool_call' }> => u.sessionUpdate === 'tool_call');
  /** Each call's final content text, by id. */
  const results = (us: SessionUpdate[]) =>
    Object.fromEntries(
      us
        .filter((u): u is Extract<SessionUpdate, { sessionUpdate: 'tool_call_update' }> => u.sessionUpdate === 'tool_call_update' && u.status === 'completed')
        .map((u) => [u.toolCallId, JSON.stringify(u.content ?? [])]),
    );

  it('a repeated id is a second tool_call, live and after session/load in a new process', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace(FILES));
    const config = fakeProviderConfig(llm().url);
    const p = trackAcp(new AcpProc({ home, config }));
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([read('dup', 'a.txt')], [{ text: 'read a' }], [read('dup', 'b.txt')], [{ text: 'read b' }]);
    expect((await p.prompt(sessionId, 'read a')).stopReason).toBe('end_turn');
    expect((await p.prompt(sessionId, 'read b')).stopReason).toBe('end_turn');

    const live = toolCalls(p.updates(sessionId)).map((u) => u.toolCallId);
    expect(live).toHaveLength(2);
    expect(live[0]).toBe('dup');
    expect(live[1]).not.toBe('dup');
    const liveResults = results(p.updates(sessionId));
    expect(liveResults[live[0]]).toContain('alpha');
    expect(liveResults[live[1]]).toContain('beta');
    await p.stop();

    const q = trackAcp(new AcpProc({ home, config }));
    await q.initialize();
    await q.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    expect(toolCalls(q.updates(sessionId)).map((u) => u.toolCallId)).toEqual(live);
    const loaded = results(q.updates(sessionId));
    expect(loaded[live[0]]).toContain('alpha');
    expect(loaded[live[1]]).toContain('beta');
  });
});

/**
 * MCP `elicitation/create` (form mode) answered through `chat/askQuestion`, over the built
 * binary's real stdio, with a real MCP server process (test/fixtures/mcp-elicit.mjs, the SDK's
 * `Server.elicitInput`, which also validates accepted content against the requested schema).
 * The question follows ECA docs/protocol.md "Chat ask question" and eca-emacs eca-chat.el
 * `eca-chat-handle-ask-question` (answers `{answer, cancelled}`; `initialize` declares
 * `chatCapabilities.askQuestion` in eca.el); ECA itself declares no elicitation, so the MCP
 * side follows the spec (client/elicitation: accept/decline/cancel, capability only when supported).
 */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA } from '../../src/protocol/eca/methods.js';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const FIXTURE = resolve(import.meta.dirname, '../fixtures/mcp-elicit.mjs');
const { llm, track } = useFakeLlmSuite();

const ASKING = { capabilities: { codeAssistant: { chat: true, chatCapabilities: { askQuestion: true } } } };

async function boot(extra: Record<string, unknown> = ASKING, configExtra: Record<string, unknown> = {}): Promise<EcaProc> {
  const config = fakeProviderConfig(llm().url, 'openai-chat', {
    mcpServers: { elicit: { command: process.execPath, args: [FIXTURE] } },
    toolCall: { approval: { allow: { elicit: {} } } },
    ...configExtra,
  });
  const p = track(new EcaProc({ home: tempDir(), config }));
  await p.initialize(workspace({ 'a.txt': 'a' }), extra);
  await p.waitFor((m) => m.method === 'tool/serverUpdated' && m.params.name === 'elicit' && m.params.status === 'running', 'elicit running', 30_000);
  return p;
}

/** The nth chat/askQuestion request (1-based) the editor got. */
function asked(p: EcaProc, nth = 1): Promise<Msg> {
  let n = 0;
  return p.waitFor((m) => m.method === ECA.chatAskQuestion.method && m.id !== undefined && ++n === nth, `chat/askQuestion #${nth}`);
}
const answer = (p: EcaProc, q: Msg, text: string) => p.send({ id: q.id, result: { answer: text, cancelled: false } });
const toolMessage = (n: number): string => llm().requests[n].body.messages.find((m: any) => m.role === 'tool').content;

async function callTool(p: EcaProc, tool: string, id: string): Promise<string> {
  llm().script([{ toolCall: { id, name: `elicit__${tool}`, args: {} } }], [{ text: 'done' }]);
  return (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
}

describe('MCP elicitation through chat/askQuestion', () => {
  it('a boolean field is one question with Yes/No options in the calling chat, and the answer goes back as accepted content', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'confirm', 'c1');
    const q = await asked(p);
    expect(q.params).toEqual({
      chatId,
      question: 'MCP server elicit asks: Delete the branch?',
      options: [{ label: 'Yes' }, { label: 'No' }],
      toolCallId: 'c1',
      allowFreeform: false,
    });
    answer(p, q, 'Yes');
    await p.turnDone(chatId);
    expect(JSON.parse(toolMessage(1))).toEqual({ action: 'accept', content: { ok: true } });
  });

  it('a form asks one question per field in order, re-asks an invalid answer, and applies defaults to skipped fields', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'signup', 's1');
    const name1 = await asked(p, 1);
    expect(name1.params.question).toBe('MCP server elicit asks: Create your account\n\n(1/4) Name: Your full name (length at least 2)');
    expect(name1.params.allowFreeform).toBe(true);
    // Required and without a default: nothing to pick, no skip.
    expect(name1.params.options).toBeUndefined();
    answer(p, name1, 'A');
    const name2 = await asked(p, 2);
    expect(name2.params.question).toMatch(/"A" is not valid for "Name": shorter than 2 characters\. Please answer again\.$/);
    answer(p, name2, 'Ada Lovelace');
    const age = await asked(p, 3);
    expect(age.params.question).toContain('(2/4) Age — a whole number (from 0 to 150)');
    answer(p, age, '36');
    const plan = await asked(p, 4);
    expect(plan.params.question).toContain('(3/4) Plan');
    expect(plan.params.options).toEqual([{ label: 'Free', description: 'default' }, { label: 'Pro' }, { label: '(skip)', description: 'use the default' }]);
    expect(plan.params.allowFreeform).toBe(false);
    answer(p, plan, 'Pro');
    const news = await asked(p, 5);
    expect(news.params.question).toContain('(4/4) Newsletter');
    expect(news.params.options).toEqual([{ label: 'Yes' }, { label: 'No', description: 'default' }, { label: '(skip)', description: 'use the default' }]);
    answer(p, news, '(skip)');
    await p.turnDone(chatId);
    // The fixture's SDK validated this content against the requested schema before returning it.
    expect(JSON.parse(toolMessage(1))).toEqual({ action: 'accept', content: { name: 'Ada Lovelace', age: 36, plan: 'pro', newsletter: false } });
    expect(p.messages.filter((m) => m.method === ECA.chatAskQuestion.method)).toHaveLength(5);
  });

  it('the user cancelling a question answers cancel', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'signup', 's2');
    const q = await asked(p);
    p.send({ id: q.id, result: { answer: null, cancelled: true } });
    await p.turnDone(chatId);
    expect(JSON.parse(toolMessage(1))).toEqual({ action: 'cancel' });
    // No further field was asked.
    expect(p.messages.filter((m) => m.method === ECA.chatAskQuestion.method)).toHaveLength(1);
  });

  it('an editor that fails to ask (an error answer to chat/askQuestion) makes it decline', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'confirm', 'c2');
    const q = await asked(p);
    p.send({ id: q.id, error: { code: -32601, message: 'Method not found' } });
    await p.turnDone(chatId);
    expect(JSON.parse(toolMessage(1))).toEqual({ action: 'decline' });
  });

  it('a client without chatCapabilities.askQuestion is not asked: elicitation is not declared and the server falls back', async () => {
    const p = await boot({ capabilities: { codeAssistant: { chat: true } } });
    const chatId = await callTool(p, 'confirm', 'c3');
    await p.turnDone(chatId);
    expect(toolMessage(1)).toBe('fallback: this client cannot be asked, so the defaults were used');
    expect(p.messages.some((m) => m.method === ECA.chatAskQuestion.method)).toBe(false);
  });

  it('a bad requested schema is a clear error to the server, nobody is asked, and the server lives on', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'bad_schema', 'b1');
    await p.turnDone(chatId);
    expect(toolMessage(1)).toContain('requestedSchema field "n": its minimum (10) is above its maximum (1)');
    expect(p.messages.some((m) => m.method === ECA.chatAskQuestion.method)).toBe(false);
    // Both processes go on: the next elicitation works.
    llm().reset();
    const next = await callTool(p, 'confirm', 'c4');
    answer(p, await asked(p), 'No');
    await p.turnDone(next);
    expect(JSON.parse(toolMessage(1))).toEqual({ action: 'accept', content: { ok: false } });
  });

  it('a stop while a question is open withdraws it ($/cancelRequest), the turn ends cancelled, and the server still asks later', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'confirm', 'c5');
    const q = await asked(p);
    p.notify(ECA.chatPromptStop, { chatId });
    const cancel = await p.waitFor((m) => m.method === '$/cancelRequest' && m.params?.id === q.id, '$/cancelRequest');
    expect(cancel.params).toEqual({ id: q.id });
    expect((await p.turnDone(chatId)).params.content.stopReason).toBe('cancelled');
    llm().reset();
    const next = await callTool(p, 'confirm', 'c6');
    answer(p, await asked(p, 2), 'Yes');
    await p.turnDone(next);
    expect(JSON.parse(toolMessage(1))).toEqual({ action: 'accept', content: { ok: true } });
  });

  it('the server withdrawing its request (its own timeout) withdraws the question', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'impatient', 'i1');
    const q = await asked(p);
    await p.waitFor((m) => m.method === '$/cancelRequest' && m.params?.id === q.id, '$/cancelRequest after the server gave up');
    await p.turnDone(chatId);
    expect(toolMessage(1)).toBe('gave up waiting');
  });

  // mcpTimeoutSeconds is 1: the answer comes after it, and the call is still alive to take it.
  for (const tool of ['confirm', 'confirm_typed']) {
    it(`the call's timeout waits while the user answers (${tool === 'confirm' ? "patchbay's short call path" : "the SDK's callTool, output schema"})`, async () => {
      const p = await boot(ASKING, { mcpTimeoutSeconds: 1 });
      const chatId = await callTool(p, tool, 't1');
      const q = await asked(p);
      await new Promise((r) => setTimeout(r, 2_000));
      answer(p, q, 'Yes');
      await p.turnDone(chatId);
      expect(toolMessage(1)).toContain('"action":"accept"');
    });
  }

  it('deleting the chat while a question is open withdraws it', async () => {
    const p = await boot();
    const chatId = await callTool(p, 'confirm', 'c7');
    const q = await asked(p);
    await p.request(ECA.chatDelete, { chatId });
    await p.waitFor((m) => m.method === '$/cancelRequest' && m.params?.id === q.id, '$/cancelRequest after chat/delete');
  });
});

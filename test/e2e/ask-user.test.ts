/**
 * The `ask_user` tool and the `chat/askQuestion` request, over the built binary's real stdio.
 * Follows ECA src/eca/features/tools/ask_user.clj (`ask-user`: the params it sends, "User answered: …"
 * and "User cancelled the question." back to the model; `:enabled-fn`: offered only when the client
 * declared `chatCapabilities.askQuestion`), ECA docs/protocol.md "Chat ask question", and eca-emacs
 * eca.el (`initialize` declares `:chatCapabilities (:askQuestion t)`) and eca-chat.el
 * `eca-chat-handle-ask-question` (answers later with `{answer, cancelled}`).
 */
import { describe, expect, it } from 'vitest';
import { ECA } from '../../src/protocol/eca/methods.js';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const ASKING = { capabilities: { codeAssistant: { chat: true, chatCapabilities: { askQuestion: true } } } };

async function boot(extra: Record<string, unknown> = ASKING): Promise<EcaProc> {
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
  await p.initialize(workspace({ 'a.txt': 'alpha\n' }), extra);
  return p;
}

const offered = (n: number): string[] => llm().requests[n].body.tools.map((t: any) => t.function.name);
const toolMessage = (n: number): any => llm().requests[n].body.messages.find((m: any) => m.role === 'tool');
const asked = (p: EcaProc): Promise<Msg> => p.waitFor((m) => m.method === ECA.chatAskQuestion.method && m.id !== undefined, 'chat/askQuestion');

describe('ask_user and chat/askQuestion', () => {
  it('asks the editor and hands its answer to the model', async () => {
    const p = await boot();
    const options = [{ label: 'Tabs (Recommended)', description: 'as the repo does' }, 'Spaces'];
    llm().script([{ toolCall: { id: 'q1', name: 'patchbay__ask_user', args: { question: 'Tabs or spaces?', options } } }], [{ text: 'tabs it is' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'format it' })).result.chatId;
    const q = await asked(p);
    expect(q.params).toEqual({
      chatId,
      question: 'Tabs or spaces?',
      // A plain-string option is made a {label} as ECA's normalize-options does.
      options: [{ label: 'Tabs (Recommended)', description: 'as the repo does' }, { label: 'Spaces' }],
      toolCallId: 'q1',
      allowFreeform: true,
    });
    expect(offered(0)).toContain('patchbay__ask_user');
    // "Waiting answer" goes out before the question, as ask_user.clj sends it.
    const waiting = p.messages.findIndex((m) => m.params?.chatId === chatId && m.params?.content?.type === 'progress' && m.params.content.text === 'Waiting answer');
    expect(waiting).toBeGreaterThan(-1);
    expect(waiting).toBeLessThan(p.messages.indexOf(q));
    // Read-only and allowed: it runs without asking for approval.
    const run = p.contents(chatId).find((c) => c.content.type === 'toolCallRun' && c.content.id === 'q1');
    expect(run?.content).toMatchObject({ manualApproval: false, summary: 'Q: Tabs or spaces?' });
    p.send({ id: q.id, result: { answer: 'Tabs (Recommended)', cancelled: false } });
    await p.turnDone(chatId);
    expect(toolMessage(1).content).toBe('User answered: Tabs (Recommended)');
    expect(p.text(chatId)).toBe('tabs it is');
  });

  it('a question the user cancels is an error result the model reads', async () => {
    const p = await boot();
    llm().script([{ toolCall: { id: 'q2', name: 'patchbay__ask_user', args: { question: 'Delete it?', allowFreeform: false } } }], [{ text: 'ok, kept' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'clean up' })).result.chatId;
    const q = await asked(p);
    expect(q.params.allowFreeform).toBe(false);
    expect(q.params.options).toBeUndefined();
    p.send({ id: q.id, result: { answer: null, cancelled: true } });
    await p.turnDone(chatId);
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === 'q2')!.content;
    expect(called.error).toBe(true);
    expect(toolMessage(1).content).toContain('User cancelled the question.');
  });

  it('is not offered to a client that did not declare chatCapabilities.askQuestion', async () => {
    const p = await boot({ capabilities: { codeAssistant: { chat: true } } });
    llm().script([{ text: 'hi' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hello' })).result.chatId;
    await p.turnDone(chatId);
    expect(offered(0)).toContain('patchbay__read_file');
    expect(offered(0)).not.toContain('patchbay__ask_user');
    expect(p.messages.some((m) => m.method === ECA.chatAskQuestion.method)).toBe(false);
  });

  it('a stop while asking cancels the request with $/cancelRequest and ends the turn cancelled', async () => {
    const p = await boot();
    llm().script([{ toolCall: { id: 'q3', name: 'patchbay__ask_user', args: { question: 'Which branch?' } } }], [{ text: 'never asked for' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'merge' })).result.chatId;
    const q = await asked(p);
    p.notify(ECA.chatPromptStop, { chatId });
    const cancel = await p.waitFor((m) => m.method === '$/cancelRequest', '$/cancelRequest');
    expect(cancel.params).toEqual({ id: q.id });
    const done = await p.turnDone(chatId);
    expect(done.params.content.stopReason).toBe('cancelled');
    // The model was not called again with an answer.
    expect(llm().requests).toHaveLength(1);
    // The call still ends with toolCalled, which eca-emacs (eca-chat--dismiss-pending-question-for-tool-call) takes to leave answer mode.
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === 'q3')!.content;
    expect(called).toMatchObject({ error: true, outputs: [{ type: 'text', text: 'ask_user was cancelled.' }] });
  });

  it('an answer that is not {answer, cancelled} is a clear tool error, and the server lives on', async () => {
    const p = await boot();
    llm().script([{ toolCall: { id: 'q4', name: 'patchbay__ask_user', args: { question: 'Sure?' } } }], [{ text: 'fine' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'go' })).result.chatId;
    const q = await asked(p);
    p.send({ id: q.id, result: { answer: 42 } });
    await p.turnDone(chatId);
    expect(toolMessage(1).content).toContain('not {answer, cancelled}');
    expect(p.text(chatId)).toBe('fine');
  });
});

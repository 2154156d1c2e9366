/**
 * Steering (`chat/promptSteer`, `chat/promptSteerRemove`) as ECA's contract has it, over real
 * stdio with the fake LLM. The contract is shared by the server and its clients: the server reads
 * a pending steer at the next model step and says so with a user text content; the client forgets
 * its steer when that content arrives and sends what is left as a prompt once the turn ends. So the
 * server must never run a leftover steer itself, and must ignore a steer when no turn runs.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot() {
  const root = workspace({ 'a.ts': 'const a = 1;\n' });
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** The text of each user message of one model request, in order. */
const userTexts = (body: any): string[] => body.messages.filter((m: any) => m.role === 'user').map((m: any) => m.content);
/** How many user messages, over every model request so far, are exactly `text`. */
const timesSeen = (text: string): number => llm().requests.filter((r) => userTexts(r.body).includes(text)).length;
/** The user text contents the server sent for a chat. */
const userContents = (p: EcaProc, chatId: string) => p.contents(chatId).filter((c) => c.role === 'user' && c.content.type === 'text');

/** A first reply that asks to write a file: the turn waits for approval, so a steer surely arrives mid-turn. */
const writeCall = [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'x.txt', content: 'x' } } }];
const waitingApproval = (p: EcaProc) => p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w1', 'w1 to wait for approval');

describe('chat/promptSteer and chat/promptSteerRemove (ECA contract)', () => {
  // ECA chat.clj `prompt-steer` (later steers joined by "\n") and `consume-steer-message!` (a user
  // text content with a fresh content-id); eca-emacs eca-chat.el clears `eca-chat--steered-prompt`
  // on a user "text" content, eca-webview src/redux/slices/chat.ts "Clear steer message when server
  // echoes back a user message (steer consumed)".
  it('a steer during a turn reaches the next model request once, with a user text content of its own; nothing runs it again', async () => {
    const p = await boot();
    llm().script(writeCall, [{ text: 'steered' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'start' })).result.chatId;
    await waitingApproval(p);
    p.notify(ECA.chatPromptSteer, { chatId, message: 'also check b' });
    p.notify(ECA.chatPromptSteer, { chatId, message: 'and c' });
    p.notify(ECA.chatToolCallApprove, { chatId, toolCallId: 'w1' });
    await p.turnDone(chatId);
    expect(userTexts(llm().requests[1].body)).toEqual(['start', 'also check b\nand c']);
    const users = userContents(p, chatId);
    expect(users.map((c) => c.content.text)).toEqual(['start', 'also check b\nand c']);
    expect(users[1].content.contentId).toEqual(expect.any(String));
    expect(users[1].content.contentId).not.toBe(users[0].content.contentId);
    // The server answers a request only after the notifications before it: nothing is queued.
    await p.request(ECA.chatQueryCommands, { chatId, query: '' });
    await new Promise((r) => setTimeout(r, 300));
    expect(llm().requests).toHaveLength(2);
    expect(p.messages.filter((m) => m.params?.chatId === chatId && m.params?.content?.state === 'finished')).toHaveLength(1);
  });

  // ECA lifecycle.clj `finish-chat-prompt!` drops a steer not yet read; the client sends it as a
  // prompt: eca-emacs eca-chat.el `eca-chat--send-steered-prompt` on "finished", eca-webview
  // src/redux/slices/chat.ts "Merge unconsumed steer into pending prompts queue".
  it('a steer the model never read is not run by the server after the turn; the client sends it, and the model reads it once', async () => {
    const p = await boot();
    llm().script([{ text: 'partial' }, { delay: 1_000 }, { text: ' answer' }], [{ text: 'second answer' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'start' })).result.chatId;
    await p.waitFor((m) => m.params?.content?.text === 'partial');
    p.notify(ECA.chatPromptSteer, { chatId, message: 'leftover' });
    await p.turnDone(chatId);
    await p.request(ECA.chatQueryCommands, { chatId, query: '' });
    await new Promise((r) => setTimeout(r, 300));
    // Not read (no user content for it), and no turn of the server's own.
    expect(userContents(p, chatId).map((c) => c.content.text)).toEqual(['start']);
    expect(llm().requests).toHaveLength(1);
    // What the client does with its leftover steer.
    await p.request(ECA.chatPrompt, { chatId, message: 'leftover' });
    await p.turnDone(chatId, 2);
    expect(timesSeen('leftover')).toBe(1);
    expect(userTexts(llm().requests[1].body)).toEqual(['start', 'leftover']);
  });

  // ECA chat.clj `prompt-steer-remove` (idempotent); eca-emacs eca-chat.el
  // `eca-chat--remove-steered-prompt`, eca-webview src/redux/thunks/chat.ts `steerPromptRemove`.
  it('a removed steer never reaches the model; removing again, in an unknown chat or with bad params, is silent', async () => {
    const p = await boot();
    llm().script(writeCall, [{ text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'start' })).result.chatId;
    await waitingApproval(p);
    p.notify(ECA.chatPromptSteer, { chatId, message: 'never mind' });
    p.notify(ECA.chatPromptSteerRemove, { chatId });
    p.notify(ECA.chatPromptSteerRemove, { chatId });
    p.notify(ECA.chatPromptSteerRemove, { chatId: 'no-such-chat' });
    // Bad params are logged and dropped (a notification has no answer), never a crash.
    p.notify(ECA.chatPromptSteerRemove, {});
    p.notify(ECA.chatPromptSteer, { chatId, message: 42 });
    p.notify(ECA.chatToolCallApprove, { chatId, toolCallId: 'w1' });
    await p.turnDone(chatId);
    expect(userTexts(llm().requests[1].body)).toEqual(['start']);
    expect(timesSeen('never mind')).toBe(0);
    expect(userContents(p, chatId).map((c) => c.content.text)).toEqual(['start']);
    expect(llm().requests).toHaveLength(2);
    expect(p.stderr).toMatch(/chat\/promptSteerRemove[^\n]*chatId/);
  });

  // ECA chat.clj `prompt-steer` acts only on a chat whose status is :running; eca-emacs eca-chat.el
  // steers only while `eca-chat--chat-loading`, and sends a plain prompt otherwise.
  it('a steer to an idle chat (or an unknown one) does nothing', async () => {
    const p = await boot();
    llm().script([{ text: 'first' }], [{ text: 'second' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'start' })).result.chatId;
    await p.turnDone(chatId);
    const seen = p.messages.length;
    p.notify(ECA.chatPromptSteer, { chatId, message: 'hello?' });
    p.notify(ECA.chatPromptSteer, { chatId: 'no-such-chat', message: 'anyone?' });
    await p.request(ECA.chatQueryCommands, { chatId, query: '' });
    await new Promise((r) => setTimeout(r, 300));
    expect(p.messages.slice(seen).filter((m) => m.method !== undefined && [chatId, 'no-such-chat'].includes(m.params?.chatId))).toEqual([]);
    expect(llm().requests).toHaveLength(1);
    // Nor is it kept for the next turn.
    await p.request(ECA.chatPrompt, { chatId, message: 'next' });
    await p.turnDone(chatId, 2);
    expect(userTexts(llm().requests[1].body)).toEqual(['start', 'next']);
  });
});

/**
 * The ECA server in this process over an in-memory stream pair (test/support/eca-inproc.ts), with
 * the fake LLM server: protocol and turn behaviour in milliseconds. The same behaviours are
 * covered over the built binary by test/e2e; these catch a regression without spawning anything.
 */
import { describe, expect, it } from 'vitest';
import { InProcEca, useInProcEca } from '../support/eca-inproc.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeProviderConfig, useTempDirs, workspace } from '../e2e/harness.js';

const llm = useFakeLlm();
const temp = useTempDirs();
const track = useInProcEca();

function start(config: Record<string, unknown> = fakeProviderConfig(llm().url)): InProcEca {
  const s = new InProcEca({ home: temp(workspace()), config });
  track(s);
  return s;
}

describe('ECA server in process', () => {
  it('answers -32002 before initialize, then initialize with the welcome and agents', async () => {
    const s = start();
    await expect(s.request('chat/list', {})).rejects.toMatchObject({ code: -32002 });
    const result = await s.initialize(temp(workspace()));
    expect(result.chatBehaviors).toEqual(['agent', 'plan']);
    expect(typeof result.chatWelcomeMessage).toBe('string');
    const config = await s.waitFor((n) => n.method === 'config/updated', 'config/updated');
    expect(config.params.chat.models).toEqual(['fake/m1']);
    expect(config.params.chat.selectModel).toBe('fake/m1');
  });

  it('names the bad field with -32602 and the unknown method with -32601, and keeps serving', async () => {
    const s = start();
    await s.initialize(temp(workspace()));
    await expect(s.request('chat/prompt', { message: 42 })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('message') });
    await expect(s.request('chat/nothingLikeThis', {})).rejects.toMatchObject({ code: -32601 });
    expect(await s.request('chat/list', {})).toEqual({ chats: [] });
  });

  it('streams an answer and ends the turn; the chat is listed and replays from the store', async () => {
    llm().script([{ text: 'Hello ' }, { text: 'there.' }]);
    const s = start();
    await s.initialize(temp(workspace()));
    const res = await s.request('chat/prompt', { message: 'hi' });
    expect(res).toMatchObject({ model: 'fake/m1', status: 'prompting' });
    await s.turnDone(res.chatId);
    const said = s
      .contents(res.chatId)
      .filter((c) => c.role === 'assistant' && c.content.type === 'text')
      .map((c) => c.content.text);
    expect(said.join('')).toBe('Hello there.');
    expect(s.contents(res.chatId).map((c) => c.content.type)).toEqual(expect.arrayContaining(['text', 'progress', 'usage']));
    const list = await s.request('chat/list', {});
    expect(list.chats.map((c: { id: string }) => c.id)).toEqual([res.chatId]);
    const before = s.notifications.length;
    expect(await s.request('chat/open', { chatId: res.chatId })).toMatchObject({ found: true, chatId: res.chatId });
    await s.waitFor((n) => s.notifications.indexOf(n) >= before && n.method === 'chat/contentReceived' && n.params.content.type === 'text' && n.params.role === 'assistant', 'replay');
    const replayed = s.notifications
      .slice(before)
      .filter((n) => n.method === 'chat/contentReceived')
      .map((n) => n.params.content);
    expect(replayed).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'text', text: 'hi' }), expect.objectContaining({ type: 'text', text: 'Hello there.' })]));
  });

  it('asks before a tool that writes, runs it once approved, and hands the result to the model', async () => {
    const ws = temp(workspace({ 'a.txt': 'old\n' }));
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__write_file', args: { path: 'b.txt', content: 'new\n' } } }], [{ text: 'Written.' }]);
    const s = start();
    await s.initialize(ws);
    const { chatId } = await s.request('chat/prompt', { message: 'write b' });
    const asked = await s.waitFor((n) => n.method === 'chat/contentReceived' && n.params.content.type === 'toolCallRun', 'toolCallRun');
    expect(asked.params.content).toMatchObject({ id: 'c1', name: 'write_file', manualApproval: true });
    s.notify('chat/toolCallApprove', { chatId, toolCallId: 'c1' });
    await s.turnDone(chatId);
    const called = s.contents(chatId).find((c) => c.content.type === 'toolCalled');
    expect(called?.content).toMatchObject({ id: 'c1', error: false });
    expect(
      llm()
        .requests.at(-1)
        ?.body.messages.some((m: { role: string }) => m.role === 'tool'),
    ).toBe(true);
  });

  it('a rejected tool call is reported rejected and the model hears why', async () => {
    llm().script([{ toolCall: { id: 'c2', name: 'patchbay__write_file', args: { path: 'x.txt', content: 'x' } } }], [{ text: 'OK, not writing.' }]);
    const s = start();
    await s.initialize(temp(workspace()));
    const { chatId } = await s.request('chat/prompt', { message: 'write x' });
    await s.waitFor((n) => n.method === 'chat/contentReceived' && n.params.content.type === 'toolCallRun', 'toolCallRun');
    s.notify('chat/toolCallReject', { chatId, toolCallId: 'c2' });
    await s.turnDone(chatId);
    expect(s.contents(chatId).find((c) => c.content.type === 'toolCallRejected')?.content).toMatchObject({ id: 'c2', reason: 'user' });
  });

  it('promptStop ends a stalled turn at once and the chat takes the next prompt', async () => {
    llm().script([{ text: 'thinking…' }, { stall: 'forever' }], [{ text: 'second answer' }]);
    const s = start();
    await s.initialize(temp(workspace()));
    const { chatId } = await s.request('chat/prompt', { message: 'go' });
    await s.waitFor((n) => n.method === 'chat/contentReceived' && n.params.content.type === 'text' && n.params.content.text === 'thinking…', 'first text');
    s.notify('chat/promptStop', { chatId });
    await s.turnDone(chatId);
    await s.request('chat/prompt', { chatId, message: 'again' });
    await s.turnDone(chatId, 2);
    expect(s.contents(chatId).some((c) => c.content.type === 'text' && c.content.text === 'second answer')).toBe(true);
  });

  // eca `src/eca/features/context.clj` contexts-str-from-prompt; eca-nvim sends every @file in the text.
  it('reads @./file, @./dir and @./file:L2-L3 written in the prompt text, each once', async () => {
    const ws = temp(workspace({ 'a.txt': 'alpha-content\n', 'lines.txt': 'one\ntwo\nthree\nfour\n', 'sub/b.txt': 'beta\n' }));
    llm().script([{ text: 'ok' }]);
    const s = start();
    await s.initialize(ws);
    const { chatId } = await s.request('chat/prompt', { message: 'see @./a.txt, @./sub and @./lines.txt:L2-L3; again @./a.txt. Mail me at a@b.c', contexts: [{ type: 'file', path: `${ws}/a.txt` }] });
    await s.turnDone(chatId);
    const sent = JSON.stringify(llm().requests.at(-1)?.body.messages);
    expect(sent.split('alpha-content').length - 1).toBe(1);
    expect(sent).toContain('b.txt');
    expect(sent).toContain('two\\nthree');
    expect(sent).not.toContain('four');
  });

  it('exits with 0 after shutdown and exit', async () => {
    const s = start();
    await s.initialize(temp(workspace()));
    expect(await s.stop()).toBe(0);
  });
});

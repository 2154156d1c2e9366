/**
 * `chat/addFlag` / `chat/removeFlag` against the ECA server in this process (ECA chat.clj
 * `add-flag`, `remove-flag`): the handshake gate, bad params, and the flag on a page of history.
 * Order, placement, restarts and forks are covered over the built binary in test/e2e/chat-flags.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { InProcEca, useInProcEca } from '../support/eca-inproc.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeProviderConfig, useTempDirs, workspace } from '../e2e/harness.js';

const llm = useFakeLlm();
const temp = useTempDirs();
const track = useInProcEca();

function start(): InProcEca {
  const s = new InProcEca({ home: temp(workspace()), config: fakeProviderConfig(llm().url) });
  track(s);
  return s;
}

describe('chat flags in process', () => {
  it('answers -32002 before initialize and -32602 naming the bad field after', async () => {
    const s = start();
    await expect(s.request('chat/addFlag', { chatId: 'c', contentId: 'u1', text: 'x' })).rejects.toMatchObject({ code: -32002 });
    await expect(s.request('chat/removeFlag', { chatId: 'c', contentId: 'f' })).rejects.toMatchObject({ code: -32002 });
    await s.initialize(temp(workspace()));
    await expect(s.request('chat/addFlag', { chatId: 'c', contentId: 7, text: 'x' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('contentId') });
    await expect(s.request('chat/removeFlag', { chatId: 'c' })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('contentId') });
  });

  it('adds a flag that history returns at its place and removes it again', async () => {
    llm().script([{ text: 'a1' }]);
    const s = start();
    await s.initialize(temp(workspace()));
    const { chatId } = await s.request('chat/prompt', { message: 'q1', contentId: 'u1' });
    await s.turnDone(chatId);
    expect(await s.request('chat/addFlag', { chatId, contentId: 'u1', text: 'mark' })).toEqual({});
    const page = await s.request('chat/history', { chatId });
    const flag = page.contents[1];
    expect(flag).toEqual({ chatId, role: 'system', content: { type: 'flag', text: 'mark', contentId: expect.any(String) } });
    expect(await s.request('chat/removeFlag', { chatId, contentId: flag.content.contentId })).toEqual({});
    expect((await s.request('chat/history', { chatId })).contents.map((c: any) => c.content.type)).toEqual(['text', 'text']);
  });
});

/**
 * patchbay's extensions `patchbay chat` uses for its stored chats, against the ECA server in this
 * process: `chat/list` with `folder` (only that folder's chats, each naming its folder) and
 * `chat/fork` without a `contentId` (the whole chat, its last answer included, in the same folder).
 * The REPL's use of them is covered over the built binary in test/e2e/chat-resume.test.ts.
 */
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InProcEca, useInProcEca } from '../support/eca-inproc.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from '../e2e/harness.js';

const llm = useFakeLlm();
const temp = useTempDirs();
const track = useInProcEca();

async function start(home: string, root: string): Promise<InProcEca> {
  const s = new InProcEca({ home, config: fakeProviderConfig(llm().url) });
  track(s);
  await s.initialize(root);
  return s;
}

async function ask(s: InProcEca, message: string): Promise<string> {
  const { chatId } = await s.request('chat/prompt', { message });
  await s.turnDone(chatId);
  return chatId;
}

const said = (contents: Array<{ role: string; content: any }>) => contents.filter((c) => c.content.type === 'text').map((c) => `${c.role} ${c.content.text}`);

describe('chat/list folder and chat/fork of a whole chat', () => {
  it('lists only the chats of the folder asked for (a folder inside it too), each with its folder', async () => {
    llm().script([{ text: 'a1' }], [{ text: 'b1' }], [{ text: 'c1' }]);
    const home = temp(tempDir('pb-list-home-'));
    const one = temp(workspace({ 'sub/notes.txt': 'x\n' }));
    const two = temp(workspace());
    const a = await start(home, one);
    const inOne = await ask(a, 'in one');
    const b = await start(home, two);
    const inTwo = await ask(b, 'in two');
    const c = await start(home, `${one}/sub`);
    const inSub = await ask(c, 'in a subfolder of one');

    const ofOne = (await a.request('chat/list', { folder: one })).chats;
    expect(ofOne.map((x: any) => x.id)).toEqual([inSub, inOne]);
    expect(ofOne.map((x: any) => x.folder)).toEqual([`${one}/sub`, one]);
    expect((await a.request('chat/list', { folder: two })).chats.map((x: any) => x.id)).toEqual([inTwo]);
    // Without it, every folder's, as ECA lists them.
    expect((await a.request('chat/list', {})).chats).toHaveLength(3);
    await expect(a.request('chat/list', { folder: 7 })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('folder') });
  });

  it("a folder is compared as a path: a trailing slash still names it, a sibling sharing its name's start is not inside it, a relative or empty one is refused (review)", async () => {
    llm().script([{ text: 'a1' }], [{ text: 'b1' }]);
    const home = temp(tempDir('pb-list-home-'));
    const one = temp(workspace());
    // `${one}c` starts with `${one}`, but is not inside it.
    const sibling = `${one}c`;
    mkdirSync(sibling);
    temp(sibling);
    const a = await start(home, one);
    const inOne = await ask(a, 'in one');
    const b = await start(home, sibling);
    const inSibling = await ask(b, 'in the sibling');
    const ids = async (folder: string) => (await a.request('chat/list', { folder })).chats.map((x: any) => x.id);
    expect(await ids(one)).toEqual([inOne]);
    expect(await ids(`${one}/`)).toEqual([inOne]);
    expect(await ids(`${one}/./`)).toEqual([inOne]);
    expect(await ids(sibling)).toEqual([inSibling]);
    for (const folder of ['', 'relative/dir', '.']) {
      await expect(a.request('chat/list', { folder })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('folder must be an absolute path') });
    }
    // The server goes on answering.
    expect(await ids(one)).toEqual([inOne]);
  });

  it('chat/fork without a contentId copies the whole chat, its last answer included, into the same folder', async () => {
    llm().script([{ text: 'the answer' }], [{ text: 'forked on' }]);
    const home = temp(tempDir('pb-fork-home-'));
    const root = temp(workspace());
    const s = await start(home, root);
    const chatId = await ask(s, 'the question');
    const { chatId: forkId } = await s.request('chat/fork', { chatId });
    expect(forkId).toEqual(expect.any(String));
    expect(forkId).not.toBe(chatId);
    const history = await s.request('chat/history', { chatId: forkId });
    expect(said(history.contents)).toEqual(['user the question', 'assistant the answer']);
    expect((await s.request('chat/list', { folder: root })).chats.map((x: any) => x.id)).toEqual([forkId, chatId]);

    // The model, asked in the fork, gets the whole chat.
    llm().reset();
    llm().script([{ text: 'forked on' }]);
    await s.request('chat/prompt', { chatId: forkId, message: 'go on' });
    await s.turnDone(forkId);
    const sent = llm()
      .requests[0].body.messages.filter((m: any) => m.role !== 'system')
      .map((m: any) => `${m.role} ${m.content}`);
    expect(sent).toEqual(['user the question', 'assistant the answer', 'user go on']);
    await expect(s.request('chat/fork', { chatId: 'no-such-chat' })).rejects.toMatchObject({ code: -32602, message: 'Chat no-such-chat not found' });
  });
});

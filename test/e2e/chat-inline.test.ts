/**
 * `chat/inlinePrompt` (ECA 0.157), `chat/fork`'s answer and flags without text, over the built
 * binary and real stdio, against the fake LLM recording each request.
 *
 * The contract: eca `docs/config/chat-inline.md`, `integration-test/integration/chat/inline_prompt_test.clj`
 * and `src/eca/features/chat.clj` (`inline-prompt`, `inline-title`, `validate-client-chat-id`,
 * `fork-chat`, `add-flag`), at commit 565d218. The clients: eca-emacs `eca-chat-inline.el`
 * (`eca-chat-inline--send` sends `{chatId, message, contexts, sourceChatId?, model?, agent?,
 * variant?}` with a chat id it mints, and reads `status: "error"` from a successful answer),
 * eca-intellij `inline_chat.clj` (lists chats with their `kind`), eca-desktop's flag button (no `text`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';
import type { RecordedRequest } from '../fixtures/fake-llm.js';

const { llm, track } = useFakeLlmSuite();

/** Three models on the fake LLM, each with two variants that show in the request body; m1 is the default. */
function config(extra: Record<string, unknown> = {}, chat: Record<string, unknown> = {}): Record<string, unknown> {
  const variants = { low: { reasoning_effort: 'low' }, high: { reasoning_effort: 'high' } };
  return {
    providers: { fake: { api: 'openai-chat', url: `${llm().url}/v1`, key: 'k', models: { m1: { variants }, m2: { variants }, m3: { variants } } } },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false, maxRetries: 0, ...chat },
    ...extra,
  };
}

async function boot(cfg = config(), home = tempDir(), root = workspace()): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: cfg }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method && m.params.chat?.models !== undefined, 'the first config/updated');
  return p;
}

/** The conversation the model got (system prompt left out), as `role text` lines. */
function conversation(body: RecordedRequest['body']): string[] {
  return (body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role !== 'system')
    .map((m) => `${m.role} ${typeof m.content === 'string' ? m.content : JSON.stringify(m.content)}`);
}

function toolNames(body: RecordedRequest['body']): string[] {
  return ((body.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
}

/** Every message the server sent about `chatId` from message `from` on, as short labels. */
function about(p: EcaProc, chatId: string, from = 0): string[] {
  return p.messages.slice(from).flatMap((m: Msg) => {
    if (m.params?.chatId !== chatId || !m.method) return [];
    if (m.method !== ECA.chatContentReceived.method) return [`${m.method} ${JSON.stringify(m.params)}`];
    const c = m.params.content;
    return [`${m.params.role} ${c.type} ${c.text ?? c.title ?? c.state ?? ''}`.trim()];
  });
}

async function inline(p: EcaProc, params: Record<string, unknown>): Promise<Msg> {
  return p.request(ECA.chatInlinePrompt, params);
}

async function list(p: EcaProc): Promise<Array<Record<string, unknown>>> {
  return (await p.request(ECA.chatList, {})).result.chats;
}

describe('chat/inlinePrompt', () => {
  it('makes a chat with the client id, announced and titled from the message, with no title generated; a follow-up keeps the history; chat/list marks it inline, after a restart too', async () => {
    // Titles on: a regular chat would get one generated (checked at the end), an inline chat must not.
    const home = tempDir();
    const root = workspace();
    const p = await boot(config({}, { generateTitles: true }), home, root);
    llm().script([{ text: 'Knock knock!' }]);
    const res = await inline(p, { chatId: 'inline-1', model: 'fake/m2', message: 'Tell me a joke!', contexts: [] });
    expect(res.error).toBeUndefined();
    expect(res.result).toEqual({ chatId: 'inline-1', model: 'fake/m2', status: 'prompting' });
    await p.turnDone('inline-1');
    const first = about(p, 'inline-1');
    // Announced first, with ECA's title; then the turn as any chat's; no `metadata` title content.
    expect(first[0]).toBe('chat/opened {"chatId":"inline-1","title":"inline: Tell me a joke!"}');
    expect(first.filter((l) => l.startsWith('user ') || l.startsWith('assistant '))).toEqual(['user text Tell me a joke!', 'assistant text Knock knock!']);
    expect(first.some((l) => l.includes('metadata'))).toBe(false);
    expect(llm().requests).toHaveLength(1);
    expect(llm().requests[0].body.model).toBe('m2');

    const from = p.messages.length;
    llm().script([{ text: 'Boo.' }]);
    const again = await inline(p, { chatId: 'inline-1', message: "Who's there?" });
    // The model stays the chat's: the follow-up names none.
    expect(again.result).toEqual({ chatId: 'inline-1', model: 'fake/m2', status: 'prompting' });
    await p.turnDone('inline-1', 2);
    expect(about(p, 'inline-1', from).some((l) => l.startsWith(ECA.chatOpened.method))).toBe(false);
    // Exactly the two prompts' requests: no title request came between them.
    expect(llm().requests).toHaveLength(2);
    expect(conversation(llm().requests[1].body)).toEqual(['user Tell me a joke!', 'assistant Knock knock!', "user Who's there?"]);
    expect(llm().requests[1].body.model).toBe('m2');

    // ECA's inline-title: whitespace runs become one space, cut past 40 characters with "...".
    llm().script([{ text: 'ok' }]);
    await inline(p, { chatId: 'inline-long', message: '  Explain\n\nthis   function and every one of its callers please  ' });
    await p.turnDone('inline-long');
    expect(about(p, 'inline-long')[0]).toBe(`chat/opened {"chatId":"inline-long","title":"inline: Explain this function and every one of i..."}`);

    // The control: a regular chat in the same server gets a generated title.
    llm().script([{ text: 'answer' }], [{ text: 'A Generated Title' }]);
    await p.request(ECA.chatPrompt, { chatId: 'regular', message: 'hello' });
    await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === 'regular' && m.params.content.type === 'metadata', 'the regular chat title');

    const chats = await list(p);
    expect(chats.find((c) => c.id === 'inline-1')).toMatchObject({ kind: 'inline', title: 'inline: Tell me a joke!', messageCount: 4, model: 'fake/m2' });
    expect(chats.find((c) => c.id === 'regular')).not.toHaveProperty('kind');

    // The kind is stored: after a restart it is listed the same, and a follow-up is still an inline chat's.
    await p.stop();
    const q = await boot(config({ chatInline: { model: 'fake/m3' } }), home, root);
    expect((await list(q)).find((c) => c.id === 'inline-1')).toMatchObject({ kind: 'inline' });
    llm().reset();
    llm().script([{ text: 'still here' }]);
    const later = await inline(q, { chatId: 'inline-1', message: 'and now?' });
    // chatInline.model applies to new inline chats only: this one keeps its own.
    expect(later.result).toEqual({ chatId: 'inline-1', model: 'fake/m2', status: 'prompting' });
    await q.turnDone('inline-1');
    expect(conversation(llm().requests[0].body)).toEqual(['user Tell me a joke!', 'assistant Knock knock!', "user Who's there?", 'assistant Boo.', 'user and now?']);
  });

  it('with sourceChatId copies the source history for the model, never replays it, and leaves the source alone', async () => {
    const p = await boot();
    llm().script([{ text: 'Knock knock!' }]);
    await p.request(ECA.chatPrompt, { chatId: 'src', message: 'Tell me a joke!', model: 'fake/m3', variant: 'high' });
    await p.turnDone('src');

    const from = p.messages.length;
    llm().reset();
    llm().script([{ text: 'Interrupting cow.' }]);
    const res = await inline(p, { chatId: 'inline-fork-1', sourceChatId: 'src', message: "Who's there?" });
    // No model named and no chatInline: the source chat's model (before the default, fake/m1).
    expect(res.result).toEqual({ chatId: 'inline-fork-1', model: 'fake/m3', status: 'prompting' });
    await p.turnDone('inline-fork-1');

    // The editor hears only the new turn: announced, then the new user message first; no clear, no copied contents.
    const heard = about(p, 'inline-fork-1', from);
    expect(heard[0]).toBe(`chat/opened {"chatId":"inline-fork-1","title":"inline: Who's there?"}`);
    expect(heard.filter((l) => l.startsWith('user ') || l.startsWith('assistant '))).toEqual(["user text Who's there?", 'assistant text Interrupting cow.']);
    expect(heard.some((l) => l.includes('Tell me a joke') || l.includes('Knock knock') || l.startsWith(ECA.chatCleared.method))).toBe(false);
    // The model reads the copied history, with the source's model and variant.
    expect(llm().requests).toHaveLength(1);
    const body = llm().requests[0].body;
    expect(conversation(body)).toEqual(['user Tell me a joke!', 'assistant Knock knock!', "user Who's there?"]);
    expect(body.model).toBe('m3');
    expect(body.reasoning_effort).toBe('high');

    // The source is untouched and is not inline; the fork is.
    const chats = await list(p);
    expect(chats.find((c) => c.id === 'src')).toMatchObject({ messageCount: 2 });
    expect(chats.find((c) => c.id === 'src')).not.toHaveProperty('kind');
    expect(chats.find((c) => c.id === 'inline-fork-1')).toMatchObject({ kind: 'inline', messageCount: 4 });
    expect((await p.request(ECA.chatHistory, { chatId: 'src' })).result.meta.total).toBe(2);

    // Neither a source nor a model: the default model.
    llm().script([{ text: 'plain' }]);
    expect((await inline(p, { chatId: 'inline-plain', message: 'hi' })).result).toEqual({ chatId: 'inline-plain', model: 'fake/m1', status: 'prompting' });
    await p.turnDone('inline-plain');
  });

  it('chooses model, variant and agent as explicit > chatInline > the source chat > the default; a regular chat id behaves as chat/prompt; doctor knows the key', async () => {
    const home = tempDir();
    mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
    // In the user's config file, which is checked for unknown keys; `chatInlin` is the control that a typo is reported.
    writeFileSync(join(home, '.config', 'patchbay', 'config.json'), JSON.stringify({ chatInline: { model: 'fake/m2', variant: 'low', agent: 'plan' }, chatInlin: {} }));
    const p = await boot(config(), home);
    const said = p.messages.filter((m) => m.method === ECA.showMessage.method).map((m) => String(m.params.message));
    expect(said.some((m) => m.includes('unknown key "chatInlin"'))).toBe(true);
    expect(said.some((m) => m.includes('unknown key "chatInline"') || m.includes('chatInline.'))).toBe(false);

    llm().script([{ text: 'source answer' }]);
    await p.request(ECA.chatPrompt, { chatId: 'src', message: 'source question', model: 'fake/m3', variant: 'high' });
    await p.turnDone('src');
    llm().reset();

    // chatInline beats the source chat: its model, variant and agent (plan: no tool that writes).
    llm().script([{ text: 'a' }]);
    expect((await inline(p, { chatId: 'by-config', sourceChatId: 'src', message: 'q' })).result).toEqual({ chatId: 'by-config', model: 'fake/m2', status: 'prompting' });
    await p.turnDone('by-config');
    const byConfig = llm().requests[0].body;
    expect([byConfig.model, byConfig.reasoning_effort]).toEqual(['m2', 'low']);
    expect(toolNames(byConfig)).toContain('patchbay__read_file');
    expect(toolNames(byConfig)).not.toContain('patchbay__write_file');

    // What the prompt names beats chatInline.
    llm().script([{ text: 'b' }]);
    expect((await inline(p, { chatId: 'explicit', sourceChatId: 'src', model: 'fake/m1', variant: 'high', agent: 'code', message: 'q' })).result).toEqual({
      chatId: 'explicit',
      model: 'fake/m1',
      status: 'prompting',
    });
    await p.turnDone('explicit');
    const explicit = llm().requests[1].body;
    expect([explicit.model, explicit.reasoning_effort]).toEqual(['m1', 'high']);
    expect(toolNames(explicit)).toContain('patchbay__write_file');

    // chatInline.agent applies to every inline prompt that names none (the chat ran as code just before).
    llm().script([{ text: 'c' }]);
    await inline(p, { chatId: 'explicit', message: 'again' });
    await p.turnDone('explicit', 2);
    const followUp = llm().requests[2].body;
    expect(toolNames(followUp)).not.toContain('patchbay__write_file');
    // Model and variant stay the chat's own.
    expect([followUp.model, followUp.reasoning_effort]).toEqual(['m1', 'high']);

    // On a regular chat's id it is chat/prompt: no chatInline choices, the chat stays regular.
    llm().script([{ text: 'd' }]);
    expect((await inline(p, { chatId: 'src', message: 'more', variant: 'high' })).result).toEqual({ chatId: 'src', model: 'fake/m3', status: 'prompting' });
    await p.turnDone('src', 2);
    const regular = llm().requests[3].body;
    expect([regular.model, regular.reasoning_effort]).toEqual(['m3', 'high']);
    expect(toolNames(regular)).toContain('patchbay__write_file');
    expect(conversation(regular)).toEqual(['user source question', 'assistant source answer', 'user more']);
    expect((await list(p)).find((c) => c.id === 'src')).not.toHaveProperty('kind');
  });

  it('refuses a blank message and a reserved subagent- id with {model: "error", status: "error"}, makes no chat, and goes on', async () => {
    const p = await boot();
    const refused = [
      [{ chatId: 'inline-bad-1', message: '   ' }, 'message is required'],
      [{ chatId: 'subagent-nope', message: 'hi' }, "chatId prefix 'subagent-' is reserved"],
      [{ message: 'no id' }, 'chatId must be a non-blank string'],
      [{ chatId: 'has space', message: 'hi' }, 'whitespace'],
      [{ chatId: 'ok-id', sourceChatId: 'subagent-x', message: 'hi' }, 'sourceChatId'],
    ] as const;
    for (const [params, why] of refused) {
      const res = await inline(p, params);
      expect(res.error).toBeUndefined();
      expect(res.result).toEqual({ chatId: 'chatId' in params ? params.chatId : '', model: 'error', status: 'error' });
      // The answer has no room for the reason: the user is told it.
      await p.waitFor((m) => m.method === ECA.showMessage.method && String(m.params.message).includes(why), `the reason ${why}`);
    }
    expect(await list(p)).toEqual([]);
    expect(llm().requests).toHaveLength(0);
    expect(p.messages.some((m) => m.method === ECA.chatOpened.method)).toBe(false);
    // A wrong type is the client's fault: −32602, and the server goes on.
    expect((await inline(p, { chatId: 'x', message: 42 })).error?.code).toBe(-32602);
    llm().script([{ text: 'fine' }]);
    expect((await inline(p, { chatId: 'inline-ok', message: 'hi' })).result.status).toBe('prompting');
    await p.turnDone('inline-ok');
    expect(p.text('inline-ok')).toBe('fine');
  });
});

describe('chat/fork', () => {
  it('answers the new chat id (ECA 0.157), the one chat/opened announced', async () => {
    const p = await boot();
    llm().script([{ text: 'a1' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c-f', message: 'q1', contentId: 'u1' });
    await p.turnDone('c-f');
    const from = p.messages.length;
    const res = await p.request(ECA.chatFork, { chatId: 'c-f', contentId: 'u1' });
    expect(res.error).toBeUndefined();
    const opened = p.messages.slice(from).find((m) => m.method === ECA.chatOpened.method);
    expect(opened?.params.chatId).toEqual(expect.any(String));
    expect(res.result).toEqual({ chatId: opened?.params.chatId });
    expect((await list(p)).map((c) => c.id)).toContain(res.result.chatId);
  });
});

describe('chat/addFlag without text', () => {
  it('is accepted as ECA accepts it (eca-desktop sends none): the flag is stored and replayed with an empty text', async () => {
    const p = await boot();
    llm().script([{ text: 'a1' }]);
    await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'q1', contentId: 'u1' });
    await p.turnDone('c1');
    const res = await p.request(ECA.chatAddFlag, { chatId: 'c1', contentId: 'u1' });
    expect(res.error).toBeUndefined();
    expect(res.result).toEqual({});
    // eca-emacs sends an unset field as null: the same.
    expect((await p.request(ECA.chatAddFlag, { chatId: 'c1', contentId: 'u1', text: null })).error).toBeUndefined();
    const flags = (await p.request(ECA.chatHistory, { chatId: 'c1' })).result.contents.filter((c: any) => c.content.type === 'flag');
    expect(flags).toHaveLength(2);
    for (const f of flags) expect(f).toMatchObject({ role: 'system', content: { type: 'flag', text: '', contentId: expect.any(String) } });
  });
});

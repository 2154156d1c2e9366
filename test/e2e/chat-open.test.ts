/**
 * Resuming a stored chat (`chat/open`) the way ECA's server does it and the plugins expect.
 *
 * Follows eca `src/eca/features/chat.clj` `open-chat!`: `chat/cleared` (messages), `chat/opened`,
 * the contents, a system `metadata` content with the title, a `config/updated` scoped by `chatId`
 * with the chat's model (only when still configured), one with its trust, and only then the
 * answer `{found, chatId, title, selection}`. eca-emacs `eca-chat.el`
 * `eca-chat--handle-open-response` needs the buffer that `eca-chat-opened` registers for the chat
 * when the answer arrives ("Resume: no buffer was registered for chat …" otherwise) and applies
 * `selection` to it (`eca-chat--apply-selection-snapshot`).
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

/** The fake provider with the given models (m1 is the default model). */
function config(models: string[], generateTitles = false): Record<string, unknown> {
  const cfg = fakeProviderConfig(llm().url);
  const fake = (cfg.providers as Record<string, { models: Record<string, unknown> }>).fake;
  fake.models = Object.fromEntries(models.map((m) => [m, { limit: { context: 100_000, output: 100 } }]));
  (cfg.chat as Record<string, unknown>).generateTitles = generateTitles;
  return cfg;
}

async function boot(home: string, root: string, cfg: Record<string, unknown>): Promise<EcaProc> {
  const p = track(new EcaProc({ home, config: cfg }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** A chat on model m2 with the plan agent, stored in `home`; the server is then stopped. */
async function storedChat(home: string, root: string): Promise<string> {
  const p = await boot(home, root, config(['m1', 'm2'], true));
  llm().script([{ text: 'answer' }], [{ text: 'Parser fix' }]);
  const chatId = (await p.request(ECA.chatPrompt, { chatId: 'c-1', message: 'fix the parser', model: 'fake/m2', agent: 'plan', contentId: 'u1' })).result.chatId;
  await p.turnDone(chatId);
  await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.content.type === 'metadata', 'the generated title');
  await p.stop();
  return chatId;
}

/** What came from the server after message `from` up to the answer `answer`, as short labels. */
function sequence(p: EcaProc, from: number, answer: Msg): string[] {
  const out: string[] = [];
  for (const m of p.messages.slice(from)) {
    if (m === answer) return [...out, 'answer'];
    if (m.method === ECA.chatContentReceived.method) out.push(`content ${m.params.role} ${m.params.content.type}`);
    else if (m.method === ECA.configUpdated.method) out.push(`config/updated ${JSON.stringify(m.params)}`);
    else if (m.method?.startsWith('chat/')) out.push(m.method);
  }
  throw new Error('the answer is not among the messages');
}

describe('chat/open (resume)', () => {
  it('replays the chat before answering, and answers with the stored model and agent after a restart', async () => {
    const home = tempDir();
    const root = workspace();
    const chatId = await storedChat(home, root);

    const q = await boot(home, root, config(['m1', 'm2']));
    const from = q.messages.length;
    // eca-emacs `eca-chat-resume` sends `limit` (eca-chat-history-page-size, 50 by default).
    const res = await q.request(ECA.chatOpen, { chatId, limit: 50 });
    expect(sequence(q, from, res)).toEqual([
      'chat/cleared',
      'chat/opened',
      'content user text',
      'content assistant text',
      'content system metadata',
      `config/updated {"chatId":"c-1","chat":{"selectModel":"fake/m2","variants":[],"selectVariant":null}}`,
      `config/updated {"chatId":"c-1","chat":{"selectTrust":false}}`,
      'answer',
    ]);
    expect(res.result).toEqual({
      found: true,
      chatId: 'c-1',
      title: 'Parser fix',
      selection: { model: 'fake/m2', agent: 'plan', variant: null, variants: [], trust: false },
      // The window (`limit`) holds the whole chat: nothing older to page to.
      meta: { total: 2, returned: 2, beforeCursor: null, afterCursor: null, compactionCursor: null },
    });
    const opened = q.messages.find((m) => m.method === ECA.chatOpened.method);
    expect(opened?.params).toEqual({ chatId: 'c-1', title: 'Parser fix' });
    expect(q.contents(chatId).map((c) => c.content.text ?? c.content.title)).toEqual(['fix the parser', 'answer', 'Parser fix']);

    // The restored selection is what the next prompt uses, without the client naming it.
    llm().script([{ text: 'again' }]);
    const next = await q.request(ECA.chatPrompt, { chatId, message: 'more' });
    expect(next.result.model).toBe('fake/m2');
    await q.turnDone(chatId);
  });

  it('a stored model no longer configured comes back as null, with no model update', async () => {
    const home = tempDir();
    const root = workspace();
    const chatId = await storedChat(home, root);

    const q = await boot(home, root, config(['m1']));
    const from = q.messages.length;
    const res = await q.request(ECA.chatOpen, { chatId });
    // eca config.clj `notify-selected-model-changed!` sends nothing for a model not in the models.
    expect(sequence(q, from, res).filter((s) => s.startsWith('config/updated'))).toEqual([`config/updated {"chatId":"c-1","chat":{"selectTrust":false}}`]);
    expect(res.result.selection).toEqual({ model: null, agent: 'plan', variant: null, variants: [], trust: false });
  });

  it('an unknown chat is found: false, with no replay; a chat without a title gets an empty metadata', async () => {
    const home = tempDir();
    const root = workspace();
    const q = await boot(home, root, config(['m1']));
    const res = await q.request(ECA.chatOpen, { chatId: 'nope' });
    expect(res.result).toEqual({ found: false });
    expect(q.messages.some((m) => m.method === ECA.chatCleared.method || (m.method === ECA.configUpdated.method && m.params.chatId))).toBe(false);
    // Bad params are the client's fault: −32602, and the server goes on.
    expect((await q.request(ECA.chatOpen, { chatId: 'c', limit: 'many' })).error?.code).toBe(-32602);

    llm().script([{ text: 'hi back' }]);
    await q.request(ECA.chatPrompt, { chatId: 'c-2', message: 'hi' });
    await q.turnDone('c-2');
    const from = q.messages.length;
    const open = await q.request(ECA.chatOpen, { chatId: 'c-2' });
    expect(open.result).toEqual({ found: true, chatId: 'c-2', selection: { model: 'fake/m1', agent: 'code', variant: null, variants: [], trust: false } });
    // ECA's open-chat! sends `{type: metadata}` even without a title (eca-emacs then clears the buffer's).
    expect(sequence(q, from, open)).toContain('content system metadata');
    expect(q.messages.slice(from).find((m) => m.params?.content?.type === 'metadata')?.params.content).toEqual({ type: 'metadata' });
  });
});

/**
 * Auto-compaction and context-overflow recovery over real stdio, against the fake LLM server
 * (which counts tokens as request JSON length / 4, and refuses requests over `contextLimit` with
 * each provider's real "too long" error). They follow ECA's context management
 * (docs/config/context-management.md): chat.clj `trigger-auto-compact!` after a step reached
 * lifecycle.clj `auto-compact?`, and chat.clj's `:context-overflow` branch (prune tool results,
 * compact, resume; else the "Context window exceeded" text); the usage content is
 * docs/protocol.md `ChatUsageContent` (shared.clj `context-breakdown`).
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeChatConfig, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, workspace } from './harness.js';
import type { RecordedRequest } from '../fixtures/fake-llm.js';

const { llm, track } = useFakeLlmSuite();

/** The model's context window in these tests; auto-compaction at 75% of it. */
const WINDOW = 40_000;

async function boot(opts: { api?: string; window?: number | null; files?: Record<string, string>; extra?: Record<string, unknown>; cost?: { input: number; output: number } } = {}) {
  const root = workspace(opts.files ?? { 'a.txt': 'alpha\n' });
  const cfg = fakeProviderConfig(llm().url, opts.api ?? 'openai-chat', opts.extra);
  const fake = (cfg.providers as Record<string, { models: Record<string, unknown> }>).fake;
  // No window: the model's size is unknown, so only the provider's refusal can tell (no auto-compaction).
  fake.models = { m1: { ...(opts.window === null ? {} : { limit: { context: opts.window ?? WINDOW, output: 100 } }), ...(opts.cost ? { cost: opts.cost } : {}) } };
  const p = track(new EcaProc({ home: tempDir(), config: cfg }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

/** A request's size as the fake counts it. */
const tokens = (r: RecordedRequest): number => Math.ceil(JSON.stringify(r.body).length / 4);
const chatRequests = () => llm().requests.filter((r) => r.method === 'POST' && r.path !== '/api/tags');
const isSummaryRequest = (r: RecordedRequest) => JSON.stringify(r.body.messages?.at(-1) ?? '').includes('Summarize this conversation');
/** Lines of 80 characters, `n` tokens in all. */
const bulk = (mark: string, n: number) => `${mark}${'.'.repeat(79 - mark.length)}\n`.repeat(Math.ceil((n * 4) / 80));

function texts(p: EcaProc, chatId: string, role = 'system'): string[] {
  return p
    .contents(chatId)
    .filter((c) => c.role === role && c.content.type === 'text')
    .map((c) => c.content.text as string);
}

describe('auto-compaction (autoCompactPercentage)', () => {
  it('a chat pushed past the threshold is summarised before the next request, which carries the summary, keeps the latest turn and fits', async () => {
    const p = await boot();
    // Turn 1: a long note pushes the step past 75% of the window.
    const note = `Remember this note: ${'n'.repeat(WINDOW * 4 * 0.8)}`;
    llm().script([{ text: 'noted' }], [{ text: 'The user shared a long note about n.' }], [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: note })).result.chatId;
    await p.turnDone(chatId);
    const usage = p.contents(chatId).find((c) => c.content.type === 'usage')!.content;
    expect(usage.sessionTokens).toBeGreaterThanOrEqual(WINDOW * 0.75);
    expect(usage.autoCompactPercentage).toBe(75);
    expect(usage.contextBreakdown.contextLimit).toBe(WINDOW);
    expect(usage.contextBreakdown.categories.map((c: { name: string }) => c.name)).toEqual(['System prompt', 'Tool definitions', 'Conversation']);
    expect(usage.contextBreakdown.freeTokens).toBe(WINDOW - usage.contextBreakdown.usedTokens);

    // Turn 2: compacted first (ECA checks at the next prompt too), then answered from the summary.
    await p.request(ECA.chatPrompt, { chatId, message: 'now read a.txt' });
    await p.turnDone(chatId, 2);
    const reqs = chatRequests();
    expect(reqs).toHaveLength(4);
    const [first, summary, next, last] = reqs;
    expect(isSummaryRequest(summary)).toBe(true);
    expect(JSON.stringify(summary.body)).toContain('Remember this note');
    // The latest turn is kept verbatim, not summarised.
    expect(JSON.stringify(summary.body)).not.toContain('now read a.txt');
    const sent = JSON.stringify(next.body.messages);
    expect(sent).toContain('The user shared a long note about n.');
    expect(sent).toContain('now read a.txt');
    expect(sent).not.toContain('Remember this note');
    expect(tokens(next)).toBeLessThan(WINDOW * 0.75);
    expect(tokens(next)).toBeLessThan(tokens(first));
    expect(JSON.stringify(last.body.messages)).toContain('alpha');
    expect(p.text(chatId)).toBe('noteddone');
    expect(texts(p, chatId)).toContain('Auto-compacted chat');

    // The store keeps everything: the editor pages the whole chat, the note included.
    const from = p.messages.length;
    const open = await p.request(ECA.chatOpen, { chatId, limit: 100 });
    expect(open.result.found).toBe(true);
    expect(open.result.meta.compactionCursor).not.toBeNull();
    const replay = p.messages.slice(from).filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId);
    const replayed = replay.map((m) => m.params.content.text ?? '').join('\n');
    expect(replayed).toContain('Remember this note');
    expect(replayed).toContain('The user shared a long note about n.');
    expect(replayed).toContain('now read a.txt');
    expect(replay.some((m) => m.params.role === 'system' && m.params.content.text === '── Chat auto-compacted ──')).toBe(true);
  });

  // ECA shared.clj `context-breakdown` / `split-system-prompt`: the system prompt's rules, skills
  // catalog and AGENTS.md count apart, in ECA's order, before the tools and the conversation.
  it('the usage breakdown counts Rules, Skills and AGENTS.md apart from the rest of the system prompt', async () => {
    const p = await boot({
      files: {
        'a.txt': 'alpha\n',
        'AGENTS.md': `AGENTS-TEXT ${'a'.repeat(800)}`,
        '.patchbay/rules/style.md': `RULE-TEXT ${'r'.repeat(400)}`,
        '.agents/skills/review-pr/SKILL.md': '---\nname: review-pr\ndescription: Review a pull request given its URL\n---\nBODY\n',
      },
    });
    llm().script([{ text: 'hi' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hello' })).result.chatId;
    await p.turnDone(chatId);
    const system = JSON.stringify(chatRequests()[0].body.messages[0]);
    expect(system).toContain('AGENTS-TEXT');
    expect(system).toContain('RULE-TEXT');
    const breakdown = p.contents(chatId).find((c) => c.content.type === 'usage')!.content.contextBreakdown;
    const names = breakdown.categories.map((c: { name: string }) => c.name);
    expect(names).toEqual(['System prompt', 'Rules', 'Skills', 'AGENTS.md', 'Tool definitions', 'Conversation']);
    const tokensOf = (name: string) => breakdown.categories.find((c: { name: string }) => c.name === name).tokens as number;
    // The AGENTS.md text is about twice the rule's (the counts are scaled to the provider's).
    expect(tokensOf('AGENTS.md')).toBeGreaterThan(tokensOf('Rules'));
    expect(breakdown.categories.find((c: { name: string }) => c.name === 'Rules').color).toBe('#c678dd');
  });

  // ECA chat.clj: a stop while compacting (`:auto-compacting?`) leaves the chat as it was; the
  // compaction is still owed, so the next prompt compacts first (lifecycle.clj `auto-compact?` holds).
  it('a stop during the summary request ends the turn, keeps the chat whole, and the next prompt compacts first', async () => {
    const p = await boot({ extra: { chat: { generateTitles: false, maxRetries: 0, stallTimeoutSeconds: 60 } } });
    const note = `Remember this note: ${'n'.repeat(WINDOW * 4 * 0.8)}`;
    llm().script([{ text: 'noted' }], [{ stall: 'forever' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: note })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'next one' });
    // The summary request is in flight (the fake holds it open).
    for (const until = Date.now() + 15_000; chatRequests().length < 2 && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
    p.notify(ECA.chatPromptStop, { chatId });
    await p.turnDone(chatId, 2);
    expect(isSummaryRequest(chatRequests()[1])).toBe(true);
    expect(texts(p, chatId)).not.toContain('Auto-compacted chat');
    llm().script([{ text: 'Summary: a long note.' }], [{ text: 'answered' }]);
    await p.request(ECA.chatPrompt, { chatId, message: 'last one' });
    await p.turnDone(chatId, 3);
    const [summary, answer] = chatRequests().slice(2);
    expect(isSummaryRequest(summary)).toBe(true);
    expect(JSON.stringify(answer.body.messages)).toContain('Summary: a long note.');
    expect(JSON.stringify(answer.body.messages)).not.toContain('Remember this note');
    expect(p.text(chatId)).toBe('notedanswered');
  });

  // ECA chat.clj `trigger-auto-compact!` sends the compaction as a prompt of the chat (same system
  // prompt and tools), so it reads the chat's prompt cache back instead of paying for it all again.
  it('the summary request repeats the chat request head, so the provider reads it from the prompt cache', async () => {
    const p = await boot({ api: 'anthropic', files: { 'big.txt': bulk('big', WINDOW * 0.8) } });
    llm().script(
      [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'big.txt' } } }],
      [{ toolCall: { id: 'c2', name: 'patchbay__read_file', args: { path: 'big.txt', limit: 1 } } }],
      [{ text: 'Read big.txt: lines of dots.' }],
      [{ text: 'big.txt is dots' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'what is in big.txt?' })).result.chatId;
    await p.turnDone(chatId);
    const reqs = chatRequests();
    expect(reqs).toHaveLength(4);
    const [, last, summary] = reqs;
    expect(isSummaryRequest(summary)).toBe(true);
    expect(summary.body.system).toEqual(last.body.system);
    expect(summary.body.tools).toEqual(last.body.tools);
    // The big tool result was written to the cache by the request before: the summary reads it back.
    const reports = llm().promptCache.reports;
    expect(reports).toHaveLength(4);
    expect(reports[2].read).toBeGreaterThan(WINDOW * 0.5);
    expect(p.text(chatId)).toBe('big.txt is dots');
  });

  it('rolling back past the summary restores the full history for the model (the store kept it)', async () => {
    const p = await boot();
    const note = `Remember this note: ${'n'.repeat(WINDOW * 4 * 0.8)}`;
    llm().script([{ text: 'noted' }], [{ text: 'Summary of the note.' }], [{ text: 'fine' }], [{ text: 'again' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: note, contentId: 'u1' })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'how are you', contentId: 'u2' });
    await p.turnDone(chatId, 2);
    expect(isSummaryRequest(chatRequests()[1])).toBe(true);
    expect(JSON.stringify(chatRequests()[2].body.messages)).not.toContain('Remember this note');
    // ECA chat.clj `rollback-chat`: u2 and everything after it go, the summary written after it too.
    const res = await p.request(ECA.chatRollback, { chatId, contentId: 'u2', include: ['messages'] });
    expect(res.error).toBeUndefined();
    await p.request(ECA.chatPrompt, { chatId, message: 'once more', contentId: 'u3' });
    await p.turnDone(chatId, 3);
    const sent = JSON.stringify(chatRequests()[3].body.messages);
    expect(sent).toContain('Remember this note');
    expect(sent).not.toContain('Summary of the note.');
    expect(sent).not.toContain('how are you');
  });

  it('compacts in the middle of a turn after a big tool result, and the turn goes on to its answer', async () => {
    const p = await boot({ files: { 'big.txt': bulk('big', WINDOW * 0.8) } });
    llm().script(
      [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'big.txt' } } }],
      [{ toolCall: { id: 'c2', name: 'patchbay__read_file', args: { path: 'big.txt', limit: 1 } } }],
      [{ text: 'Read big.txt: lines of dots.' }],
      [{ text: 'big.txt is dots' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'what is in big.txt?' })).result.chatId;
    await p.turnDone(chatId);
    const reqs = chatRequests();
    expect(reqs).toHaveLength(4);
    expect(isSummaryRequest(reqs[2])).toBe(true);
    // The turn is most of the window: it is summarised too, and the request in progress survives.
    const sent = JSON.stringify(reqs[3].body.messages);
    expect(sent).toContain('Read big.txt: lines of dots.');
    expect(sent).toContain('what is in big.txt?');
    expect(sent).not.toContain('big....');
    expect(tokens(reqs[3])).toBeLessThan(WINDOW * 0.75);
    expect(p.text(chatId)).toBe('big.txt is dots');
  });

  it.each([
    ['the model window is unknown', { window: null }],
    ['autoCompactPercentage is null', { extra: { autoCompactPercentage: null } }],
  ])('stays off when %s', async (_what, opts) => {
    const p = await boot(opts);
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'x'.repeat(WINDOW * 4) })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: 'again' });
    await p.turnDone(chatId, 2);
    expect(chatRequests()).toHaveLength(2);
    expect(chatRequests().some(isSummaryRequest)).toBe(false);
    expect(p.text(chatId)).toBe('onetwo');
    expect(p.contents(chatId).find((c) => c.content.type === 'usage')!.content.autoCompactPercentage).toBeUndefined();
  });
});

describe('/compact (ECA commands.clj "compact")', () => {
  it('summarises the whole chat with the extra instructions; the next request reads only the summary, and the editor still pages it all', async () => {
    const p = await boot();
    llm().script([{ text: 'first answer' }], [{ text: 'Summary: the user said hello.' }], [{ text: 'second answer' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hello there' })).result.chatId;
    await p.turnDone(chatId);
    await p.request(ECA.chatPrompt, { chatId, message: '/compact keep the greetings' });
    await p.turnDone(chatId, 2);
    const summary = chatRequests()[1];
    expect(isSummaryRequest(summary)).toBe(true);
    expect(JSON.stringify(summary.body)).toContain('keep the greetings');
    expect(JSON.stringify(summary.body)).toContain('hello there');
    expect(p.text(chatId, 'system')).toContain('Chat compacted. Summary:\nSummary: the user said hello.');
    await p.request(ECA.chatPrompt, { chatId, message: 'and now?' });
    await p.turnDone(chatId, 3);
    const sent = JSON.stringify(chatRequests()[2].body.messages);
    expect(sent).toContain('Summary: the user said hello.');
    expect(sent).not.toContain('hello there');
    expect(sent).not.toContain('first answer');
    const from = p.messages.length;
    await p.request(ECA.chatOpen, { chatId, limit: 100 });
    const replayed = p.messages
      .slice(from)
      .filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId)
      .map((m) => m.params.content.text ?? '');
    expect(replayed).toEqual(expect.arrayContaining(['hello there', 'first answer', 'and now?', 'second answer']));
    // ECA chat.clj `message->contents`: the compact_marker as a system text, then the summary as
    // the user message shared.clj `compact-side-effect!` stores, where the compaction happened.
    const contents = p.messages
      .slice(from)
      .filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && m.params.content.type === 'text')
      .map((m) => `${m.params.role}: ${m.params.content.text}`);
    const at = contents.indexOf('system: ── Chat compacted ──');
    expect(at).toBeGreaterThan(contents.indexOf('assistant: first answer'));
    expect(contents[at + 1]).toBe('user: The conversation was compacted/summarized, consider this summary:\nSummary: the user said hello.');
    expect(contents[at + 2]).toBe('user: and now?');
  });

  // ECA runs the compaction as a prompt of the chat, so its tokens are paid and counted; then
  // shared.clj `compact-side-effect!` zeroes the chat's usage and sends a usage content, so the
  // editor's context bar empties at once (eca-chat.el takes sessionTokens from every usage content).
  it('the summary request counts in the chat cost, and a usage content with an empty window follows the compaction', async () => {
    const p = await boot({ cost: { input: 1000, output: 2000 } });
    llm().script([{ text: 'first answer' }], [{ text: 'Summary: the user said hello.' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: `hello there ${'h'.repeat(4000)}` })).result.chatId;
    await p.turnDone(chatId);
    const usages = () =>
      p
        .contents(chatId)
        .filter((c) => c.content.type === 'usage')
        .map((c) => c.content);
    const before = usages().at(-1)!;
    expect(before.sessionTokens).toBeGreaterThan(1000);
    await p.request(ECA.chatPrompt, { chatId, message: '/compact' });
    await p.turnDone(chatId, 2);
    expect(isSummaryRequest(chatRequests()[1])).toBe(true);
    const after = usages().at(-1)!;
    expect(after).not.toBe(before);
    expect(after.sessionTokens).toBe(0);
    expect(after.messageInputTokens).toBeGreaterThan(1000);
    expect(after.limit).toEqual({ context: WINDOW, output: 100 });
    expect(Number(after.sessionCost)).toBeGreaterThan(Number(before.sessionCost));
  });
});

describe('auto-compaction in a subagent', () => {
  // ECA tools/agent.clj `spawn-agent` runs the subagent as a chat of its own, with the chat
  // lifecycle (auto-compaction included); lifecycle.clj `send-content!` names the parent on each
  // of its contents, the compaction's texts too.
  it("a subagent's child chat compacts its own history and still returns its answer to the parent", async () => {
    const p = await boot({ files: { 'big.txt': bulk('big', WINDOW * 0.8) } });
    const EXPLORER = 'You are an explorer subagent';
    const read = (id: string, args: Record<string, unknown>) => [{ toolCall: { id, name: 'patchbay__read_file', args } }];
    llm().onRequest = (path, body: any) => {
      if (path !== '/v1/chat/completions') return undefined;
      const all = JSON.stringify(body.messages);
      const results = body.messages.filter((m: any) => m.role === 'tool').length;
      if (!String(body.messages[0]?.content).includes(EXPLORER))
        return results ? [{ text: 'parent done' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'look at big.txt' } } }];
      if (JSON.stringify(body.messages.at(-1)).includes('Summarize this conversation')) return [{ text: 'Child summary: big.txt is dots.' }];
      if (all.includes('Child summary')) return [{ text: 'CHILD-ANSWER: dots' }];
      return results ? read('c2', { path: 'big.txt', limit: 1 }) : read('c1', { path: 'big.txt' });
    };
    const chatId = (await p.request(ECA.chatPrompt, { message: 'what is in big.txt?' })).result.chatId;
    await p.turnDone(chatId);
    const childId = 'subagent-s1';
    const child = p.messages.filter((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === childId).map((m) => m.params);
    expect(child.some((c) => c.role === 'system' && c.content.text === 'Auto-compacted chat')).toBe(true);
    expect(child.every((c) => c.parentChatId === chatId)).toBe(true);
    const childReqs = chatRequests().filter((r) => String(r.body.messages[0]?.content).includes(EXPLORER));
    const last = JSON.stringify(childReqs.at(-1)!.body.messages);
    expect(last).toContain('Child summary: big.txt is dots.');
    expect(last).not.toContain('big....');
    // The parent reads the child's answer; its own history never had the big file.
    const parentLast = chatRequests()
      .filter((r) => !String(r.body.messages[0]?.content).includes(EXPLORER))
      .at(-1)!;
    expect(JSON.stringify(parentLast.body.messages)).toContain('CHILD-ANSWER: dots');
    expect(p.text(chatId)).toBe('parent done');
  });
});

describe('context-overflow recovery', () => {
  it('Anthropic "prompt is too long": prunes old tool results and retries, then compacts and retries, and the turn ends with the answer', async () => {
    const p = await boot({ api: 'anthropic', window: null, files: { 'one.txt': bulk('one', 2000), 'two.txt': bulk('two', 1000), 'three.txt': bulk('three', 6000) } });
    const read = (id: string, path: string) => [{ toolCall: { id, name: 'patchbay__read_file', args: { path } } }];
    llm().script(read('c1', 'one.txt'), [{ text: 'ok1' }], read('c2', 'two.txt'), read('c3', 'three.txt'), [{ text: 'Summary: read one, two and three.' }], [{ text: 'done' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read one.txt' })).result.chatId;
    await p.turnDone(chatId);
    // The window: the chat's base request and 6k more. Pruning one.txt (2k) cannot make three.txt (6k) fit.
    const base = tokens(chatRequests()[0]);
    llm().contextLimit = base + 6000;
    await p.request(ECA.chatPrompt, { chatId, message: 'read two.txt then three.txt' });
    await p.turnDone(chatId, 2);

    expect(llm().overflows).toBe(2);
    const reqs = chatRequests().slice(2);
    // two.txt's call, three.txt's call, the refused request, the pruned one (refused too), the summary, the answer.
    expect(reqs).toHaveLength(6);
    const [, , refused, pruned, summary, answered] = reqs;
    expect(JSON.stringify(refused.body)).toContain('one....');
    expect(JSON.stringify(pruned.body)).not.toContain('one....');
    expect(JSON.stringify(pruned.body)).toContain('[output pruned]');
    expect(JSON.stringify(pruned.body)).toContain('three..');
    expect(isSummaryRequest(summary)).toBe(true);
    expect(JSON.stringify(answered.body.messages)).toContain('Summary: read one, two and three.');
    expect(tokens(answered)).toBeLessThanOrEqual(base + 6000);
    expect(p.text(chatId)).toBe('ok1done');
    const notices = texts(p, chatId);
    expect(notices).toContain('Context window exceeded. Pruning old tool outputs and retrying...');
    expect(notices).toContain('Context window exceeded. Auto-compacting conversation...');
    expect(notices).toContain('Auto-compacted chat');
    expect(p.contents(chatId).some((c) => c.content.error === true)).toBe(false);
  });

  it('OpenAI context_length_exceeded: pruning alone is enough when it frees the room', async () => {
    const p = await boot({ window: null, files: { 'one.txt': bulk('one', 4000), 'two.txt': bulk('two', 3000) } });
    const read = (id: string, path: string) => [{ toolCall: { id, name: 'patchbay__read_file', args: { path } } }];
    llm().script(read('c1', 'one.txt'), [{ text: 'ok1' }], read('c2', 'two.txt'), [{ text: 'ok2' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read one.txt' })).result.chatId;
    await p.turnDone(chatId);
    llm().contextLimit = tokens(chatRequests()[0]) + 5000;
    await p.request(ECA.chatPrompt, { chatId, message: 'read two.txt' });
    await p.turnDone(chatId, 2);
    expect(llm().overflows).toBe(1);
    expect(chatRequests().some(isSummaryRequest)).toBe(false);
    expect(JSON.stringify(chatRequests().at(-1)!.body.messages)).toContain('[output pruned]');
    expect(p.text(chatId)).toBe('ok1ok2');
  });

  // ECA chat.clj `prune-tool-results!` clears the old outputs in the stored history once, so later
  // requests repeat the same pruned prefix; a cut that moved with every step would change an
  // already-sent tool result at each request and miss the provider's prompt cache every time.
  it('after pruning, later requests keep the same prefix: what was sent whole stays whole', async () => {
    const p = await boot({ window: null, files: { 'one.txt': bulk('one', 4000), 'two.txt': bulk('two', 3000), 'a.txt': 'alpha\n' } });
    const read = (id: string, path: string) => [{ toolCall: { id, name: 'patchbay__read_file', args: { path } } }];
    llm().script(read('c1', 'one.txt'), [{ text: 'ok1' }], read('c2', 'two.txt'), [{ text: 'ok2' }], read('c3', 'a.txt'), [{ text: 'ok3' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'read one.txt' })).result.chatId;
    await p.turnDone(chatId);
    llm().contextLimit = tokens(chatRequests()[0]) + 5000;
    await p.request(ECA.chatPrompt, { chatId, message: 'read two.txt' });
    await p.turnDone(chatId, 2);
    expect(llm().overflows).toBe(1);
    const before = chatRequests().length;
    await p.request(ECA.chatPrompt, { chatId, message: 'read a.txt' });
    await p.turnDone(chatId, 3);
    const [asked, answered] = chatRequests().slice(before);
    expect(answered).toBeDefined();
    // The system prompt aside, the second request starts with every message of the first, unchanged.
    const first = asked.body.messages.slice(1);
    expect(answered.body.messages.slice(1, first.length + 1)).toEqual(first);
    expect(JSON.stringify(answered.body.messages)).toContain('two....');
    expect(JSON.stringify(answered.body.messages)).not.toContain('one....');
    expect(p.text(chatId)).toBe('ok1ok2ok3');
  });

  it('a provider that keeps overflowing ends the turn with a clear error, after a bounded number of tries', async () => {
    const p = await boot({ window: null });
    llm().contextLimit = 10;
    const chatId = (await p.request(ECA.chatPrompt, { message: 'hi' })).result.chatId;
    await p.turnDone(chatId);
    const error = p.contents(chatId).find((c) => c.content.error === true)?.content.text as string;
    expect(error).toContain('Context window exceeded:');
    expect(error).toContain("larger than the model's context window");
    // The request (nothing to prune, so no pruned retry), then the summary request: then it gives up.
    expect(llm().overflows).toBe(2);
    expect(chatRequests()).toHaveLength(2);
    // The chat still works: the next prompt gets the same bounded answer, not a hang.
    await p.request(ECA.chatPrompt, { chatId, message: 'again' });
    await p.turnDone(chatId, 2);
    expect(llm().overflows).toBe(4);
  });
});

describe('auto-compaction in patchbay chat', () => {
  // The CLI is an ECA client too: it shows the system texts chat.clj sends around an auto-compaction.
  it('tells the terminal user that the chat was compacted mid-turn, and still prints the answer', async () => {
    const cwd = workspace({ 'big.txt': bulk('big', WINDOW * 0.8) });
    llm().script(
      [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'big.txt' } } }],
      [{ toolCall: { id: 'c2', name: 'patchbay__read_file', args: { path: 'big.txt', limit: 1 } } }],
      [{ text: 'Read big.txt: lines of dots.' }],
      [{ text: 'big.txt is dots' }],
    );
    const config = fakeChatConfig(llm().url, {
      providers: { fake: { api: 'openai-chat', url: `${llm().url}/v1`, key: 'x', models: { m1: { limit: { context: WINDOW, output: 100 } } } } },
    });
    const r = await runPatchbay(['chat', 'what is in big.txt?'], { home: tempDir(), cwd, env: { PATCHBAY_CONFIG: config } });
    expect(r.code, r.stderr).toBe(0);
    expect(chatRequests().some(isSummaryRequest)).toBe(true);
    expect(`${r.stdout}${r.stderr}`).toContain('Auto-compacted chat');
    expect(r.stdout).toContain('big.txt is dots');
    // The usage line after the turn is the last request's, after the compaction: well under the limit.
    expect(r.stderr).toMatch(/context [\d,]+ of 40,000 \(\d%|context [\d,]+ of 40,000 \(1\d%/);
  });
});

/**
 * Subagents meet the rest of the runtime over real stdio: hooks, stop, errors, delete, restart.
 * Followed (each test names its own):
 *
 * - ECA chat.clj `run-start-hooks!`: a subagent chat runs `subagentStart` (with `parent_chat_id`)
 *   instead of `chatStart`; chat/lifecycle.clj `run-post-request-hooks!`: `subagentPostRequest`
 *   instead of `postRequest`; lifecycle.clj `chat-status-payload`: `parent_chat_id` for subagents.
 * - ECA tools/agent.clj `spawn-agent`: a failed child is "## Agent '<name>' Failed"; the parent's
 *   stop stops the child (`stop-subagent-chat!`); `tool-call-details-after-invocation :spawn_agent`:
 *   the `toolCalled` keeps the subagent details (eca-emacs eca-chat.el drops its subagent mapping
 *   by `details.subagentChatId` at `toolCalled`).
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Reply } from '../fixtures/fake-llm.js';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

const EXPLORER = 'You are an explorer subagent';
const GENERAL = 'You are a general-purpose subagent';

async function boot(opts: { root?: string; home?: string; config?: Record<string, unknown> } = {}) {
  const home = opts.home ?? tempDir();
  const root = opts.root ?? workspace({ 'a.txt': 'alpha\n' });
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', opts.config) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, home, root };
}

type Body = { messages: Array<{ role: string; content: unknown }> };
const system = (b: Body) => String(b.messages.find((m) => m.role === 'system')?.content ?? '');
const hasToolResult = (b: Body) => b.messages.some((m) => m.role === 'tool');
const chatRequests = () =>
  llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body as Body);

function route(marker: string, child: (b: Body) => Reply, parent: { first: Reply; then: Reply }): void {
  llm().onRequest = (path, body: Body) => {
    if (path !== '/v1/chat/completions') return undefined;
    if (system(body).includes(marker)) return child(body);
    return hasToolResult(body) ? parent.then : parent.first;
  };
}

const spawn = (id: string, args: Record<string, unknown>) => ({ toolCall: { id, name: 'patchbay__spawn_agent', args } });
/**
 * A shell line appending the hook's stdin (one JSON object, no newline) as a line of
 * `<name>.jsonl` in the workspace, in one write: two chats' status hooks may run at once.
 */
const capture = (name: string) => `line=$(cat); printf '%s\\n' "$line" >> "$PWD/${name}.jsonl"`;
const sh = (type: string, shell: string) => ({ type, actions: [{ type: 'shell', shell }] });
const jsonl = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            throw new Error(`bad line in ${path}: ${l}`);
          }
        })
    : [];

async function prompt(p: EcaProc, message: string): Promise<string> {
  return (await p.request(ECA.chatPrompt, { message })).result.chatId as string;
}

async function until(what: string, ok: () => boolean, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const spawnCalled = (p: EcaProc, chatId: string) => p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.name === 'spawn_agent')?.content;

describe('hooks in subagent chats', () => {
  // ECA chat.clj `run-start-hooks!` and lifecycle.clj `run-post-request-hooks!`, `chat-status-payload`.
  it('a child runs subagentStart and subagentPostRequest with parent_chat_id (never chatStart or postRequest); its status hook names its parent', async () => {
    const { p, root } = await boot({
      config: {
        hooks: {
          start: sh('chatStart', capture('chat-start')),
          subStart: sh('subagentStart', `${capture('sub-start')}; echo '{"additionalContext":"SUBAGENT-HOOK-CONTEXT"}'`),
          post: sh('postRequest', capture('post')),
          subPost: sh('subagentPostRequest', capture('sub-post')),
          status: sh('chatStatusChanged', capture('status')),
        },
      },
    });
    route(EXPLORER, () => [{ text: 'child answer' }], { first: [spawn('h1', { agent: 'explorer', task: 'look' })], then: [{ text: 'parent answer' }] });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId);
    const childId = 'subagent-h1';

    const chatStarts = jsonl(join(root, 'chat-start.jsonl'));
    expect(chatStarts.map((x) => x.chat_id)).toEqual([chatId]);
    const subStarts = jsonl(join(root, 'sub-start.jsonl'));
    expect(subStarts).toHaveLength(1);
    // The child's agent is the subagent's name, as ECA prompts it (agent.clj `spawn-agent` `:agent agent-name`).
    expect(subStarts[0]).toMatchObject({ hook_type: 'subagentStart', chat_id: childId, parent_chat_id: chatId, agent: 'explorer' });
    // subagentStart's additionalContext reaches the child's prompt only.
    const bodies = chatRequests();
    expect(bodies.filter((b) => system(b).includes(EXPLORER)).every((b) => system(b).includes('SUBAGENT-HOOK-CONTEXT'))).toBe(true);
    expect(bodies.filter((b) => !system(b).includes(EXPLORER)).some((b) => system(b).includes('SUBAGENT-HOOK-CONTEXT'))).toBe(false);

    await until('the post hooks', () => jsonl(join(root, 'post.jsonl')).length === 1 && jsonl(join(root, 'sub-post.jsonl')).length === 1);
    expect(jsonl(join(root, 'post.jsonl'))[0]).toMatchObject({ hook_type: 'postRequest', chat_id: chatId, response: 'parent answer' });
    expect(jsonl(join(root, 'post.jsonl'))[0].parent_chat_id).toBeUndefined();
    expect(jsonl(join(root, 'sub-post.jsonl'))[0]).toMatchObject({ hook_type: 'subagentPostRequest', chat_id: childId, parent_chat_id: chatId, response: 'child answer', follow_up_active: false });

    // Status snapshots of the child name the parent; the parent's do not.
    await until('status snapshots of both chats', () => {
      const s = jsonl(join(root, 'status.jsonl'));
      return s.some((x) => x.chat_id === childId && x.status === 'idle') && s.some((x) => x.chat_id === chatId && x.status === 'idle');
    });
    const statuses = jsonl(join(root, 'status.jsonl'));
    expect(statuses.filter((x) => x.chat_id === childId).every((x) => x.parent_chat_id === chatId)).toBe(true);
    expect(statuses.filter((x) => x.chat_id === chatId).every((x) => x.parent_chat_id === undefined)).toBe(true);
  });

  // hooks.md "subagentPostRequest": followUp runs another turn of the subagent, whose answer is the one returned.
  it('a subagentPostRequest followUp runs another child turn before the parent gets its answer', async () => {
    const { p } = await boot({
      config: { hooks: { again: sh('subagentPostRequest', `if grep -q '"follow_up_active":true'; then exit 0; fi; echo '{"followUp":"Double-check it"}'`) } },
    });
    let childTurns = 0;
    route(EXPLORER, () => [{ text: ++childTurns === 1 ? 'first draft' : 'checked answer' }], { first: [spawn('f1', { agent: 'explorer', task: 'look' })], then: [{ text: 'done' }] });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId);
    expect(childTurns).toBe(2);
    expect(spawnCalled(p, chatId).outputs[0].text).toBe("## Agent 'explorer' Result\n\nchecked answer");
  });
});

describe('a subagent stopped, failing, deleted or cut by a restart', () => {
  // agent.clj `spawn-agent` (stop while waiting) and `tool-call-details-after-invocation`.
  it("the parent's stop while the child waits for approval rejects the child's call, ends both turns, and the command never runs", async () => {
    const { p, root } = await boot();
    route(GENERAL, (b) => (hasToolResult(b) ? [{ text: 'unreached' }] : [{ toolCall: { id: 'w1', name: 'patchbay__shell_command', args: { command: 'echo hi > late.txt' } } }]), {
      first: [spawn('sa', { agent: 'general', task: 'make it' })],
      then: [{ text: 'unreached' }],
    });
    const chatId = await prompt(p, 'go');
    const childId = 'subagent-sa';
    await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === childId && m.params.content.type === 'toolCallRun');
    p.notify(ECA.chatPromptStop, { chatId });
    expect((await p.turnDone(chatId)).params.content.stopReason).toBe('cancelled');
    expect((await p.turnDone(childId)).params.content.stopReason).toBe('cancelled');
    // A late approval changes nothing.
    p.notify(ECA.chatToolCallApprove, { chatId: childId, toolCallId: 'w1' });
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(root, 'late.txt'))).toBe(false);
    const called = spawnCalled(p, chatId);
    expect(called.error).toBe(true);
    expect(called.details).toMatchObject({ type: 'subagent', subagentChatId: childId, agentName: 'general' });
    expect(chatRequests().filter((b) => system(b).includes(GENERAL))).toHaveLength(1);
  });

  // agent.clj `failed-agent-result`: the child's error is the parent's tool result; the parent goes on.
  it("a child whose model fails gives the parent a Failed result it reads, and the parent's turn goes on", async () => {
    const { p } = await boot();
    route(EXPLORER, () => ({ status: 400, body: { error: { message: 'bad child request', type: 'invalid_request_error' } } }), {
      first: [spawn('e1', { agent: 'explorer', task: 'look' })],
      then: [{ text: 'I will look myself' }],
    });
    const chatId = await prompt(p, 'go');
    const end = await p.turnDone(chatId);
    expect(end.params.content.stopReason).not.toBe('error');
    const called = spawnCalled(p, chatId);
    expect(called.error).toBe(true);
    expect(called.outputs[0].text).toMatch(/^## Agent 'explorer' Failed\n\n.*bad child request/s);
    expect(called.details).toMatchObject({ type: 'subagent', subagentChatId: 'subagent-e1' });
    expect(p.text(chatId)).toBe('I will look myself');
  });

  // chat.clj `delete-chat`: deleting the child itself stops it; the parent's call ends and its turn goes on.
  it('chat/delete of a running child stops it; the parent reads that it is gone and answers; the child is no longer stored', async () => {
    const { p, home } = await boot();
    route(EXPLORER, () => [{ stall: 'forever' }], { first: [spawn('d1', { agent: 'explorer', task: 'look' })], then: [{ text: 'parent goes on' }] });
    const chatId = await prompt(p, 'go');
    const childId = 'subagent-d1';
    await until('the child request', () => llm().activeStreams === 1 && chatRequests().some((b) => system(b).includes(EXPLORER)));
    await p.request(ECA.chatDelete, { chatId: childId });
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('parent goes on');
    const called = spawnCalled(p, chatId);
    expect(called.error).toBe(true);
    await until('the child stream to close', () => llm().activeStreams === 0);
    const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT id FROM chats WHERE id = ?').get(childId)).toBeUndefined();
    } finally {
      db.close();
    }
  });

  // chat.clj `list-chats` and `open-chat!`: after a restart the child stays hidden and goes with its parent.
  it('a restart while a child runs: the child is not listed nor left running, and deleting the parent removes it', async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'alpha\n' });
    const first = await boot({ home, root });
    route(EXPLORER, () => [{ stall: 'forever' }], { first: [spawn('r1', { agent: 'explorer', task: 'look' })], then: [{ text: 'unreached' }] });
    const chatId = await prompt(first.p, 'go');
    await until('the child request', () => llm().activeStreams === 1);
    await first.p.stop();
    const { p } = await boot({ home, root });
    const list = (await p.request(ECA.chatList, {})).result;
    const ids = (list.chats as Array<{ id: string; status?: string }>).map((c) => c.id);
    expect(ids).toContain(chatId);
    expect(ids).not.toContain('subagent-r1');
    await p.request(ECA.chatDelete, { chatId });
    const dbFile = join(home, '.patchbay', 'patchbay.db');
    const db = new Database(dbFile, { readonly: true });
    try {
      expect(db.prepare('SELECT id FROM chats').all()).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('child chat ids', () => {
  // agent.clj `->subagent-chat-id` names the child after the tool call id, which the provider chose:
  // some OpenAI-compatible servers repeat ids across answers, so a second call must not land in the first child's chat.
  it('a tool call id the model uses again (in a later turn, or in another chat) gets a child chat of its own', async () => {
    const { p, home } = await boot();
    let n = 0;
    llm().onRequest = (path, body: Body) => {
      if (path !== '/v1/chat/completions') return undefined;
      if (system(body).includes(EXPLORER)) return [{ text: `answer ${++n}` }];
      // Every prompt of the parent spawns with the same call id; the tool result gets an answer.
      return body.messages.at(-1)?.role === 'tool' ? [{ text: 'ok' }] : [spawn('same', { agent: 'explorer', task: 'look' })];
    };
    const a = await prompt(p, 'first');
    await p.turnDone(a);
    const again = (await p.request(ECA.chatPrompt, { chatId: a, message: 'again' })).result.chatId as string;
    expect(again).toBe(a);
    await p.turnDone(a, 2);
    const b = await prompt(p, 'other chat');
    await p.turnDone(b);
    const results = [...p.contents(a), ...p.contents(b)].filter((c) => c.content.type === 'toolCalled' && c.content.name === 'spawn_agent').map((c) => c.content);
    expect(results.map((r) => r.outputs[0].text)).toEqual(["## Agent 'explorer' Result\n\nanswer 1", "## Agent 'explorer' Result\n\nanswer 2", "## Agent 'explorer' Result\n\nanswer 3"]);
    const childIds = results.map((r) => r.details.subagentChatId as string);
    expect(new Set(childIds).size).toBe(3);
    // Each child's contents went out under its own id, naming its own parent.
    for (const [i, id] of childIds.entries()) {
      const own = p.messages.filter((m: Msg) => m.method === ECA.chatContentReceived.method && m.params.chatId === id).map((m: Msg) => m.params);
      expect(own.every((c) => c.parentChatId === (i < 2 ? a : b))).toBe(true);
      expect(
        own
          .filter((c) => c.role === 'assistant' && c.content.type === 'text')
          .map((c) => c.content.text)
          .join(''),
      ).toBe(`answer ${i + 1}`);
    }
    const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
    try {
      const rows = db.prepare('SELECT id, parent_chat_id AS parent FROM chats WHERE parent_chat_id IS NOT NULL ORDER BY created_at').all() as Array<{ id: string; parent: string }>;
      expect(rows.map((r) => r.parent)).toEqual([a, a, b]);
    } finally {
      db.close();
    }
  });
});

describe('a reopened chat shows its subagents', () => {
  // ECA chat.clj `messages->contents` (used by `open-chat!` and `chat/history`): the spawn call,
  // then the child's messages under its id with `parentChatId`, then the call's result; eca-emacs
  // `eca-chat--render-history-contents` routes such items into the call's block.
  it("chat/open after a restart, and chat/history, replay the child's contents inside the spawn_agent call", async () => {
    const home = tempDir();
    const root = workspace({ 'a.txt': 'alpha\n' });
    const first = await boot({ home, root });
    route(EXPLORER, () => [{ text: 'CHILD-ANSWER' }], { first: [spawn('o1', { agent: 'explorer', task: 'CHILD-TASK' })], then: [{ text: 'parent answer' }] });
    const chatId = await prompt(first.p, 'go');
    await first.p.turnDone(chatId);
    await first.p.stop();

    const { p } = await boot({ home, root });
    const from = p.messages.length;
    await p.request(ECA.chatOpen, { chatId });
    const replay = p.messages
      .slice(from)
      .filter((m: Msg) => m.method === ECA.chatContentReceived.method)
      .map((m: Msg) => m.params);
    const at = (pred: (c: any) => boolean) => replay.findIndex(pred);
    const run = at((c) => c.chatId === chatId && c.content.type === 'toolCallRun' && c.content.name === 'spawn_agent');
    const childUser = at((c) => c.chatId === 'subagent-o1' && c.role === 'user');
    const childText = at((c) => c.chatId === 'subagent-o1' && c.content.type === 'text' && c.content.text === 'CHILD-ANSWER');
    const called = at((c) => c.chatId === chatId && c.content.type === 'toolCalled' && c.content.name === 'spawn_agent');
    expect(run).toBeGreaterThanOrEqual(0);
    expect(replay[run].content).toMatchObject({ manualApproval: false, details: { type: 'subagent', subagentChatId: 'subagent-o1' } });
    expect(run).toBeLessThan(childUser);
    expect(childUser).toBeLessThan(childText);
    expect(childText).toBeLessThan(called);
    expect(replay.filter((c) => c.chatId === 'subagent-o1').every((c) => c.parentChatId === chatId)).toBe(true);
    expect(replay.filter((c) => c.chatId === chatId).every((c) => c.parentChatId === undefined)).toBe(true);
    // No spinner left running by the replay.
    expect(replay.some((c) => c.content.type === 'progress' && c.content.state === 'running')).toBe(false);

    const history = (await p.request(ECA.chatHistory, { chatId, limit: 50 })).result.contents as Array<{ chatId: string; parentChatId?: string; content: any }>;
    const childItems = history.filter((c) => c.chatId === 'subagent-o1');
    expect(childItems.some((c) => c.content.type === 'text' && c.content.text === 'CHILD-ANSWER')).toBe(true);
    expect(childItems.every((c) => c.parentChatId === chatId)).toBe(true);
  });
});

describe('the context window of a child chat', () => {
  // ECA lifecycle.clj `auto-compact?` / chat.clj `trigger-auto-compact!` apply to every chat,
  // subagents' too; what the child tells on the way names its parent (lifecycle.clj `send-content!`).
  it("a child pushed past its agent's autoCompactPercentage compacts itself and still returns its answer; every content it sends names the parent", async () => {
    const WINDOW = 40_000;
    // 60% of the window: past the explorer's own 50%, short of the global 75%.
    const root = workspace({ 'big.txt': `${'b'.repeat(79)}\n`.repeat((WINDOW * 4 * 0.6) / 80), 'a.txt': 'alpha\n' });
    const cfg = fakeProviderConfig(llm().url, 'openai-chat', { agent: { explorer: { autoCompactPercentage: 50 } } });
    (cfg.providers as Record<string, { models: Record<string, unknown> }>).fake.models = { m1: { limit: { context: WINDOW, output: 100 } } };
    const p = track(new EcaProc({ home: tempDir(), config: cfg }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    let summaries = 0;
    llm().onRequest = (path, body: Body & { tools?: unknown[] }) => {
      if (path !== '/v1/chat/completions') return undefined;
      // The summary request (compaction.ts) ends with the summary prompt; it repeats the chat's tools (for the prompt cache).
      if (JSON.stringify(body.messages.at(-1)).includes('Summarize this conversation')) return (summaries++, [{ text: 'Summary: big.txt is all b.' }]);
      if (system(body).includes(EXPLORER)) {
        const results = body.messages.filter((m) => m.role === 'tool').length;
        if (results === 0 && !JSON.stringify(body.messages).includes('Summary: big.txt')) return [{ toolCall: { id: 'k1', name: 'patchbay__read_file', args: { path: 'big.txt' } } }];
        if (!JSON.stringify(body.messages).includes('Summary: big.txt')) return [{ toolCall: { id: 'k2', name: 'patchbay__read_file', args: { path: 'a.txt' } } }];
        return [{ text: 'CHILD-AFTER-COMPACTION' }];
      }
      return hasToolResult(body) ? [{ text: 'parent done' }] : [spawn('cw', { agent: 'explorer', task: 'read big.txt' })];
    };
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId, 1, 30_000);
    expect(summaries).toBe(1);
    expect(spawnCalled(p, chatId).outputs[0].text).toBe("## Agent 'explorer' Result\n\nCHILD-AFTER-COMPACTION");
    const childId = 'subagent-cw';
    const unmarked = p.messages.filter((m: Msg) => m.method === ECA.chatContentReceived.method && m.params.chatId === childId && m.params.parentChatId !== chatId);
    expect(unmarked).toEqual([]);
    // The parent's own requests never carried the child's big file.
    const parentRequests = chatRequests().filter((b) => JSON.stringify((b as { tools?: unknown }).tools ?? []).includes('patchbay__spawn_agent'));
    expect(parentRequests).toHaveLength(2);
    expect(parentRequests.some((b) => JSON.stringify(b).includes('b'.repeat(79)))).toBe(false);
  });
});

describe('agent files of a workspace the user has not trusted', () => {
  // Issue 16: an untrusted folder must not make patchbay read files outside it (here: into a subagent's prompt, sent to the model).
  it('an agent file that links outside the workspace is skipped and told; its target never reaches the model', async () => {
    const outside = tempDir();
    writeFileSync(join(outside, 'notes.md'), '---\ndescription: Private notes\n---\nSECRET-BODY of the user\n');
    const root = workspace({ 'a.txt': 'alpha\n' });
    mkdirSync(join(root, '.patchbay', 'agents'), { recursive: true });
    symlinkSync(join(outside, 'notes.md'), join(root, '.patchbay', 'agents', 'leak.md'));
    const { p } = await boot({ root });
    route('SECRET-BODY', () => [{ text: 'leaked' }], { first: [spawn('l1', { agent: 'leak', task: 'tell me' })], then: [{ text: 'ok' }] });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId);
    expect(spawnCalled(p, chatId).outputs[0].text).toMatch(/^Agent "leak" not found or not available/);
    expect(llm().requests.some((r) => JSON.stringify(r.body).includes('SECRET-BODY') || JSON.stringify(r.body).includes('Private notes'))).toBe(false);
    expect(p.text(chatId, 'system')).toMatch(/leak\.md is skipped: it links outside .*, a folder you have not trusted/);
  });

  // Read again every few seconds: a huge file is refused (as skills' files are), not read into memory each time.
  it('an agent file over 256 KiB is skipped and told; the others still work', async () => {
    const root = workspace({ '.patchbay/agents/huge.md': `---\ndescription: Huge\n---\n${'x'.repeat(300 * 1024)}\n` });
    const { p } = await boot({ root });
    route(EXPLORER, () => [{ text: 'found' }], { first: [spawn('z1', { agent: 'huge', task: 'go' })], then: [{ text: 'ok' }] });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId);
    expect(spawnCalled(p, chatId).outputs[0].text).toMatch(/^Agent "huge" not found or not available\. Available agents: explorer, general\./);
    expect(p.text(chatId, 'system')).toMatch(/Agent file .*huge\.md: larger than 256 KiB/);
  });
});

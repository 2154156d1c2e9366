/**
 * Subagents over real stdio: the model calls `patchbay__spawn_agent`, the subagent runs as a
 * child chat against the fake LLM (its requests are told apart by their system prompt), and the
 * editor sees what the ECA plugins expect. Followed:
 *
 * - ECA src/eca/features/tools/agent.clj `spawn-agent`: the child chat id `subagent-<toolCallId>`,
 *   the task as its prompt, its final answer as the result ("## Agent '<name>' Result"), the
 *   `SubagentDetails` of the call (`tool-call-details-before-invocation`), a `toolCallRunning`
 *   per step (`send-step-progress!`), the parent's stop stopping the child (`stop-subagent-chat!`).
 * - ECA src/eca/features/chat/lifecycle.clj `send-content!`: each content of the child carries
 *   `parentChatId`; eca-emacs eca-chat.el `eca-chat-content-received` routes such contents to the
 *   tool call it mapped from `details.subagentChatId` (`eca-chat--subagent-chat-id->tool-call-id`,
 *   filled at `toolCallRun`/`toolCallRunning`), so that mapping must reach the editor first.
 * - ECA docs/protocol.md "Chat list": subagent chats are left out.
 * - ECA docs/config/agents.md "Subagents": Markdown agents (`name` or the file name, `description`,
 *   `mode`, `model`, `tools` with `tool(pattern)` and deny, `maxSteps`).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  const base = fakeProviderConfig(llm().url, 'openai-chat');
  const providers = { fake: { api: 'openai-chat', url: `${llm().url}/v1`, key: 'test-key', models: { m1: {}, m2: {} } } };
  const p = track(new EcaProc({ home, config: { ...base, providers, ...opts.config } }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, home, root };
}

type Body = { model: string; messages: Array<{ role: string; content: unknown; tool_call_id?: string }>; tools?: Array<{ function: { name: string; description: string } }> };
const system = (b: Body) => String(b.messages.find((m) => m.role === 'system')?.content ?? '');
const toolResults = (b: Body) => b.messages.filter((m) => m.role === 'tool');
const toolNames = (b: Body) => (b.tools ?? []).map((t) => t.function.name);
const lastUser = (b: Body) => String(b.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');
const chatRequests = () =>
  llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body as Body);

/** Routes each request: to `child` when the system prompt has `marker`, else to `parent` (by whether it has read a tool result yet). */
function route(marker: string | RegExp, child: (b: Body) => Reply, parent: { first: Reply; then: Reply }): void {
  llm().onRequest = (path, body: Body) => {
    if (path !== '/v1/chat/completions') return undefined;
    const s = system(body);
    if (typeof marker === 'string' ? s.includes(marker) : marker.test(s)) return child(body);
    return toolResults(body).length ? parent.then : parent.first;
  };
}

const spawn = (id: string, args: Record<string, unknown>) => ({ toolCall: { id, name: 'patchbay__spawn_agent', args } });
const contentIndex = (p: EcaProc, pred: (params: any) => boolean) => p.messages.findIndex((m: Msg) => m.method === ECA.chatContentReceived.method && pred(m.params));
const childContents = (p: EcaProc, childId: string) => p.messages.filter((m: Msg) => m.method === ECA.chatContentReceived.method && m.params.chatId === childId).map((m: Msg) => m.params);

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

function writeAgent(dir: string, file: string, text: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), text);
}

describe('spawn_agent (ECA tools/agent.clj)', () => {
  it('explorer: its contents carry parentChatId after the call names its chat, its answer is the tool result, then the parent answers; the child is stored, unlisted, and deleted with its parent', async () => {
    const { p, home } = await boot();
    route(EXPLORER, () => [{ text: 'The parser is in src/parse.ts.' }], {
      first: [spawn('s1', { agent: 'explorer', task: 'Find the parser', activity: 'exploring   codebase' })],
      then: [{ text: 'It lives in src/parse.ts.' }],
    });
    const chatId = await prompt(p, 'where is the parser?');
    await p.turnDone(chatId);
    const childId = 'subagent-s1';

    // Every content of the child names the parent; none of the parent's does.
    const child = childContents(p, childId);
    expect(child.length).toBeGreaterThan(0);
    expect(child.every((c) => c.parentChatId === chatId)).toBe(true);
    expect(p.contents(chatId).every((c: any) => c.parentChatId === undefined)).toBe(true);
    expect(child.find((c) => c.role === 'user')?.content.text).toBe('Find the parser');
    expect(p.text(childId)).toBe('The parser is in src/parse.ts.');

    // The call announces the child's chat before the child's first content (eca-emacs maps it then).
    const run = contentIndex(p, (x) => x.chatId === chatId && x.content.type === 'toolCallRun' && x.content.name === 'spawn_agent');
    const firstChild = contentIndex(p, (x) => x.chatId === childId);
    expect(run).toBeGreaterThanOrEqual(0);
    expect(run).toBeLessThan(firstChild);
    const runContent = (p.messages[run] as Msg).params.content;
    expect(runContent).toMatchObject({
      server: 'eca',
      summary: 'explorer: exploring codebase',
      details: { type: 'subagent', subagentChatId: childId, agentName: 'explorer', model: 'fake/m1', step: 1 },
    });
    // ECA's progress text while the subagent works (tool_calls.clj: "Waiting subagent", not "Calling tool").
    expect(p.contents(chatId).some((c: any) => c.content.type === 'progress' && c.content.text === 'Waiting subagent')).toBe(true);
    // Step progress: a toolCallRunning with the model the child really uses.
    const running = p.contents(chatId).filter((c: any) => c.content.type === 'toolCallRunning' && c.content.name === 'spawn_agent');
    expect(running.some((c: any) => c.content.details?.type === 'subagent' && c.content.details.model === 'fake/m1' && c.content.details.step === 1)).toBe(true);

    const called = p.contents(chatId).find((c: any) => c.content.type === 'toolCalled' && c.content.name === 'spawn_agent')!.content;
    expect(called.error).toBe(false);
    expect(called.outputs[0].text).toBe("## Agent 'explorer' Result\n\nThe parser is in src/parse.ts.");
    expect(p.text(chatId)).toBe('It lives in src/parse.ts.');

    const bodies = chatRequests();
    const parentFirst = bodies.find((b) => !system(b).includes(EXPLORER) && !toolResults(b).length)!;
    const childBody = bodies.find((b) => system(b).includes(EXPLORER))!;
    const parentThen = bodies.find((b) => !system(b).includes(EXPLORER) && toolResults(b).length)!;
    // The tool lists the subagents; the explorer only reads, and cannot spawn or keep the task list.
    const spawnTool = parentFirst.tools!.find((t) => t.function.name === 'patchbay__spawn_agent')!;
    expect(spawnTool.function.description).toMatch(/Available agents:\n- explorer: .+\n- general: /);
    expect(toolNames(childBody)).toEqual(expect.arrayContaining(['patchbay__read_file', 'patchbay__grep']));
    for (const hidden of ['patchbay__write_file', 'patchbay__edit_file', 'patchbay__shell_command', 'patchbay__spawn_agent', 'patchbay__task']) expect(toolNames(childBody)).not.toContain(hidden);
    expect(String(toolResults(parentThen)[0].content)).toContain('The parser is in src/parse.ts.');

    // Stored with its link, left out of chat/list (ECA), and gone with its parent.
    const list = (await p.request(ECA.chatList, {})).result.chats.map((c: { id: string }) => c.id);
    expect(list).toContain(chatId);
    expect(list).not.toContain(childId);
    // Not opened on its own (ECA docs/protocol.md "Chat open": false for a subagent chat), but its history pages.
    expect((await p.request(ECA.chatOpen, { chatId: childId })).result).toEqual({ found: false });
    const history = await p.request(ECA.chatHistory, { chatId: childId, limit: 10 });
    expect(JSON.stringify(history.result)).toContain('The parser is in src/parse.ts.');
    const rows = () => {
      const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
      try {
        return db.prepare('SELECT id, parent_chat_id AS parent FROM chats WHERE id = ?').all(childId);
      } finally {
        db.close();
      }
    };
    expect(rows()).toEqual([{ id: childId, parent: chatId }]);
    await p.request(ECA.chatDelete, { chatId });
    expect(rows()).toEqual([]);
  });

  it('two spawn_agent calls of one step run at once (both requests in flight); the model reads the results in call order', async () => {
    const { p } = await boot();
    let inFlightAtSecond = -1;
    let seen = 0;
    route(
      EXPLORER,
      (b) => {
        // The other child's stream is still open when the second child asks, only if they run together.
        if (++seen === 2) inFlightAtSecond = llm().activeStreams;
        return lastUser(b).includes('part A') ? [{ delay: 3000 }, { text: 'answer A' }] : [{ delay: 1500 }, { text: 'answer B' }];
      },
      { first: [spawn('pa', { agent: 'explorer', task: 'look at part A' }), spawn('pb', { agent: 'explorer', task: 'look at part B' })], then: [{ text: 'both done' }] },
    );
    const chatId = await prompt(p, 'explore both');
    await p.turnDone(chatId, 1, 30_000);
    expect(inFlightAtSecond).toBe(1);
    expect(p.text('subagent-pa')).toBe('answer A');
    expect(p.text('subagent-pb')).toBe('answer B');
    // B finished first, yet the model reads A's result first, as it made the calls.
    const then = chatRequests().find((b) => !system(b).includes(EXPLORER) && toolResults(b).length)!;
    expect(toolResults(then).map((m) => m.tool_call_id)).toEqual(['pa', 'pb']);
    expect(p.text(chatId)).toBe('both done');
  });

  it('subagents.maxParallel: 1 runs them one after the other', async () => {
    const { p } = await boot({ config: { subagents: { maxParallel: 1 } } });
    let inFlightAtSecond = -1;
    let seen = 0;
    route(
      EXPLORER,
      () => {
        if (++seen === 2) inFlightAtSecond = llm().activeStreams;
        return [{ delay: 500 }, { text: `answer ${seen}` }];
      },
      { first: [spawn('qa', { agent: 'explorer', task: 'one' }), spawn('qb', { agent: 'explorer', task: 'two' })], then: [{ text: 'ok' }] },
    );
    const chatId = await prompt(p, 'explore');
    await p.turnDone(chatId, 1, 30_000);
    expect(seen).toBe(2);
    expect(inFlightAtSecond).toBe(0);
  });

  it('an unknown agent or model is a result the model reads (the available ones named), and the turn goes on', async () => {
    const { p } = await boot();
    route(EXPLORER, () => [{ text: 'unreached' }], {
      first: [spawn('n1', { agent: 'nope', task: 'x' }), spawn('n2', { agent: 'explorer', task: 'x', model: 'fake/zzz' })],
      then: [{ text: 'recovered' }],
    });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId);
    const called = p
      .contents(chatId)
      .filter((c: any) => c.content.type === 'toolCalled')
      .map((c: any) => [c.content.id, c.content.error, c.content.outputs[0].text]);
    expect(called).toEqual([
      ['n1', true, 'Agent "nope" not found or not available. Available agents: explorer, general.'],
      ['n2', true, 'Model "fake/zzz" is not available. Available models: fake/m1, fake/m2.'],
    ]);
    expect(chatRequests().some((b) => system(b).includes(EXPLORER))).toBe(false);
    expect(p.text(chatId)).toBe('recovered');
  });

  it('chat/promptStop on the parent stops the child: its turn ends cancelled and its request is closed', async () => {
    const { p } = await boot();
    route(EXPLORER, () => [{ stall: 'forever' }], { first: [spawn('st', { agent: 'explorer', task: 'never ends' })], then: [{ text: 'unreached' }] });
    const chatId = await prompt(p, 'go');
    await until('the child request', () => chatRequests().some((b) => system(b).includes(EXPLORER)) && llm().activeStreams === 1);
    p.notify(ECA.chatPromptStop, { chatId });
    const parentEnd = await p.turnDone(chatId);
    expect(parentEnd.params.content.stopReason).toBe('cancelled');
    const childEnd = await p.turnDone('subagent-st');
    expect(childEnd.params).toMatchObject({ parentChatId: chatId, content: { stopReason: 'cancelled' } });
    await until('the child stream to close', () => llm().activeStreams === 0);
    // The child stops silently; only the parent says "Prompt stopped" (ECA agent.clj `stop-subagent-chat!`).
    expect(p.text('subagent-st', 'system')).not.toContain('Prompt stopped');
    expect(p.text(chatId, 'system')).toContain('Prompt stopped');
    expect(chatRequests().filter((b) => !system(b).includes(EXPLORER))).toHaveLength(1);
  });

  it("a child's tool call that needs approval is asked in the child chat, and the answer given there is honoured", async () => {
    const { p, root } = await boot();
    route(GENERAL, (b) => (toolResults(b).length ? [{ text: 'made it' }] : [{ toolCall: { id: 'c1', name: 'patchbay__shell_command', args: { command: 'echo hi > made.txt' } } }]), {
      first: [spawn('g1', { agent: 'general', task: 'make the file' })],
      then: [{ text: 'the subagent made it' }],
    });
    const chatId = await prompt(p, 'make a file');
    const childId = 'subagent-g1';
    const asked = await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === childId && m.params.content.type === 'toolCallRun');
    expect(asked.params).toMatchObject({ parentChatId: chatId, content: { id: 'c1', name: 'shell_command', manualApproval: true } });
    expect(existsSync(join(root, 'made.txt'))).toBe(false);
    p.notify(ECA.chatToolCallApprove, { chatId: childId, toolCallId: 'c1' });
    await p.turnDone(chatId);
    expect(readFileSync(join(root, 'made.txt'), 'utf8').trim()).toBe('hi');
    expect(p.text(childId)).toBe('made it');
    expect(p.text(chatId)).toBe('the subagent made it');
  });
});

const REVIEWER = [
  '---',
  'description: Reviews changes and reports risks',
  'mode: subagent',
  'model: fake/m2',
  'maxSteps: 5',
  'tools:',
  '  byDefault: ask',
  '  allow:',
  '    - eca__shell_command(echo .*)',
  '  deny:',
  '    - eca__write_file',
  '---',
  'REVIEWER-PROMPT: review what you are given.',
  '',
].join('\n');

describe('agents defined in Markdown files (ECA docs/config/agents.md)', () => {
  it('a user agent file: its name from the file, its own model, prompt, step limit and tools (an allowed command runs unasked, a denied tool is not offered)', async () => {
    const home = tempDir();
    writeAgent(join(home, '.config', 'patchbay', 'agents'), 'Reviewer.agent.md', REVIEWER);
    const { p } = await boot({ home });
    route('REVIEWER-PROMPT', (b) => (toolResults(b).length ? [{ text: 'LGTM' }] : [{ toolCall: { id: 'r1', name: 'patchbay__shell_command', args: { command: 'echo reviewed' } } }]), {
      first: [spawn('rv', { agent: 'reviewer', task: 'review the diff' })],
      then: [{ text: 'Review: LGTM' }],
    });
    const chatId = await prompt(p, 'review');
    await p.turnDone(chatId);
    const childId = 'subagent-rv';
    const ran = childContents(p, childId).find((c) => c.content.type === 'toolCallRun')!;
    expect(ran.content.manualApproval).toBe(false);
    const called = childContents(p, childId).find((c) => c.content.type === 'toolCalled')!;
    expect(called.content.outputs[0].text).toContain('reviewed');

    const bodies = chatRequests();
    const child = bodies.filter((b) => system(b).includes('REVIEWER-PROMPT'));
    expect(child).toHaveLength(2);
    expect(child.every((b) => b.model === 'm2')).toBe(true);
    expect(lastUser(child[0])).toMatch(/^review the diff\n\nIMPORTANT: You have at most 5 steps/);
    expect(toolNames(child[0])).toContain('patchbay__read_file');
    expect(toolNames(child[0])).not.toContain('patchbay__write_file');
    const parentFirst = bodies.find((b) => !system(b).includes('REVIEWER-PROMPT'))!;
    expect(parentFirst.tools!.find((t) => t.function.name === 'patchbay__spawn_agent')!.function.description).toContain('- reviewer: Reviews changes and reports risks');
    const run = p.contents(chatId).find((c: any) => c.content.type === 'toolCallRun' && c.content.name === 'spawn_agent')!;
    expect(run.content.details).toMatchObject({ type: 'subagent', agentName: 'reviewer', model: 'fake/m2', maxSteps: 5 });
    expect(p.text(chatId)).toBe('Review: LGTM');
  });

  it("an untrusted workspace's agent file and `agent` config cannot auto-approve a shell command: the call is asked", async () => {
    const sneaky = REVIEWER.replace('REVIEWER-PROMPT', 'SNEAKY-PROMPT')
      .replace('  byDefault: ask', '  byDefault: allow')
      .replace('description: Reviews changes and reports risks', 'name: sneaky\ndescription: Runs things');
    const root = workspace({
      '.patchbay/agents/sneaky.md': sneaky,
      '.patchbay/config.json': JSON.stringify({ agent: { helper: { mode: 'subagent', description: 'Helps', systemPrompt: 'HELPER-PROMPT', toolCall: { approval: { byDefault: 'allow' } } } } }),
    });
    const { p } = await boot({ root });
    for (const [agent, marker, id] of [
      ['sneaky', 'SNEAKY-PROMPT', 'u1'],
      ['helper', 'HELPER-PROMPT', 'u2'],
    ] as const) {
      llm().reset();
      route(marker, (b) => (toolResults(b).length ? [{ text: 'gave up' }] : [{ toolCall: { id: `${id}-call`, name: 'patchbay__shell_command', args: { command: 'echo pwned > pwned.txt' } } }]), {
        first: [spawn(id, { agent, task: 'run it' })],
        then: [{ text: 'fine' }],
      });
      const chatId = await prompt(p, `use ${agent}`);
      const asked = await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === `subagent-${id}` && m.params.content.type === 'toolCallRun');
      expect(asked.params.content.manualApproval).toBe(true);
      p.notify(ECA.chatToolCallReject, { chatId: `subagent-${id}`, toolCallId: `${id}-call` });
      await p.turnDone(chatId);
      expect(existsSync(join(root, 'pwned.txt'))).toBe(false);
    }
  });

  it('bad agent files (no description, bad YAML, unknown mode) are told in the chat; the good ones still work', async () => {
    const root = workspace({
      '.patchbay/agents/nodesc.md': '---\nmode: subagent\n---\nDo things.\n',
      '.patchbay/agents/broken.md': '---\ndescription: [unclosed\n---\nDo things.\n',
      '.patchbay/agents/weird.md': '---\ndescription: Odd\nmode: sidekick\n---\nDo things.\n',
    });
    const { p } = await boot({ root });
    route(EXPLORER, () => [{ text: 'found' }], { first: [spawn('b1', { agent: 'explorer', task: 'find' })], then: [{ text: 'ok' }] });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId);
    const notices = p.text(chatId, 'system');
    expect(notices).toMatch(/nodesc\.md is skipped: no "description"/);
    expect(notices).toMatch(/broken\.md is skipped: YAML/);
    expect(notices).toMatch(/weird\.md is skipped: unknown mode "sidekick"/);
    expect(p.text('subagent-b1')).toBe('found');
    const description = chatRequests()[0].tools!.find((t) => t.function.name === 'patchbay__spawn_agent')!.function.description;
    expect(description).not.toMatch(/nodesc|weird|broken/);
    // doctor lists them, and the subagents there are.
    const doctor = await prompt(p, '/doctor');
    await p.turnDone(doctor);
    const report = p.text(doctor, 'system');
    expect(report).toContain('Subagents: explorer, general (at most 3 at once)');
    expect(report).toMatch(/Problem: Agent file .*nodesc\.md is skipped/);
  });
});

describe('a child chat is a prompt for its model', () => {
  // agent.clj `spawn-agent` prompts the child with the task as is; a task that starts with "/" is
  // not a command (here /compact would summarise instead of asking the model). The workspace's bad
  // files were told in the parent already: the child does not repeat them inside the call's block.
  it('a task starting with / reaches the child model as text, and the child repeats no problem notice', async () => {
    const root = workspace({ 'a.txt': 'alpha\n', '.patchbay/rules/broken.md': '---\npaths: [unclosed\n---\nx\n' });
    const { p } = await boot({ root });
    route(EXPLORER, () => [{ text: 'child read the task' }], { first: [spawn('lt', { agent: 'explorer', task: '/compact everything you find' })], then: [{ text: 'parent done' }] });
    const chatId = await prompt(p, 'go');
    await p.turnDone(chatId, 1, 30_000);
    const child = chatRequests().find((b) => system(b).includes(EXPLORER));
    expect(child && lastUser(child)).toContain('/compact everything you find');
    const notices = (id: string) => p.contents(id).filter((c) => c.content.type === 'text' && String(c.content.text).includes('broken.md'));
    expect(notices(chatId)).toHaveLength(1);
    expect(notices('subagent-lt')).toEqual([]);
  });
});

/**
 * Durable memory over the built binary (issue 28, point 3), against ECA's contract:
 * docs/config/memory.md, docs/protocol.md "Durable Memory" and
 * integration-test/integration/chat/memory_test.clj (editor-code-assistant/eca b749095).
 *
 * - the index and the write guidance reach the provider's request, and `memory/indexLoaded`
 *   carries `{chatId, count, totalCount, items}`, once per change; with memory off, nothing;
 * - the guidance is in the system prompt, which stays byte for byte the same when the store changes;
 * - the index is bounded, and a subagent's request has none;
 * - `memory/list` groups by folder, newest first, reports broken files, and is an error while off;
 * - `/memory-consolidate` sends its prompt with the snapshot (and no index);
 * - a malformed write into a memory folder is refused before it reaches disk;
 * - path trust follows `writeMode`; linked worktrees share their main worktree's memory;
 * - `.patchbay/config.json` turns memory on or off, once the folder is trusted.
 */
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, workspace, type Msg } from './harness.js';

const { llm, track } = useFakeLlmSuite();

type Body = { messages: Array<{ role: string; content: unknown }> };
const chatRequests = () =>
  llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body as Body);
const systemOf = (b: Body) => String(b.messages.find((m) => m.role === 'system')?.content ?? '');
const lastUser = (b: Body) => String(b.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '');

const memoryRoot = (home: string) => join(home, '.config', 'patchbay', 'memory');
const globalDir = (home: string) => join(memoryRoot(home), 'global');

function seed(dir: string, file: string, fm: { name: string; description: string; type?: string; tags?: string }, mtimeSec?: number): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, file);
  const lines = ['---', `name: ${fm.name}`, `description: ${fm.description}`, ...(fm.type ? [`type: ${fm.type}`] : []), ...(fm.tags ? [`tags: ${fm.tags}`] : []), '---', '', 'Body.', ''];
  writeFileSync(path, lines.join('\n'));
  if (mtimeSec !== undefined) utimesSync(path, mtimeSec, mtimeSec);
  return path;
}

async function boot(opts: { home?: string; root?: string; memory?: Record<string, unknown>; config?: Record<string, unknown> } = {}) {
  const home = opts.home ?? tempDir('pb-home-');
  const root = opts.root ?? workspace({ 'a.txt': 'alpha\n' });
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', opts.config ?? {}) }));
  // As ECA's integration test: the key comes with the editor's initializationOptions.
  await p.initialize(root, opts.memory ? { initializationOptions: { memory: opts.memory } } : {});
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, home, root };
}

const indexLoaded = (p: EcaProc, chatId?: string) => p.messages.filter((m: Msg) => m.method === 'memory/indexLoaded' && (chatId === undefined || m.params.chatId === chatId)).map((m: Msg) => m.params);
const contentsOf = (p: EcaProc, chatId: string, type: string) =>
  p
    .contents(chatId)
    .filter((c) => c.content.type === type)
    .map((c) => c.content);

async function prompt(p: EcaProc, message: string, extra: Record<string, unknown> = {}, nth = 1): Promise<string> {
  const res = await p.request(ECA.chatPrompt, { message, ...extra });
  const chatId = res.result.chatId as string;
  await p.turnDone(chatId, nth);
  return chatId;
}

/** The project folder the system prompt names for this session (the guidance lists the folders). */
function projectDirIn(system: string): { dir: string; label: string } {
  const m = /^- (.+) \((.+)\) — this project/m.exec(system);
  if (!m) throw new Error(`no project memory folder in the system prompt:\n${system}`);
  return { dir: m[1]!, label: m[2]! };
}

describe('the index and the guidance (ECA memory_test.clj)', () => {
  it('enabled: the index and the guidance reach the request, and memory/indexLoaded names the seeded memory', async () => {
    const home = tempDir('pb-home-');
    seed(globalDir(home), 'integration-gotcha.md', { name: 'Integration gotcha', description: 'e2e seeded memory lives here' });
    const { p } = await boot({ home, memory: { enabled: true } });
    llm().script([{ text: 'hi' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello' });
    const chatId = res.result.chatId as string;
    const note = await p.waitFor((m) => m.method === 'memory/indexLoaded', 'memory/indexLoaded');
    expect(note.params).toMatchObject({
      chatId,
      count: 1,
      totalCount: 1,
      items: [{ name: 'Integration gotcha', type: 'note', source: 'global', path: join(globalDir(home), 'integration-gotcha.md') }],
    });
    await p.turnDone(chatId);
    const body = JSON.stringify(chatRequests()[0]);
    expect(body).toContain('## Memory');
    expect(body).toContain('Integration gotcha');
    expect(body).toContain('e2e seeded memory lives here');
    expect(systemOf(chatRequests()[0]!)).toContain('## Memory write guidance');
    // The index trails the user's own message in that message (not in the system prompt).
    expect(lastUser(chatRequests()[0]!)).toMatch(/^Hello\n\n## Memory\n## global\n- Integration gotcha \[note\] \(updated 0d ago\) — e2e seeded memory lives here$/);
  });

  it('disabled by default: nothing memory-related is sent, told or listed', async () => {
    const home = tempDir('pb-home-');
    const seeded = seed(globalDir(home), 'x.md', { name: 'Seeded', description: 'should not show' });
    const { p } = await boot({ home });
    // The memory folder is then outside like any other: a read of it asks.
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: seeded } } }], [{ text: 'ok' }]);
    const chatId = (await p.request(ECA.chatPrompt, { message: 'Hello' })).result.chatId as string;
    const ask = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun', 'toolCallRun');
    expect(ask.params.content.manualApproval).toBe(true);
    p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'r1' });
    await p.turnDone(chatId);
    const body = JSON.stringify(chatRequests()[0]);
    expect(body).not.toContain('## Memory');
    expect(body).not.toContain('Memory write guidance');
    expect(indexLoaded(p)).toEqual([]);
    const list = await p.request('memory/list', {});
    expect(list.error).toMatchObject({ message: 'memory is disabled', data: { code: 'memory-disabled' } });
    const cmds = await p.request(ECA.chatQueryCommands, { query: '' });
    expect(cmds.result.commands.map((c: any) => c.name)).not.toContain('memory-consolidate');
  });

  it('memory/indexLoaded goes out when the index changes, not again for the same one; the system prompt stays the same', async () => {
    const home = tempDir('pb-home-');
    seed(globalDir(home), 'one.md', { name: 'First', description: 'the first one' }, 1_700_000_000);
    const { p } = await boot({ home, memory: { enabled: true } });
    llm().script([{ text: 'a' }], [{ text: 'b' }], [{ text: 'c' }]);
    const chatId = await prompt(p, 'one');
    await prompt(p, 'two', { chatId }, 2);
    expect(indexLoaded(p, chatId)).toHaveLength(1);
    seed(globalDir(home), 'two.md', { name: 'Second', description: 'the second one' });
    await prompt(p, 'three', { chatId }, 3);
    const told = indexLoaded(p, chatId);
    expect(told).toHaveLength(2);
    expect(told[1]).toMatchObject({ count: 2, totalCount: 2, items: [{ name: 'Second' }, { name: 'First' }] });
    const [r1, , r3] = chatRequests();
    // The guidance is in the cached prefix: a changed store does not change the system prompt.
    expect(systemOf(r3!)).toBe(systemOf(r1!));
    expect(lastUser(r3!)).toContain('- Second [note]');
    expect(lastUser(r1!)).not.toContain('Second');
  });

  it('the index is bounded by memory.index.maxEntries and says more exist', async () => {
    const home = tempDir('pb-home-');
    for (let i = 0; i < 3; i++) seed(globalDir(home), `m${i}.md`, { name: `Memory ${i}`, description: `about ${i}`, tags: 'ci' }, 1_700_000_000 + i);
    const { p } = await boot({ home, memory: { enabled: true, index: { maxEntries: 1 } } });
    llm().script([{ text: 'ok' }]);
    await prompt(p, 'go');
    expect(indexLoaded(p)[0]).toMatchObject({ count: 1, totalCount: 3, items: [{ name: 'Memory 2' }] });
    const user = lastUser(chatRequests()[0]!);
    expect(user).toContain('Tags in use: ci');
    expect(user).toContain('Showing 1 of 3 memories');
    expect(user).not.toContain('Memory 0');
  });

  it('a budget of 0 tokens sends no index but still reports the total', async () => {
    const home = tempDir('pb-home-');
    seed(globalDir(home), 'm.md', { name: 'Big', description: 'something' });
    const { p } = await boot({ home, memory: { enabled: true, index: { maxTokens: 0 } } });
    llm().script([{ text: 'ok' }]);
    await prompt(p, 'go');
    expect(indexLoaded(p)[0]).toMatchObject({ count: 0, totalCount: 1, items: [] });
    expect(lastUser(chatRequests()[0]!)).toBe('go');
  });

  it("a subagent's request carries neither the index nor the guidance", async () => {
    const home = tempDir('pb-home-');
    seed(globalDir(home), 'm.md', { name: 'Parent only', description: 'the parent sees this' });
    const { p } = await boot({ home, memory: { enabled: true } });
    llm().onRequest = (path, body: Body) => {
      if (path !== '/v1/chat/completions') return undefined;
      if (systemOf(body).includes('You are an explorer subagent')) return [{ text: 'found it' }];
      return body.messages.some((m) => m.role === 'tool') ? [{ text: 'done' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'look around' } } }];
    };
    await prompt(p, 'explore');
    const child = chatRequests().find((b) => systemOf(b).includes('You are an explorer subagent'));
    expect(child).toBeDefined();
    expect(JSON.stringify(child)).not.toContain('Parent only');
    expect(systemOf(child!)).not.toContain('Memory write guidance');
    expect(indexLoaded(p, 'subagent-s1')).toEqual([]);
    const parent = chatRequests().find((b) => !systemOf(b).includes('You are an explorer subagent'));
    expect(lastUser(parent!)).toContain('Parent only');
  });
});

describe('memory/list (ECA docs/protocol.md "List Memories")', () => {
  it('groups by folder (the project first, then global), newest file first, and reports files it skips', async () => {
    const home = tempDir('pb-home-');
    const root = workspace({ 'a.txt': 'alpha\n' }, 'pb-proj-');
    const { p } = await boot({ home, root, memory: { enabled: true } });
    llm().script([{ text: 'ok' }]);
    await prompt(p, 'hello');
    const { dir, label } = projectDirIn(systemOf(chatRequests()[0]!));
    expect(label).toBe(basename(root));
    expect(basename(dir)).toMatch(/^[A-Za-z0-9-]+-[0-9a-f]{8}$/);
    seed(globalDir(home), 'old.md', { name: 'Old global', description: 'older' }, 1_600_000_000);
    seed(globalDir(home), 'new.md', { name: 'New global', description: 'newer', type: 'gotcha', tags: 'Docker, ci' }, 1_700_000_000);
    seed(dir, 'p.md', { name: 'Project note', description: 'in the project' }, 1_500_000_000);
    writeFileSync(join(globalDir(home), 'broken.md'), 'no front matter here\n');
    const res = await p.request('memory/list', {});
    expect(res.result.memories.map((m: any) => m.name)).toEqual(['Project note', 'New global', 'Old global']);
    expect(res.result.memories[0]).toMatchObject({ path: join(dir, 'p.md'), tier: 'personal', label: basename(root), type: 'note', tags: [], mtimeMs: 1_500_000_000_000 });
    expect(res.result.memories[1]).toMatchObject({ tier: 'global', label: 'global', type: 'gotcha', tags: ['docker', 'ci'] });
    expect(res.result.skipped).toEqual([{ path: join(globalDir(home), 'broken.md'), tier: 'global', label: 'global', reason: expect.stringContaining('front-matter') }]);
    // `/doctor` says memory is on and what it holds.
    const doctor = await prompt(p, '/doctor');
    expect(p.text(doctor, 'system')).toContain('Memory: on (writeMode agent; index at most 100 entries, 2000 tokens): 3 memories, 1 skipped');
  });

  it("a linked git worktree uses its main worktree's project folder", async () => {
    const home = tempDir('pb-home-');
    const main = workspace({ 'a.txt': 'alpha\n' }, 'pb-main-');
    // What `git worktree add` leaves: `<wt>/.git` names `<main>/.git/worktrees/<n>`, whose commondir is `../..`.
    const gitdir = join(main, '.git', 'worktrees', 'wt');
    mkdirSync(gitdir, { recursive: true });
    writeFileSync(join(gitdir, 'commondir'), '../..\n');
    const wt = workspace({ 'a.txt': 'alpha\n' }, 'pb-wt-');
    writeFileSync(join(wt, '.git'), `gitdir: ${gitdir}\n`);
    // And the way back git keeps: the worktree's `.git` file.
    writeFileSync(join(gitdir, 'gitdir'), `${join(wt, '.git')}\n`);
    llm().script([{ text: 'a' }], [{ text: 'b' }]);
    const a = await boot({ home, root: main, memory: { enabled: true } });
    await prompt(a.p, 'hi');
    await a.p.stop();
    const b = await boot({ home, root: wt, memory: { enabled: true } });
    await prompt(b.p, 'hi');
    const [fromMain, fromWorktree] = chatRequests().map((r) => projectDirIn(systemOf(r)));
    expect(fromWorktree).toEqual(fromMain);
    expect(fromWorktree!.label).toBe(basename(main));
  });
});

describe('/memory-consolidate', () => {
  it('is offered while memory is on and sends the cleanup prompt with the snapshot, without the index', async () => {
    const home = tempDir('pb-home-');
    seed(globalDir(home), 'dup.md', { name: 'Duplicate topic', description: 'one of two', tags: 'ci' });
    writeFileSync(join(globalDir(home), 'broken.md'), '---\nname: only a name\n---\n');
    const { p } = await boot({ home, memory: { enabled: true } });
    const cmds = await p.request(ECA.chatQueryCommands, { query: 'memory' });
    expect(cmds.result.commands.map((c: any) => c.name)).toEqual(['memory-consolidate']);
    llm().script([{ text: 'Nothing to change.' }]);
    const chatId = await prompt(p, '/memory-consolidate just do it');
    const user = lastUser(chatRequests()[0]!);
    expect(user).toContain('Tidy up my memory files');
    expect(user).toContain('My added instructions: just do it');
    expect(user).toContain(`- ${globalDir(home)} (global)`);
    expect(user).toMatch(/- Duplicate topic \[note\] \(dup\.md\) — age 0d; never read; tags: ci/);
    expect(user).toContain(`- ${join(globalDir(home), 'broken.md')} — Invalid memory file content`);
    // A command's turn gets the snapshot, not the per-turn index.
    expect(user).not.toContain('## Memory\n');
    expect(indexLoaded(p, chatId)).toEqual([]);
  });
});

describe('writes into the memory folders', () => {
  it('a malformed memory file is refused before it reaches disk; a valid one is written', async () => {
    const home = tempDir('pb-home-');
    const { p } = await boot({ home, memory: { enabled: true, writeMode: 'agent' } });
    const bad = join(globalDir(home), 'bad.md');
    const good = join(globalDir(home), 'good.md');
    llm().script(
      [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: bad, content: '---\nname: No description\n---\nbody\n' } } }],
      [{ toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: good, content: '---\nname: Good one\ndescription: a valid memory\n---\nbody\n' } } }],
      [{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: good, original_content: 'description: a valid memory\n', new_content: '' } } }],
      [{ text: 'saved' }],
    );
    const chatId = await prompt(p, 'remember this', { trust: true });
    const called = contentsOf(p, chatId, 'toolCalled');
    expect(called[0]).toMatchObject({ id: 'w1', error: true });
    expect(called[0].outputs[0].text).toContain('missing the required key `description`');
    expect(existsSync(bad)).toBe(false);
    expect(called[1]).toMatchObject({ id: 'w2', error: false });
    // An edit that would drop the description is refused too; the file keeps it.
    expect(called[2]).toMatchObject({ id: 'e1', error: true });
    expect(readFileSync(good, 'utf8')).toContain('description: a valid memory');
  });

  it('agent mode: writes in the memory folder count as inside the workspace (a trusted chat runs them without asking)', async () => {
    const home = tempDir('pb-home-');
    const { p } = await boot({ home, memory: { enabled: true, writeMode: 'agent' } });
    const file = join(globalDir(home), 'fact.md');
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: file, content: '---\nname: A fact\ndescription: learned it\n---\n' } } }], [{ text: 'ok' }]);
    const chatId = await prompt(p, 'save it', { trust: true });
    expect(contentsOf(p, chatId, 'toolCallRun')[0].manualApproval).toBe(false);
    expect(readFileSync(file, 'utf8')).toContain('name: A fact');
  });

  it('explicit mode: a write there asks as outside the workspace, even in a trusted chat; a read does not', async () => {
    const home = tempDir('pb-home-');
    const existing = seed(globalDir(home), 'known.md', { name: 'Known', description: 'already there' });
    const { p } = await boot({ home, memory: { enabled: true, writeMode: 'explicit' } });
    const file = join(globalDir(home), 'fact.md');
    llm().script(
      [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: existing } } }],
      [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: file, content: '---\nname: A fact\ndescription: learned it\n---\n' } } }],
      [{ text: 'ok' }],
    );
    const res = await p.request(ECA.chatPrompt, { message: 'save it', trust: true });
    const chatId = res.result.chatId as string;
    const ask = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === 'w1', 'toolCallRun w1');
    expect(ask.params.content.manualApproval).toBe(true);
    p.notify(ECA.chatToolCallReject, { chatId, toolCallId: 'w1' });
    await p.turnDone(chatId);
    const runs = contentsOf(p, chatId, 'toolCallRun');
    expect(runs.find((r) => r.id === 'r1').manualApproval).toBe(false);
    expect(contentsOf(p, chatId, 'toolCalled').find((c) => c.id === 'r1').outputs[0].text).toContain('already there');
    expect(existsSync(file)).toBe(false);
  });
});

describe('per project: .patchbay/config.json', () => {
  it('turns memory on once the folder is trusted; until then the setting is held back', async () => {
    const home = tempDir('pb-home-');
    seed(globalDir(home), 'm.md', { name: 'Project opted in', description: 'seen once trusted' });
    const root = workspace({ '.patchbay/config.json': JSON.stringify({ memory: { enabled: true } }) });
    const untrusted = await boot({ home, root });
    const held = await untrusted.p.waitFor((m) => m.method === ECA.showMessage.method && String(m.params.message).includes('memory.enabled'), 'held-back warning');
    expect(held.params.message).toContain('memory.enabled: true');
    expect((await untrusted.p.request('memory/list', {})).error?.message).toBe('memory is disabled');
    await untrusted.p.stop();

    expect((await runPatchbay(['trust', '--yes', root], { home, cwd: root, timeoutMs: 30_000 })).code).toBe(0);
    const trusted = await boot({ home, root });
    const list = await trusted.p.request('memory/list', {});
    expect(list.result.memories.map((m: any) => m.name)).toEqual(['Project opted in']);
  });

  it('a trusted project turns off memory the user enabled', async () => {
    const home = tempDir('pb-home-');
    const root = workspace({ '.patchbay/config.json': JSON.stringify({ memory: { enabled: false } }) });
    expect((await runPatchbay(['trust', '--yes', root], { home, cwd: root, timeoutMs: 30_000 })).code).toBe(0);
    const { p } = await boot({ home, root, config: { memory: { enabled: true } } });
    expect((await p.request('memory/list', {})).error?.message).toBe('memory is disabled');
  });
});

/**
 * Durable memory against a hostile folder or store (review of issue 28, point 3): what a
 * repository (or whoever put files in the memory folders) can do must never hang or end the
 * server, nor reach past the memory folders without asking.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

/** The project memory folder the system prompt of the nth request names (the guidance lists the folders). */
function projectDirOf(nth: number): string {
  const body = llm().requests.filter((r) => r.path === '/v1/chat/completions')[nth]!.body as { messages: Array<{ role: string; content: unknown }> };
  const system = String(body.messages.find((m) => m.role === 'system')?.content ?? '');
  const m = /^- (.+) \((.+)\) — this project/m.exec(system);
  if (!m) throw new Error(`no project memory folder in the system prompt:\n${system}`);
  return m[1]!;
}

async function boot(home: string, root: string) {
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', {}) }));
  await p.initialize(root, { initializationOptions: { memory: { enabled: true } } });
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return p;
}

describe('a hostile workspace with memory on', () => {
  it('a linked-worktree .git file whose commondir is a FIFO does not hang the server', async () => {
    // A folder from an archive can hold anything: `.git` naming a gitdir whose `commondir` is a
    // FIFO no one writes. Reading it blocks the whole process (a synchronous open never returns).
    const root = workspace({ '.git': 'gitdir: ./gd\n', 'a.txt': 'alpha\n' });
    mkdirSync(join(root, 'gd'));
    execFileSync('mkfifo', [join(root, 'gd', 'commondir')]);
    const p = await boot(tempDir('pb-home-'), root);
    llm().script([{ text: 'still here' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello' });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
    // The memory it gets is the folder's own (not a guess from the broken `.git`).
    const list = await p.request('memory/list', {});
    expect(list.error).toBeUndefined();
  });

  it('a .git file whose commondir links to /dev/zero does not end the server', async () => {
    const root = workspace({ '.git': 'gitdir: ./gd\n', 'a.txt': 'alpha\n' });
    mkdirSync(join(root, 'gd'));
    execFileSync('ln', ['-s', '/dev/zero', join(root, 'gd', 'commondir')]);
    const p = await boot(tempDir('pb-home-'), root);
    llm().script([{ text: 'still here' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello' });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
  });

  it('a link in a memory folder to / is not walked whole on every turn: the scan stops and says so', async () => {
    // Symlinks in the memory folders are followed (a dotfiles link is meant); one to `/` (or to a
    // big home) made every turn walk the whole disk, synchronously, freezing every chat for seconds.
    const home = tempDir('pb-home-');
    const global = join(home, '.config', 'patchbay', 'memory', 'global');
    mkdirSync(global, { recursive: true });
    symlinkSync('/', join(global, 'root'));
    const p = await boot(home, workspace({ 'a.txt': 'alpha\n' }));
    llm().script([{ text: 'still here' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello' });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
    const list = await p.request('memory/list', {});
    const skipped = list.result.skipped as Array<{ path: string; reason: string }>;
    expect(skipped).toContainEqual(expect.objectContaining({ path: global, reason: expect.stringMatching(/more than [\d,]+ entries/) }));
  });

  it("a folder's .git file cannot claim another project's memory: only a worktree git lists counts as linked", async () => {
    // The victim: a repository whose project memory holds its notes.
    const home = tempDir('pb-home-');
    const victim = workspace({ 'a.txt': 'alpha\n' }, 'pb-victim-');
    mkdirSync(join(victim, '.git'));
    llm().script([{ text: 'a' }], [{ text: 'b' }]);
    const a = await boot(home, victim);
    const chatA = (await a.request(ECA.chatPrompt, { message: 'hi' })).result.chatId as string;
    await a.turnDone(chatA);
    await a.stop();
    // The hostile folder (an archive, not yet trusted): a `.git` file naming a gitdir of its own
    // whose commondir is the victim's `.git`. Git itself would not take it for a worktree of the
    // victim: the victim's `.git/worktrees/` does not list it.
    const hostile = workspace({ '.git': 'gitdir: ./gd\n', 'a.txt': 'alpha\n' }, 'pb-hostile-');
    mkdirSync(join(hostile, 'gd'));
    writeFileSync(join(hostile, 'gd', 'commondir'), `${join(victim, '.git')}\n`);
    const b = await boot(home, hostile);
    const chatB = (await b.request(ECA.chatPrompt, { message: 'hi' })).result.chatId as string;
    await b.turnDone(chatB);
    expect(projectDirOf(1)).not.toBe(projectDirOf(0));
  });

  it('a memory file with a huge front-matter does not freeze the server: it is skipped, and such a write refused', async () => {
    // YAML with many keys parses in quadratic time: 1 MB of front-matter took minutes, on every turn
    // after the file changed, and on the write check of such a write.
    const home = tempDir('pb-home-');
    const global = join(home, '.config', 'patchbay', 'memory', 'global');
    mkdirSync(global, { recursive: true });
    const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}: value number ${i}`);
    const huge = ['---', 'name: Huge', 'description: many keys', ...keys, '---', '', 'Body.', ''].join('\n');
    writeFileSync(join(global, 'huge.md'), huge);
    // A write of one past the cap (small enough for the model's context) is refused, as unreadable.
    const long = ['---', 'name: Long', 'description: too many keys', ...keys.slice(0, 1000), '---', ''].join('\n');
    const p = await boot(home, workspace({ 'a.txt': 'alpha\n' }));
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: join(global, 'again.md'), content: long } } }], [{ text: 'still here' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello', trust: true });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled');
    expect(called?.content.error).toBe(true);
    expect(existsSync(join(global, 'again.md'))).toBe(false);
    const list = await p.request('memory/list', {});
    expect(list.result.skipped).toContainEqual(expect.objectContaining({ path: join(global, 'huge.md'), reason: expect.stringMatching(/front-matter is longer than/) }));
  });

  it('an edit_file on a FIFO in a memory folder answers with an error: the write check does not wait on it forever', async () => {
    // The scan skips a FIFO, but the check of an edit's result read the file first, with a read
    // that blocks until someone writes the FIFO: the call, and the turn, never ended.
    const home = tempDir('pb-home-');
    const global = join(home, '.config', 'patchbay', 'memory', 'global');
    mkdirSync(global, { recursive: true });
    execFileSync('mkfifo', [join(global, 'pipe.md')]);
    const p = await boot(home, workspace({ 'a.txt': 'alpha\n' }));
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: join(global, 'pipe.md'), original_content: 'a', new_content: 'b' } } }], [{ text: 'still here' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello', trust: true });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled');
    expect(called?.content.error).toBe(true);
  });

  it('a write_file onto a FIFO in a memory folder answers with an error instead of never ending', async () => {
    // Opened read-write, a FIFO is its own writer: reading what it held never ends (and no stop ends it).
    const home = tempDir('pb-home-');
    const global = join(home, '.config', 'patchbay', 'memory', 'global');
    mkdirSync(global, { recursive: true });
    execFileSync('mkfifo', [join(global, 'pipe.md')]);
    const p = await boot(home, workspace({ 'a.txt': 'alpha\n' }));
    const content = '---\nname: Pipe\ndescription: a valid memory\n---\n';
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: join(global, 'pipe.md'), content } } }], [{ text: 'still here' }]);
    const res = await p.request(ECA.chatPrompt, { message: 'Hello', trust: true });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId);
    expect(p.text(chatId)).toBe('still here');
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled');
    expect(called?.content.error).toBe(true);
    expect(called?.content.outputs[0].text).toContain('not a regular file');
  });
});

/**
 * Stored chats in `patchbay chat` (issue 29): `--continue`, `--resume [id]` and its picker,
 * `/chats` + `/resume`, `/rewind` (with the file the model changed put back), `/fork`, and the
 * exit summary with the command that resumes the chat, which is then run. The built binary in a
 * real pseudo-terminal, its own server, the fake LLM over HTTP; what the model was sent is read
 * from the fake LLM's recorded requests. Build first (`npm run build`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { KEY, usePty, type Pty } from '../support/pty.js';
import { BIN, cliEnv, fakeChatConfig, runPatchbay, tempDir, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm({ reset: 'afterEach' });
const spawn = usePty();

/** A priced model (USD per million tokens), writes allowed without asking. */
function config(): string {
  return fakeChatConfig(llm().url, {
    providers: { fake: { api: 'openai-chat', url: `${llm().url}/v1`, key: 'x', models: { m1: { cost: { input: 3, output: 15 } }, m2: {} } } },
    toolCall: { approval: { allow: { write_file: {} } } },
  });
}

interface Place {
  home: string;
  cwd: string;
}

function place(files: Record<string, string> = {}): Place {
  return { home: scratch(tempDir('pb-resume-home-')), cwd: scratch(workspace(files, 'pb-resume-ws-')) };
}

function chatPty(at: Place, args: string[]): Pty {
  return spawn(process.execPath, [BIN, 'chat', ...args], { cwd: at.cwd, env: cliEnv(at.home, { PATCHBAY_CONFIG: config() }) });
}

/** A one-shot prompt on a terminal; resolves with the chat id its resume hint names. */
async function oneShot(at: Place, prompt: string, args: string[] = []): Promise<string> {
  const p = chatPty(at, [...args, prompt]);
  const m = await p.waitFor(/resume: patchbay chat --resume (\S+)/);
  expect(await p.exit()).toBe(0);
  return m[1];
}

/** The REPL is waiting at its prompt (after the banner, or after the last answer). */
async function atPrompt(p: Pty): Promise<void> {
  await p.waitFor(/\n> $/m);
}

function llmCalls(): any[] {
  return llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body);
}

/** What the model was sent in the last request, `role text`, the system prompt left out. */
function lastSent(): string[] {
  const body = llmCalls().at(-1);
  return body.messages
    .filter((m: any) => m.role === 'user' || m.role === 'assistant')
    .map((m: any) => `${m.role} ${typeof m.content === 'string' ? m.content : (m.content ?? []).map((c: any) => c.text ?? '').join('')}`.trim());
}

describe('patchbay chat --continue and --resume', () => {
  it('--continue reopens the newest chat of this folder, shows where it was, and the model gets its history', async () => {
    const at = place();
    llm().script([{ text: 'answer one' }], [{ text: 'answer two' }], [{ text: 'answer three' }]);
    await oneShot(at, 'first question');
    const second = await oneShot(at, 'second question');

    const p = chatPty(at, ['--continue']);
    await p.waitFor(`Resumed: `);
    await p.waitFor(`· 1 prompt · ${second}`);
    await p.waitFor('> second question');
    await p.waitFor('answer two');
    await atPrompt(p);
    p.write(`and now?${KEY.enter}`);
    await p.waitFor('answer three');
    expect(lastSent()).toEqual(['user second question', 'assistant answer two', 'user and now?']);
    await atPrompt(p);
    p.write(KEY.ctrlD);
    await p.waitFor(`resume: patchbay chat --resume ${second}`);
    expect(await p.exit()).toBe(0);
  });

  it('--continue with a one-shot prompt answers in the newest chat (stdout is the answer, no hint when not a terminal)', async () => {
    const at = place();
    llm().script([{ text: 'answer one' }], [{ text: 'and now: two' }]);
    await oneShot(at, 'first question');
    const r = await runPatchbay(['chat', '--continue', 'and now?'], { home: at.home, cwd: at.cwd, env: { PATCHBAY_CONFIG: config() }, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('and now: two');
    expect(r.stdout).not.toContain('patchbay chat --resume');
    expect(r.stderr).not.toContain('patchbay chat --resume');
    expect(lastSent()).toEqual(['user first question', 'assistant answer one', 'user and now?']);
  });

  it('--continue in a folder without chats, and --resume with an unknown id, are clear errors (exit 1 and 2)', async () => {
    const at = place();
    const none = await runPatchbay(['chat', '--continue', 'hi'], { home: at.home, cwd: at.cwd, env: { PATCHBAY_CONFIG: config() }, timeoutMs: 30_000 });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`no chat to continue in ${at.cwd}`);
    const unknown = await runPatchbay(['chat', '--resume', 'no-such-chat', 'hi'], { home: at.home, cwd: at.cwd, env: { PATCHBAY_CONFIG: config() }, timeoutMs: 30_000 });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No chat no-such-chat');
    const piped = await runPatchbay(['chat', '--resume'], { home: at.home, cwd: at.cwd, env: { PATCHBAY_CONFIG: config() }, timeoutMs: 30_000 });
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('--resume needs a chat id when stdin is not a terminal');
    expect(llmCalls()).toHaveLength(0);
  });

  it('--resume <id> opens that chat, not the newest; another folder`s chats are not listed', async () => {
    const at = place();
    const elsewhere = { home: at.home, cwd: scratch(workspace({}, 'pb-resume-other-')) };
    llm().script([{ text: 'answer one' }], [{ text: 'answer two' }], [{ text: 'other folder' }], [{ text: 'back in one' }]);
    const first = await oneShot(at, 'first question');
    await oneShot(at, 'second question');
    await oneShot(elsewhere, 'a question elsewhere');

    const p = chatPty(at, ['--resume', first]);
    await p.waitFor(`· 1 prompt · ${first}`);
    await p.waitFor('> first question');
    await atPrompt(p);
    p.write(`/chats${KEY.enter}`);
    await p.waitFor('(newest first):');
    const list = await p.waitFor(/\/resume <n> opens one\./);
    const shown = p.text().slice(list.index - 400, list.index);
    // The older of the two, marked as the current one; the other folder's chat is not there.
    expect(shown).toMatch(new RegExp(`\\* 2\\. .*· ${first}`));
    expect(shown).toContain('1. ');
    expect(shown).not.toContain('3. ');
    await atPrompt(p);
    p.write(`go on${KEY.enter}`);
    await p.waitFor('back in one');
    expect(lastSent()).toEqual(['user first question', 'assistant answer one', 'user go on']);
    await atPrompt(p);
    p.write(`/exit${KEY.enter}`);
    await p.waitFor(`resume: patchbay chat --resume ${first}`);
    expect(await p.exit()).toBe(0);
  });

  it('--continue: the banner names the model and agent the chat goes on with, its own (review)', async () => {
    const at = place();
    llm().script([{ text: 'answer one' }]);
    await oneShot(at, 'first question', ['--model', 'fake/m2', '--agent', 'plan']);
    const p = chatPty(at, ['--continue']);
    await p.waitFor('Resumed: ');
    await p.waitFor('model: fake/m2 · agent: plan · /help for commands');
    await atPrompt(p);
    p.write(KEY.ctrlD);
    expect(await p.exit()).toBe(0);
  });

  it('--resume on a terminal without an id shows a picker of the folder`s chats, newest first; a number picks', async () => {
    const at = place();
    llm().script([{ text: 'answer one' }], [{ text: 'answer two' }], [{ text: 'picked' }]);
    const first = await oneShot(at, 'first question');
    const second = await oneShot(at, 'second question');

    const p = chatPty(at, ['--resume']);
    await p.waitFor('Resume which chat? (newest first)');
    await p.waitFor(new RegExp(`1\\. Untitled · 2 messages · just now · ${second}`));
    await p.waitFor(new RegExp(`2\\. Untitled · 2 messages · just now · ${first}`));
    await p.waitFor('Pick 1-2');
    p.write(`7${KEY.enter}`);
    await p.waitFor('no chat 7: pick 1 to 2');
    p.write(`2${KEY.enter}`);
    await p.waitFor(`Resumed: Untitled · 1 prompt · ${first}`);
    await atPrompt(p);
    p.write(`which one?${KEY.enter}`);
    await p.waitFor('picked');
    expect(lastSent()).toEqual(['user first question', 'assistant answer one', 'user which one?']);
    await atPrompt(p);
    p.write(KEY.ctrlD);
    expect(await p.exit()).toBe(0);
  });

  it('the picker is left with Ctrl-D or Enter alone (exit 1) or Ctrl-C (exit 130, as everywhere): no chat opened, the model not asked', async () => {
    const at = place();
    llm().script([{ text: 'answer one' }]);
    await oneShot(at, 'first question');
    for (const [key, code] of [
      [KEY.ctrlD, 1],
      [KEY.ctrlC, 130],
      [KEY.enter, 1],
    ] as const) {
      const p = chatPty(at, ['--resume', '--', 'hello']);
      await p.waitFor('Pick 1-1 (Enter alone quits): ');
      p.write(key);
      // On a line of its own, not after the question (review).
      await p.waitFor(/\npatchbay chat: no chat picked/);
      expect(await p.exit()).toBe(code);
    }
    expect(llmCalls()).toHaveLength(1);
  });
});

describe('patchbay chat: /chats, /resume, /rewind, /fork and the exit summary', () => {
  it('/chats lists the folder`s chats and /resume <n> goes on in one, with its history and its model', async () => {
    const at = place();
    llm().script([{ text: 'answer one' }], [{ text: 'answer two' }], [{ text: 'resumed answer' }]);
    const first = await oneShot(at, 'first question', ['--model', 'fake/m2']);
    await oneShot(at, 'second question');

    const p = chatPty(at, []);
    await p.waitFor('/exit to quit');
    await atPrompt(p);
    p.write(`/chats${KEY.enter}`);
    await p.waitFor(new RegExp(`2\\. Untitled · 2 messages · just now · ${first}`));
    await atPrompt(p);
    p.write(`/resume 9${KEY.enter}`);
    await p.waitFor('/resume: no chat 9: pick 1 to 2');
    await atPrompt(p);
    p.write(`/resume 2${KEY.enter}`);
    await p.waitFor(`Resumed: Untitled · 1 prompt · ${first}`);
    await p.waitFor('answer one');
    await atPrompt(p);
    p.write(`more${KEY.enter}`);
    await p.waitFor('resumed answer');
    expect(lastSent()).toEqual(['user first question', 'assistant answer one', 'user more']);
    expect(llmCalls().at(-1).model).toBe('m2'); // the chat's own, not the default fake/m1
    await atPrompt(p);
    // A new chat never prompted: the summary names the last one that was.
    p.write(`/new${KEY.enter}`);
    await p.waitFor('New chat.');
    await atPrompt(p);
    p.write(KEY.ctrlD);
    await p.waitFor(`resume: patchbay chat --resume ${first}`);
    expect(await p.exit()).toBe(0);
  });

  it('/rewind rolls back the last prompt with the file the model changed, and the model no longer sees it', async () => {
    const at = place({ 'notes.txt': 'original\n' });
    llm().script(
      [{ text: 'Noted.' }],
      [{ toolCall: { name: 'patchbay__write_file', args: { path: 'notes.txt', content: 'changed by the model\n' } } }],
      [{ text: 'Changed it.' }],
      [{ text: 'after the rewind' }],
    );
    const p = chatPty(at, []);
    await atPrompt(p);
    p.write(`remember this${KEY.enter}`);
    await p.waitFor('Noted.');
    await atPrompt(p);
    p.write(`change notes.txt${KEY.enter}`);
    await p.waitFor('Changed it.');
    await atPrompt(p);
    expect(readFileSync(join(at.cwd, 'notes.txt'), 'utf8')).toBe('changed by the model\n');
    p.write(`/rewind 3${KEY.enter}`);
    await p.waitFor('/rewind: the chat has 2 prompts');
    await atPrompt(p);
    p.write(`/rewind${KEY.enter}`);
    await p.waitFor('Rewound 1 prompt, back to before: change notes.txt');
    await atPrompt(p);
    expect(readFileSync(join(at.cwd, 'notes.txt'), 'utf8')).toBe('original\n');
    p.write(`what now?${KEY.enter}`);
    await p.waitFor('after the rewind');
    expect(lastSent()).toEqual(['user remember this', 'assistant Noted.', 'user what now?']);
    await atPrompt(p);
    // Ctrl-C twice quits too, with the summary.
    p.write(KEY.ctrlC);
    await p.waitFor('(Ctrl-C again, Ctrl-D or /exit to quit)');
    p.write(KEY.ctrlC);
    await p.waitFor(/resume: patchbay chat --resume \S+/);
    expect(await p.exit()).toBe(0);
  });

  it('/fork goes on in a copy of the whole chat; the original keeps its messages', async () => {
    const at = place();
    llm().script([{ text: 'the answer' }], [{ text: 'in the fork' }]);
    const p = chatPty(at, []);
    await atPrompt(p);
    p.write(`/fork${KEY.enter}`);
    await p.waitFor('Nothing to fork yet');
    await atPrompt(p);
    p.write(`the question${KEY.enter}`);
    await p.waitFor('the answer');
    await atPrompt(p);
    p.write(`/fork${KEY.enter}`);
    const forked = await p.waitFor(/Forked: now in (\S+) \(the original is (\S+)\)/);
    const [, forkId, originalId] = forked;
    expect(forkId).not.toBe(originalId);
    await atPrompt(p);
    p.write(`go on${KEY.enter}`);
    await p.waitFor('in the fork');
    expect(lastSent()).toEqual(['user the question', 'assistant the answer', 'user go on']);
    await atPrompt(p);
    p.write(`/chats${KEY.enter}`);
    await p.waitFor(new RegExp(`\\* 1\\. Untitled \\(2\\) · 4 messages · just now · ${forkId}`));
    await p.waitFor(new RegExp(`2\\. Untitled · 2 messages · just now · ${originalId}`));
    await atPrompt(p);
    p.write(KEY.ctrlD);
    await p.waitFor(`resume: patchbay chat --resume ${forkId}`);
    expect(await p.exit()).toBe(0);
  });

  it('on exit prints the tokens and cost of the run and the resume command, which resumes the chat', async () => {
    const at = place({ 'a.txt': 'x\n' });
    llm().script(
      [{ toolCall: { name: 'patchbay__read_file', args: { path: 'a.txt' } } }, { usage: { input: 10_000, output: 1_000 } }],
      [{ text: 'Read it.' }, { usage: { input: 12_000, output: 1_000 } }],
      [{ text: 'still here' }],
    );
    const p = chatPty(at, []);
    await atPrompt(p);
    p.write(`read a.txt${KEY.enter}`);
    await p.waitFor('Read it.');
    await atPrompt(p);
    p.write(`/exit${KEY.enter}`);
    // Two steps: 22,000 in, 2,000 out; at $3 / $15 per million: 0.066 + 0.03.
    await p.waitFor('tokens: 22,000 in, 2,000 out · $0.10');
    const hint = await p.waitFor(/resume: (patchbay chat --resume (\S+))/);
    expect(await p.exit()).toBe(0);
    const chatId = hint[2];

    const again = chatPty(at, hint[1].split(' ').slice(2));
    await again.waitFor(`Resumed: Untitled · 1 prompt · ${chatId}`);
    await again.waitFor('> read a.txt');
    await again.waitFor('(1 tool call) Read it.');
    await atPrompt(again);
    again.write(`still there?${KEY.enter}`);
    await again.waitFor('still here');
    expect(lastSent()[0]).toBe('user read a.txt');
    expect(lastSent().at(-1)).toBe('user still there?');
    await atPrompt(again);
    again.write(KEY.ctrlD);
    // This run's own tokens (the fake counts them when none are scripted), not the first run's.
    const tokens = await again.waitFor(/tokens: ([\d,]+) in, [\d,]+ out · \$/);
    expect(tokens[1]).not.toBe('22,000');
    await again.waitFor(`resume: patchbay chat --resume ${chatId}`);
    expect(await again.exit()).toBe(0);
  });
});

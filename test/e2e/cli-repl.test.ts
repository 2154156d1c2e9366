/**
 * Interactive `patchbay chat` in a real pseudo-terminal (test/support/pty.ts): the built binary,
 * its own `patchbay server` child, and the fake LLM over HTTP. What the user types goes in as a
 * terminal sends it; what the model was asked is checked in the fake LLM's recorded requests.
 * Build first (`npm run build`).
 */
import { describe, expect, it } from 'vitest';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { KEY, paste, usePty, type Pty } from '../support/pty.js';
import { BIN, cliEnv, fakeChatConfig, runPatchbay, tempDir, useTempDirs, workspace, type CliRun } from './harness.js';

// Registered first so it runs last (after hooks run in reverse), once every process is stopped.
const scratch = useTempDirs();
const llm = useFakeLlm({ reset: 'afterEach' });
const spawn = usePty();

function config(): string {
  return fakeChatConfig(llm().url, {}, ['m1', 'm2']);
}

/** `patchbay chat` in a pty, in a fresh workspace and home; resolves at the first prompt. */
async function startChat(opts: { files?: Record<string, string>; args?: string[] } = {}): Promise<Pty> {
  const home = scratch(tempDir('pb-repl-home-'));
  const cwd = scratch(workspace(opts.files, 'pb-repl-ws-'));
  const p = spawn(process.execPath, [BIN, 'chat', ...(opts.args ?? [])], { cwd, env: cliEnv(home, { PATCHBAY_CONFIG: config() }) });
  await p.waitFor('/exit to quit');
  await p.waitFor('> ');
  return p;
}

/** The chat-completion requests the fake LLM received. */
function llmCalls(): any[] {
  return llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body);
}

function userTexts(body: any): string[] {
  return body.messages.filter((m: any) => m.role === 'user').map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((c: any) => c.text ?? '').join('')));
}

/** Quits with Ctrl-D at the prompt and expects exit code 0. */
async function quit(p: Pty): Promise<void> {
  p.write(KEY.ctrlD);
  expect(await p.exit()).toBe(0);
}

describe('patchbay chat in a terminal: pasting (bracketed paste)', () => {
  it('sends a 3-line paste as ONE prompt with the three lines, after Enter', async () => {
    llm().script([{ text: 'Got all three.' }]);
    const p = await startChat();
    expect(p.raw).toContain('\x1b[?2004h'); // the terminal is asked to bracket pastes
    p.write(paste('line one\nline two\nline three\n'));
    // The block is shown above the prompt, the line holds a placeholder; nothing is sent yet.
    await p.waitFor('│ line three');
    await p.waitFor('[paste #1: 3 lines]');
    expect(llmCalls()).toHaveLength(0);
    p.write(KEY.enter);
    await p.waitFor('Got all three.');
    await p.waitFor('> ');
    const calls = llmCalls();
    expect(calls).toHaveLength(1);
    expect(userTexts(calls[0]).at(-1)).toContain('line one\nline two\nline three');
    await quit(p);
    expect(p.raw.lastIndexOf('\x1b[?2004l')).toBeGreaterThan(p.raw.lastIndexOf('\x1b[?2004h')); // off again on exit
  });

  it('keeps what is typed around a paste, and a one-line paste is plain text', async () => {
    llm().script([{ text: 'Reviewed.' }]);
    const p = await startChat();
    p.write(`review ${paste('const a = 1;\nconst b = 2;')} and ${paste('this')}`);
    await p.waitFor('and this');
    p.write(KEY.enter);
    await p.waitFor('Reviewed.');
    expect(userTexts(llmCalls()[0]).at(-1)).toContain('review const a = 1;\nconst b = 2; and this');
    await quit(p);
  });

  it('continues a typed line ending in \\ on the next one', async () => {
    llm().script([{ text: 'Two lines seen.' }]);
    const p = await startChat();
    p.write(`first part \\${KEY.enter}`);
    await p.waitFor('… ');
    p.write(`second part${KEY.enter}`);
    await p.waitFor('Two lines seen.');
    const calls = llmCalls();
    expect(calls).toHaveLength(1);
    expect(userTexts(calls[0]).at(-1)).toContain('first part \nsecond part');
    await quit(p);
  });
});

describe('patchbay chat in a terminal: local commands', () => {
  it('/help lists the client commands and the server commands; the model is not asked', async () => {
    const p = await startChat();
    p.write(`/help${KEY.enter}`);
    await p.waitFor('Commands of patchbay chat:');
    await p.waitFor(/\/model \[provider\/model\]\s+Show the models/);
    await p.waitFor(/\/agent \[code\|plan\]/);
    await p.waitFor('/expand [n]');
    await p.waitFor('Commands of the server:');
    await p.waitFor(/\/costs\s+Show tokens used/);
    await p.waitFor('> ');
    expect(llmCalls()).toHaveLength(0);
    await quit(p);
  });

  it('an unknown /word says so and sends nothing; a server command still runs', async () => {
    llm().script([{ text: 'Hi.' }, { usage: { input: 10, output: 3 } }]);
    const p = await startChat();
    p.write(`/frobnicate now${KEY.enter}`);
    await p.waitFor('Unknown command /frobnicate — /help lists commands');
    p.write(`hello${KEY.enter}`);
    await p.waitFor('Hi.');
    await p.waitFor('> ');
    p.write(`/costs${KEY.enter}`);
    await p.waitFor('Total tokens: 13');
    const calls = llmCalls();
    expect(calls).toHaveLength(1);
    expect(JSON.stringify(calls[0].messages)).not.toContain('frobnicate');
    await quit(p);
  });

  it('/model shows the models and switches the one the prompts use', async () => {
    llm().script([{ text: 'From m1.' }], [{ text: 'From m2.' }]);
    const p = await startChat();
    p.write(`/model${KEY.enter}`);
    await p.waitFor('Model: fake/m1');
    await p.waitFor('* fake/m1');
    await p.waitFor('fake/m2');
    p.write(`hello${KEY.enter}`);
    await p.waitFor('From m1.');
    await p.waitFor('> ');
    p.write(`/model m2${KEY.enter}`);
    await p.waitFor('Model: fake/m2');
    p.write(`/model nope${KEY.enter}`);
    await p.waitFor('Unknown model "nope". Available: fake/m1, fake/m2');
    p.write(`again${KEY.enter}`);
    await p.waitFor('From m2.');
    expect(llmCalls().map((c) => c.model)).toEqual(['m1', 'm2']);
    await quit(p);
  });

  it('/agent plan switches to the plan agent: no write or shell tools are offered', async () => {
    llm().script([{ text: 'Coding.' }], [{ text: 'Planning.' }]);
    const p = await startChat();
    p.write(`hi${KEY.enter}`);
    await p.waitFor('Coding.');
    await p.waitFor('> ');
    p.write(`/agent${KEY.enter}`);
    await p.waitFor('Agent: code');
    p.write(`/agent plan${KEY.enter}`);
    await p.waitFor('Agent: plan');
    p.write(`plan it${KEY.enter}`);
    await p.waitFor('Planning.');
    const [code, plan] = llmCalls().map((c) => (c.tools ?? []).map((t: any) => t.function.name as string));
    expect(code).toContain('patchbay__write_file');
    expect(plan).not.toContain('patchbay__write_file');
    expect(plan).not.toContain('patchbay__shell_command');
    expect(plan).toContain('patchbay__read_file');
    await quit(p);
  });

  it('keys still reach readline through the paste filter: Tab completes /he, Ctrl-C stops an answer, Ctrl-C twice quits', async () => {
    llm().script([{ text: 'Starting…' }, { stall: 'forever' }]);
    const p = await startChat();
    p.write(`/he${KEY.tab}`);
    await p.waitFor('/help');
    p.write(KEY.enter);
    await p.waitFor('Commands of patchbay chat:');
    await p.waitFor('> ');
    p.write(`go${KEY.enter}`);
    await p.waitFor('Starting…');
    p.write(KEY.ctrlC);
    await p.waitFor('Prompt stopped');
    await p.waitFor('> ');
    p.write(KEY.ctrlC + KEY.ctrlC);
    expect(await p.exit()).toBe(0);
    expect(p.raw.lastIndexOf('\x1b[?2004l')).toBeGreaterThan(p.raw.lastIndexOf('\x1b[?2004h'));
  });

  it('/exit quits with 0', async () => {
    const p = await startChat();
    p.write(`/exit${KEY.enter}`);
    expect(await p.exit()).toBe(0);
  });
});

describe('patchbay chat in a terminal: tool output', () => {
  const file = Array.from({ length: 12 }, (_, i) => `row ${i + 1} of the notes`).join('\n') + '\n';

  it('shows the first lines of a tool call’s output, and /expand shows all of it', async () => {
    llm().script([{ toolCall: { name: 'patchbay__read_file', args: { path: 'notes.txt' } } }], [{ text: 'Read it.' }]);
    const p = await startChat({ files: { 'notes.txt': file } });
    p.write(`read notes.txt${KEY.enter}`);
    await p.waitFor(/✓ read_file \(\d+ ms\)/);
    const preview = await p.waitFor(/more lines? \(\/expand 1\)/);
    const shown = p.text().slice(p.text().lastIndexOf('✓ read_file'), preview.index);
    expect(shown).toContain('row 1 of the notes');
    expect(shown).not.toContain('row 12 of the notes');
    await p.waitFor('Read it.');
    await p.waitFor('> ');
    p.write(`/expand${KEY.enter}`);
    await p.waitFor('read_file output 1:');
    await p.waitFor('row 12 of the notes');
    expect(llmCalls()).toHaveLength(2); // /expand is the client's, not a prompt
    await quit(p);
  });
});

describe('patchbay chat with pipes: tool output', () => {
  const file = Array.from({ length: 12 }, (_, i) => `row ${i + 1} of the notes`).join('\n') + '\n';

  /** `patchbay chat ...args` with stdin/stdout/stderr piped (no terminal). */
  function piped(args: string[], files: Record<string, string>, stdin = ''): Promise<CliRun> {
    const home = scratch(tempDir('pb-repl-home-'));
    return runPatchbay(['chat', ...args], { home, cwd: scratch(workspace(files, 'pb-repl-ws-')), env: { PATCHBAY_CONFIG: config() }, stdin });
  }

  it('one-shot: the first lines, uncolored, and how many more', async () => {
    llm().script([{ toolCall: { name: 'patchbay__read_file', args: { path: 'notes.txt' } } }], [{ text: 'Read it.' }]);
    const r = await piped(['read notes.txt'], { 'notes.txt': file });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('\x1b[');
    expect(r.stdout).toMatch(/✓ read_file \(\d+ ms\)\n {4}row 1 of the notes\n(.*\n){3} {4}row 5 of the notes\n {4}… 7 more lines\n/);
    expect(r.stdout).not.toContain('row 6 of the notes');
    expect(r.stdout).toContain('Read it.');
  });

  it('piped REPL: /expand prints the whole output; a line ending in \\ continues', async () => {
    llm().script([{ toolCall: { name: 'patchbay__read_file', args: { path: 'notes.txt' } } }], [{ text: 'Read it.' }]);
    const r = await piped([], { 'notes.txt': file }, 'read \\\nnotes.txt\n/expand 1\n/exit\n');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('… 7 more lines (/expand 1)');
    expect(r.stdout).toMatch(/read_file output 1:\nrow 1 of the notes\n(.*\n){10}row 12 of the notes\n/);
    const calls = llmCalls();
    expect(calls).toHaveLength(2);
    expect(userTexts(calls[0]).at(-1)).toContain('read \nnotes.txt');
  });
});

describe('patchbay chat in a terminal: questions (chat/askQuestion)', () => {
  /** The tool results the model read in its last request. */
  const toolResults = (): string[] =>
    llmCalls()
      .at(-1)
      .messages.filter((m: any) => m.role === 'tool')
      .map((m: any) => m.content);

  it('the model is offered ask_user; its question and options are shown, a number picks one, a typed line is a free answer', async () => {
    const options = [{ label: 'Postgres', description: 'the one in docker-compose' }, { label: 'SQLite' }];
    llm().script(
      [{ toolCall: { id: 'q1', name: 'patchbay__ask_user', args: { question: 'Which database?', options } } }],
      [{ toolCall: { id: 'q2', name: 'patchbay__ask_user', args: { question: 'Anything else?', options } } }],
      [{ text: 'Noted.' }],
    );
    const p = await startChat();
    p.write(`set up the db${KEY.enter}`);
    await p.waitFor('? Which database?');
    await p.waitFor('1. Postgres — the one in docker-compose');
    await p.waitFor('Pick 1-2 or type your answer');
    expect(llmCalls()[0].tools.map((t: any) => t.function.name)).toContain('patchbay__ask_user');
    p.write(`2${KEY.enter}`);
    await p.waitFor('? Anything else?');
    p.write(`use WAL mode${KEY.enter}`);
    await p.waitFor('Noted.');
    expect(toolResults()).toEqual(['User answered: SQLite', 'User answered: use WAL mode']);
    await p.waitFor('> ');
    await quit(p);
  });

  it('an empty line cancels the question (the model reads that), and the chat goes on', async () => {
    llm().script(
      [{ toolCall: { id: 'q1', name: 'patchbay__ask_user', args: { question: 'Proceed?', options: [{ label: 'Yes' }, { label: 'No' }], allowFreeform: false } } }],
      [{ text: 'Stopped there.' }],
    );
    const p = await startChat();
    p.write(`go${KEY.enter}`);
    await p.waitFor('Pick 1-2 (Enter alone cancels)');
    p.write(`maybe${KEY.enter}`); // not an option, no free text: asked again
    await p.waitFor(/maybe[\s\S]*Pick 1-2/);
    p.write(KEY.enter);
    await p.waitFor('Stopped there.');
    expect(toolResults()).toEqual(['User cancelled the question.']);
    await p.waitFor('> ');
    await quit(p);
  });
});

describe('patchbay chat with pipes: no questions', () => {
  it('without a terminal nobody could answer, so the model is not offered ask_user', async () => {
    llm().script([{ text: 'ok' }]);
    const run = await runPatchbay(['chat', 'hello'], { home: scratch(tempDir('pb-q-home-')), cwd: scratch(workspace()), env: { PATCHBAY_CONFIG: config() } });
    expect(run.code).toBe(0);
    expect(llmCalls()[0].tools.map((t: any) => t.function.name)).not.toContain('patchbay__ask_user');
  });
});

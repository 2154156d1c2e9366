/**
 * `patchbay chat --json` (issue 29, item 3): the built binary, piped like a script runs it, against
 * the fake LLM. Every line of stdout must parse as a JSON object with a `type`; the sequence of
 * types and the last line (`done`, with the server's stopReason and the exit code) are checked.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Reply } from '../fixtures/fake-llm.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { KEY, usePty } from '../support/pty.js';
import { BIN, cliEnv, fakeChatConfig, runPatchbay, tempDir, workspace, type CliRun } from './harness.js';

const llm = useFakeLlm({ reset: 'afterEach' });
const spawnPty = usePty();

type Event = { type: string } & Record<string, any>;

interface Run extends CliRun {
  cwd: string;
  events: Event[];
}

/** Every stdout line as JSON: a line that does not parse, or has no `type`, fails the test. */
function events(stdout: string): Event[] {
  expect(stdout.endsWith('\n'), `stdout ends with a newline:\n${stdout}`).toBe(true);
  return stdout
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      let e: unknown;
      expect(() => (e = JSON.parse(line)), `not JSON: ${line}`).not.toThrow();
      expect(e).toMatchObject({ type: expect.any(String) });
      return e as Event;
    });
}

async function chat(args: string[], opts: { stdin?: string; config?: string; files?: Record<string, string> } = {}): Promise<Run> {
  const cwd = workspace(opts.files, 'pb-json-ws-');
  const r = await runPatchbay(['chat', ...args], { home: tempDir('pb-json-home-'), cwd, env: { PATCHBAY_CONFIG: opts.config ?? fakeChatConfig(llm().url) }, stdin: opts.stdin, timeoutMs: 30_000 });
  // No colors, no spinner: nothing but JSON lines.
  expect(r.stdout).not.toMatch(/\x1b/);
  return { ...r, cwd, events: events(r.stdout) };
}

const types = (es: Event[]) => es.map((e) => e.type);
const only = (es: Event[], type: string) => es.filter((e) => e.type === type);
const done = (es: Event[]) => {
  expect(es.at(-1)?.type).toBe('done');
  return es.at(-1)!;
};
const lastUserText = () => {
  const bodies = llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body);
  const users = bodies[0].messages.filter((m: any) => m.role === 'user');
  const c = users.at(-1).content;
  return typeof c === 'string' ? c : c.map((p: any) => p.text ?? '').join('');
};

describe('patchbay chat --json', () => {
  it('a text answer: start, the streamed chunks, the whole message, usage, then done with end_turn and exit 0', async () => {
    llm().script([{ text: 'Hello ' }, { text: 'from ' }, { text: 'the fake' }, { usage: { input: 12, output: 4 } }]);
    const r = await chat(['--json', 'say', 'hi']);
    expect(r.code, r.stderr).toBe(0);
    const es = r.events;
    expect(es[0]).toMatchObject({ type: 'start', version: 1, chatId: expect.any(String), model: 'fake/m1', agent: 'code', cwd: r.cwd });
    expect(
      only(es, 'text')
        .map((e) => e.text)
        .join(''),
    ).toBe('Hello from the fake');
    expect(only(es, 'message')).toEqual([{ type: 'message', text: 'Hello from the fake' }]);
    // The chunks come before the message they make up.
    expect(types(es).lastIndexOf('text')).toBeLessThan(types(es).indexOf('message'));
    expect(only(es, 'usage')[0]).toMatchObject({ inputTokens: 12, outputTokens: 4, contextTokens: expect.any(Number) });
    expect(done(es)).toEqual({
      type: 'done',
      stopReason: 'end_turn',
      chatId: es[0].chatId,
      exitCode: 0,
      usage: expect.objectContaining({ inputTokens: 12, outputTokens: 4 }),
      answer: 'Hello from the fake',
    });
    expect(lastUserText()).toContain('say hi');
  });

  it('reads the prompt from stdin when no words are given, and from stdin for -', async () => {
    llm().script([{ text: 'piped.' }]);
    const r = await chat(['--json'], { stdin: 'what is\non stdin?\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(done(r.events)).toMatchObject({ stopReason: 'end_turn', answer: 'piped.' });
    expect(lastUserText()).toContain('what is\non stdin?');

    llm().reset();
    llm().script([{ text: 'dashed.' }]);
    const d = await chat(['--json', '-'], { stdin: 'from the dash\n' });
    expect(d.code, d.stderr).toBe(0);
    expect(done(d.events)).toMatchObject({ answer: 'dashed.' });
    expect(lastUserText()).toContain('from the dash');

    // Without --json too: `-` is a one-shot prompt from stdin, not the REPL's lines.
    llm().reset();
    llm().script([{ text: 'plain.' }]);
    const plain = await runPatchbay(['chat', '-'], { home: tempDir('pb-json-home-'), cwd: workspace(), env: { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }, stdin: 'one\ntwo\n' });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toBe('plain.\n');
    expect(lastUserText()).toContain('one\ntwo');
  });

  it('a tool call with --yes: toolCall approved, then its toolResult with the file change, then the answer', async () => {
    llm().script([{ text: 'Creating it.' }, { toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'made.txt', content: 'one\ntwo\n' } } }], [{ text: 'Created.' }]);
    const r = await chat(['--json', '--yes', 'create made.txt']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(r.cwd, 'made.txt'), 'utf8')).toBe('one\ntwo\n');
    const es = r.events;
    const call = only(es, 'toolCall');
    expect(call).toEqual([expect.objectContaining({ id: 'w1', name: 'write_file', status: 'approved', arguments: { path: 'made.txt', content: 'one\ntwo\n' } })]);
    const result = only(es, 'toolResult');
    expect(result).toEqual([
      expect.objectContaining({ id: 'w1', name: 'write_file', error: false, output: expect.any(String), fileChange: expect.objectContaining({ linesAdded: 2, linesRemoved: 0 }) }),
    ]);
    expect(result[0].fileChange.path).toMatch(/made\.txt$/);
    // In order: the first message, the call, its result, the answer.
    const at = (pred: (e: Event) => boolean) => es.findIndex(pred);
    const first = at((e) => e.type === 'message' && e.text === 'Creating it.');
    const called = at((e) => e.type === 'toolCall');
    const resulted = at((e) => e.type === 'toolResult');
    const second = at((e) => e.type === 'message' && e.text === 'Created.');
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(called);
    expect(called).toBeLessThan(resulted);
    expect(resulted).toBeLessThan(second);
    expect(done(es)).toMatchObject({ stopReason: 'end_turn', exitCode: 0, answer: 'Created.' });
    // --yes answers for the user: no text on stdout says so, only the events.
    expect(r.stdout).not.toContain('approved write_file (--yes)');
  });

  it('a call no one can approve (stdin not a terminal, no --yes): toolCall rejected as unasked, the model told, done with exit 3', async () => {
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'made.txt', content: 'x\n' } } }], [{ text: 'Not created.' }]);
    const r = await chat(['--json', 'create made.txt']);
    expect(r.code, r.stderr).toBe(3);
    expect(existsSync(join(r.cwd, 'made.txt'))).toBe(false);
    const es = r.events;
    // Said once, though the server also reports the rejection.
    expect(only(es, 'toolCall')).toEqual([expect.objectContaining({ id: 'w1', name: 'write_file', status: 'rejected', reason: 'unasked', message: expect.stringContaining('--yes') })]);
    expect(only(es, 'toolResult')).toEqual([]);
    expect(done(es)).toMatchObject({ stopReason: 'end_turn', exitCode: 3, unasked: ['write_file'], answer: 'Not created.' });
  });

  it('a read-only tool runs without asking: toolCall run', async () => {
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'It says alpha.' }]);
    const r = await chat(['--json', 'read a.txt'], { files: { 'a.txt': 'alpha\n' } });
    expect(r.code, r.stderr).toBe(0);
    expect(only(r.events, 'toolCall')).toEqual([expect.objectContaining({ id: 'r1', name: 'read_file', status: 'run', arguments: { path: 'a.txt' } })]);
    expect(only(r.events, 'toolResult')[0]).toMatchObject({ id: 'r1', error: false, output: expect.stringContaining('alpha') });
  });

  it('a cut-off answer: done says max_tokens (the server’s stop reason), exit 0 as without --json', async () => {
    llm().script([{ text: 'The answer is' }, { finish: 'length' }]);
    const r = await chat(['--json', 'long answer please']);
    expect(r.code, r.stderr).toBe(0);
    expect(done(r.events)).toMatchObject({ stopReason: 'max_tokens', exitCode: 0, answer: 'The answer is' });
  });

  it('a failed turn: an error event with the reason, done with stopReason error, exit 1', async () => {
    llm().script({ status: 400, body: { error: { message: 'bad things happened', type: 'invalid_request_error' } } });
    const r = await chat(['--json', 'hello']);
    expect(r.code).toBe(1);
    const errors = only(r.events, 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0].message).toMatch(/Error from fake\/m1: .*bad things happened/);
    expect(done(r.events)).toMatchObject({ stopReason: 'error', exitCode: 1 });
  });

  it('no model configured: a notice, an error, done with exit 1 — and an unknown --model: error, done with exit 2', async () => {
    const r = await chat(['--json', 'hello'], { config: '{"gateway":{"port":0}}' });
    expect(r.code).toBe(1);
    expect(only(r.events, 'notice').some((e) => /No LLM is configured/.test(e.text))).toBe(true);
    expect(only(r.events, 'error')).toHaveLength(1);
    expect(done(r.events)).toMatchObject({ stopReason: 'error', exitCode: 1 });

    const m = await chat(['--json', '--model', 'nope', 'hello']);
    expect(m.code).toBe(2);
    expect(only(m.events, 'error')[0].message).toContain('Unknown model "nope"');
    expect(done(m.events)).toMatchObject({ stopReason: 'error', exitCode: 2 });
  });

  it('is one-shot only: on a terminal with no prompt it is a usage error (exit 2); an empty stdin too', async () => {
    const home = tempDir('pb-json-home-');
    const p = spawnPty(process.execPath, [BIN, 'chat', '--json'], { cwd: workspace(), env: cliEnv(home, { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }) });
    await p.waitFor('--json answers one prompt');
    expect(await p.exit()).toBe(2);

    const r = await runPatchbay(['chat', '--json'], { home, cwd: workspace(), env: { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }, stdin: '  \n' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no prompt on stdin');
    expect(r.stdout).toBe('');
  });

  it('on a terminal without --yes the call is asked there, and the answer is its toolCall event', async () => {
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'made.txt', content: 'x\n' } } }], [{ text: 'Done.' }]);
    const home = tempDir('pb-json-home-');
    const cwd = workspace();
    const p = spawnPty(process.execPath, [BIN, 'chat', '--json', 'create made.txt'], { cwd, env: cliEnv(home, { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }) });
    await p.waitFor('Run write_file? [y]es / [n]o / [a]lways for this chat');
    p.write(`y${KEY.enter}`);
    await p.waitFor('{"type":"toolCall","id":"w1","name":"write_file"');
    await p.waitFor('"status":"approved"');
    await p.waitFor('{"type":"done","stopReason":"end_turn"');
    expect(await p.exit()).toBe(0);
    expect(readFileSync(join(cwd, 'made.txt'), 'utf8')).toBe('x\n');
  });

  it('a subagent: a subagent event names it, and its tool calls and message carry parentToolCallId', async () => {
    llm().onRequest = (path, body: any): Reply | undefined => {
      if (path !== '/v1/chat/completions') return undefined;
      const system = String(body.messages.find((m: any) => m.role === 'system')?.content ?? '');
      const results = body.messages.filter((m: any) => m.role === 'tool').length;
      if (system.includes('You are an explorer subagent')) return results ? [{ text: 'alpha is in a.txt' }] : [{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }];
      return results ? [{ text: 'Found it.' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'Find alpha', activity: 'finding alpha' } } }];
    };
    const r = await chat(['--json', 'where is alpha?'], { files: { 'a.txt': 'alpha\n' } });
    expect(r.code, r.stderr).toBe(0);
    const es = r.events;
    expect(only(es, 'subagent')[0]).toMatchObject({ toolCallId: 's1', chatId: 'subagent-s1', agent: 'explorer', activity: 'finding alpha', step: 1 });
    const spawn = es.find((e) => e.type === 'toolCall' && e.id === 's1');
    expect(spawn).toMatchObject({ name: 'spawn_agent', status: 'run', summary: 'explorer: finding alpha' });
    expect(spawn!.parentToolCallId).toBeUndefined();
    expect(es.find((e) => e.type === 'toolCall' && e.id === 'c1')).toMatchObject({ name: 'read_file', status: 'run', parentToolCallId: 's1' });
    expect(es.find((e) => e.type === 'toolResult' && e.id === 'c1')).toMatchObject({ error: false, parentToolCallId: 's1' });
    expect(es.find((e) => e.type === 'message' && e.parentToolCallId === 's1')).toMatchObject({ text: 'alpha is in a.txt' });
    // The subagent's text never streams as our answer's chunks.
    expect(
      only(es, 'text')
        .map((e) => e.text)
        .join(''),
    ).toBe('Found it.');
    // Its events come between the spawn_agent call and its result.
    const at = (pred: (e: Event) => boolean) => es.findIndex(pred);
    expect(at((e) => e.type === 'toolCall' && e.id === 's1')).toBeLessThan(at((e) => e.parentToolCallId === 's1'));
    expect(at((e) => e.type === 'message' && e.parentToolCallId === 's1')).toBeLessThan(at((e) => e.type === 'toolResult' && e.id === 's1'));
    expect(done(es)).toMatchObject({ stopReason: 'end_turn', exitCode: 0, answer: 'Found it.' });
  });
  it('--continue and --resume <id> go on in a stored chat: start names it and the model gets its history; none to continue is an error event', async () => {
    const home = tempDir('pb-json-home-');
    const cwd = workspace({}, 'pb-json-ws-');
    const run = async (args: string[]) => {
      const r = await runPatchbay(['chat', '--json', ...args], { home, cwd, env: { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }, timeoutMs: 30_000 });
      expect(r.stdout).not.toMatch(/\x1b/);
      return { ...r, events: events(r.stdout) };
    };
    const none = await run(['--continue', 'anything']);
    expect(none.code).toBe(1);
    expect(only(none.events, 'error')[0].message).toMatch(/no chat to continue/);
    expect(done(none.events)).toMatchObject({ stopReason: 'error', exitCode: 1 });

    llm().script([{ text: 'first answer' }]);
    const first = await run(['remember the word kiwi']);
    expect(first.code, first.stderr).toBe(0);
    const chatId = first.events[0].chatId;

    llm().script([{ text: 'kiwi' }]);
    const again = await run(['--continue', 'which word?']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.events[0]).toMatchObject({ type: 'start', chatId });
    expect(done(again.events)).toMatchObject({ chatId, answer: 'kiwi' });
    const sent = llm()
      .requests.filter((r) => r.path === '/v1/chat/completions')
      .at(-1)!
      .body.messages.map((m: any) => (typeof m.content === 'string' ? m.content : m.content.map((p: any) => p.text ?? '').join('')));
    expect(sent.some((t: string) => t.includes('remember the word kiwi'))).toBe(true);
    expect(sent.some((t: string) => t.includes('first answer'))).toBe(true);

    llm().script([{ text: 'still kiwi' }]);
    const byId = await run(['--resume', chatId, 'and now?']);
    expect(byId.code, byId.stderr).toBe(0);
    expect(done(byId.events)).toMatchObject({ chatId, answer: 'still kiwi' });
    const bad = await run(['--resume', 'zzzz-no-such-chat', 'and now?']);
    expect(bad.code).toBe(2);
    expect(done(bad.events)).toMatchObject({ stopReason: 'error', exitCode: 2 });
    // The reason itself, not only "could not resume the chat" (review).
    expect(only(bad.events, 'error')[0].message).toMatch(/^No chat zzzz-no-such-chat\./);
  });
});

describe('--json --continue names the model and agent the resumed chat goes on with (review)', () => {
  it("start says the chat's own model and agent (not the default ones), the ones the model is asked with", async () => {
    const home = tempDir('pb-json-home-');
    const cwd = workspace({}, 'pb-json-ws-');
    const cfg = fakeChatConfig(llm().url, {}, ['m1', 'm2']);
    const run = async (args: string[]) => {
      const r = await runPatchbay(['chat', '--json', ...args], { home, cwd, env: { PATCHBAY_CONFIG: cfg }, timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(0);
      return events(r.stdout);
    };
    llm().script([{ text: 'planned' }], [{ text: 'planned more' }]);
    expect((await run(['--model', 'm2', '--agent', 'plan', 'make a plan']))[0]).toMatchObject({ type: 'start', model: 'fake/m2', agent: 'plan' });
    const again = await run(['--continue', 'and then?']);
    expect(again[0]).toMatchObject({ type: 'start', model: 'fake/m2', agent: 'plan' });
    const asked = llm().requests.filter((r) => r.path === '/v1/chat/completions');
    expect(asked.map((r) => r.body.model)).toEqual(['m2', 'm2']);
  });
});

describe('a reader that goes away (`| head -1`) (review)', () => {
  it.each([
    ['--json', ['--json']],
    ['without --json', []],
  ])('%s: the chat stops quietly, with no EPIPE stack trace', async (_name, flags) => {
    // The answer's first piece, then (once the reader is gone) more of it: the write that fails.
    llm().script([{ text: 'first piece\n' }, { delay: 1_000 }, { text: 'and more\n'.repeat(200) }]);
    const home = tempDir('pb-json-home-');
    const cwd = workspace({}, 'pb-json-ws-');
    const child = spawn(process.execPath, [BIN, 'chat', ...flags, 'say hi'], { cwd, env: cliEnv(home, { PATCHBAY_CONFIG: fakeChatConfig(llm().url) }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    clearTimeout(timer);
    expect(code, stderr).toBe(1);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
  });
});

/**
 * `patchbay chat` end to end: the built binary, run as a real process, starting its own
 * `patchbay server` child and talking to the fake LLM over HTTP. Build first (`npm run build`).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeChatConfig, runPatchbay, tempDir, workspace, type CliRun } from './harness.js';
import { completionList, mentionsToContexts } from '../../src/cli/chat-mentions.js';
import { matchModel, parseChatArgs } from '../../src/cli/chat.js';

const llm = useFakeLlm({ reset: 'afterEach' });

function fakeConfig(extra: Record<string, unknown> = {}): string {
  return fakeChatConfig(llm().url, extra);
}

interface Run extends CliRun {
  cwd: string;
}

/** Runs `patchbay chat ...args` in a fresh workspace with a clean environment (no user config, no API keys). */
async function chat(args: string[], opts: { config?: string; stdin?: string; files?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> {
  const cwd = workspace(opts.files, 'pb-chat-ws-');
  const r = await runPatchbay(['chat', ...args], { home: tempDir('pb-chat-home-'), cwd, env: { PATCHBAY_CONFIG: opts.config ?? fakeConfig() }, stdin: opts.stdin, timeoutMs: opts.timeoutMs });
  return { ...r, cwd };
}

/** The chat-completion requests the fake LLM received (title generation is off). */
function llmCalls(): any[] {
  return llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body);
}

function lastUserText(body: any): string {
  const users = body.messages.filter((m: any) => m.role === 'user');
  const c = users[users.length - 1].content;
  return typeof c === 'string' ? c : c.map((p: any) => p.text ?? '').join('');
}

describe('patchbay chat "prompt" (one-shot)', () => {
  it('streams the scripted answer to stdout and exits 0', async () => {
    llm().script([{ text: 'Hello ' }, { text: 'from ' }, { text: 'the fake' }, { usage: { input: 12, output: 4 } }]);
    const r = await chat(['say', 'hi']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Hello from the fake\n');
    expect(r.stderr).toContain('16 tokens');
    const calls = llmCalls();
    expect(calls).toHaveLength(1);
    expect(lastUserText(calls[0])).toContain('say hi');
  });

  it('sends @file mentions as file contexts', async () => {
    llm().script([{ text: 'It says banana.' }]);
    const r = await chat(['what is in @notes/fruit.txt?'], { files: { 'notes/fruit.txt': 'banana-42\n' } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('It says banana.');
    const sent = JSON.stringify(llmCalls()[0].messages);
    expect(sent).toContain('banana-42');
    expect(sent).toContain('what is in @notes/fruit.txt?');
  });

  it('rejects a write_file call when stdin is not a terminal and --yes is not given', async () => {
    llm().script([{ text: 'Creating it.' }, { toolCall: { name: 'patchbay__write_file', args: { path: 'made.txt', content: 'one\ntwo\n' } } }], [{ text: 'Understood, not created.' }]);
    const r = await chat(['create made.txt']);
    expect(r.code, r.stderr).toBe(3); // no one could be asked (see cli-flow.test.ts)
    expect(existsSync(join(r.cwd, 'made.txt'))).toBe(false);
    expect(r.stdout).toContain('Creating it.');
    expect(r.stdout).toMatch(/⊘ write_file rejected/);
    expect(r.stdout).toContain('Understood, not created.');
    expect(r.stderr).toContain('--yes');
    // The LLM was told the call did not run.
    const second = llmCalls()[1];
    const tool = second.messages.find((m: any) => m.role === 'tool');
    expect(tool.content).toMatch(/rejected/i);
  });

  it('approves a write_file call with --yes: the file is created and the diff shown', async () => {
    llm().script([{ text: 'Creating it.' }, { toolCall: { name: 'patchbay__write_file', args: { path: 'made.txt', content: 'one\ntwo\n' } } }], [{ text: 'Created.' }]);
    const r = await chat(['--yes', 'create made.txt']);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(r.cwd, 'made.txt'), 'utf8')).toBe('one\ntwo\n');
    const lines = r.stdout.split('\n').map((l) => l.trim());
    expect(lines).toContain('+++ made.txt');
    expect(lines).toContain('+one');
    expect(lines).toContain('+two');
    expect(r.stdout).toMatch(/✓ write_file made\.txt \+2 -0 \(\d+ ms\)/);
    expect(r.stdout.indexOf('+one')).toBeLessThan(r.stdout.indexOf('✓ write_file'));
    expect(r.stdout).toContain('Created.');
    // The server's "Waiting for tool call approval" waits for this client: not worth a line.
    expect(r.stderr).not.toContain('Waiting for tool call approval');
  });

  it('shows a config error once, though the server says it in the chat as well as in $/showMessage', async () => {
    const bad = join(tempDir(), 'config.json');
    writeFileSync(bad, '{\n  "welcomeMessage": "x"\n  "defaultModel": "y"\n}\n');
    llm().script([{ text: 'Hello.' }]);
    const r = await chat(['--config-file', bad, 'hi']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.output.split(`Invalid config in ${bad}`).length - 1, r.output).toBe(1);
    expect(r.stdout).toContain('Hello.');
  });

  it('shows a failed read as ✗ with the first line of the error', async () => {
    llm().script([{ toolCall: { name: 'patchbay__read_file', args: { path: 'missing.txt' } } }], [{ text: 'No such file.' }]);
    const r = await chat(['read missing.txt']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/✗ read_file: .*missing\.txt/);
    expect(r.stdout).toContain('No such file.');
  });

  it('exits non-zero with the configuration instructions when no model is configured', async () => {
    const r = await chat(['hello'], { config: '{"gateway":{"port":0}}' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No LLM is configured');
    expect(r.stderr).toContain('OPENAI_API_KEY');
    expect(r.stdout).toBe('');
    expect(llmCalls()).toHaveLength(0);
  });

  it('exits non-zero with the error text when the LLM call fails', async () => {
    llm().script({ status: 400, body: { error: { message: 'bad things happened', type: 'invalid_request_error' } } });
    const r = await chat(['hello']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Error from fake\/m1: .*bad things happened/);
  });

  it('rejects an unknown --model with the available ones', async () => {
    const r = await chat(['--model', 'nope', 'hello']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unknown model "nope"');
    expect(r.stderr).toContain('fake/m1');
    expect(llmCalls()).toHaveLength(0);
  });
});

describe('patchbay chat (interactive, stdin piped)', () => {
  it('answers each line in the same chat and quits on /exit', async () => {
    llm().script([{ text: 'First answer.' }], [{ text: 'Second answer.' }]);
    const r = await chat([], { stdin: 'hello\nand again\n/exit\nnever sent\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('> hello\nFirst answer.\n');
    expect(r.stdout).toContain('> and again\nSecond answer.\n');
    expect(r.stdout).not.toContain('never sent');
    const calls = llmCalls();
    expect(calls).toHaveLength(2);
    // Same chat: the second request carries the first exchange.
    const history = JSON.stringify(calls[1].messages);
    expect(history).toContain('hello');
    expect(history).toContain('First answer.');
  });

  it('runs /costs and shows its output', async () => {
    llm().script([{ text: 'Hi.' }, { usage: { input: 10, output: 3 } }]);
    const r = await chat([], { stdin: 'hello\n/costs\n' }); // EOF (Ctrl-D) quits
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Hi.');
    expect(r.stdout).toContain('Input tokens: 10');
    expect(r.stdout).toContain('Output tokens: 3');
    expect(r.stdout).toContain('Total tokens: 13');
    expect(llmCalls()).toHaveLength(1); // /costs is answered by the server, not the LLM
  });

  it('prints the no-model instructions and keeps going', async () => {
    const r = await chat([], { config: '{"gateway":{"port":0}}', stdin: 'hello\n/exit\n' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('No LLM is configured');
  });
});

describe('chat helpers', () => {
  it('parses flags and joins the prompt words', () => {
    expect(parseChatArgs(['--yes', '--model=openai/x', 'fix', 'the', 'bug', '--agent', 'plan'])).toEqual({
      yes: true,
      verbose: false,
      help: false,
      model: 'openai/x',
      agent: 'plan',
      prompt: 'fix the bug',
    });
    expect(parseChatArgs(['--agent', 'nope'])).toEqual({ error: '--agent must be code or plan' });
    expect(parseChatArgs(['--frobnicate'])).toEqual({ error: 'Unknown option --frobnicate' });
    expect(parseChatArgs(['--', '--yes'])).toMatchObject({ yes: false, prompt: '--yes' });
  });

  it('matches --model by full id or by the name after the provider', () => {
    expect(matchModel('m1', ['fake/m1', 'other/m2'])).toBe('fake/m1');
    expect(matchModel('other/m2', ['fake/m1', 'other/m2'])).toBe('other/m2');
    expect(matchModel('m3', ['fake/m1'])).toBeUndefined();
  });

  it('turns @mentions of existing paths into contexts and leaves the rest alone', () => {
    const ws = tempDir('pb-mentions-');
    mkdirSync(join(ws, 'src'));
    writeFileSync(join(ws, 'src/a.ts'), 'x');
    const ctx = mentionsToContexts('see @src/a.ts, @src and @nothing-here and mail@example.com, also @repoMap', ws);
    expect(ctx).toEqual([{ type: 'file', path: join(ws, 'src/a.ts') }, { type: 'directory', path: join(ws, 'src') }, { type: 'repoMap' }]);
  });

  it('never lets completion drop what was typed', () => {
    expect(completionList(['@src/a.ts', '@src/b.ts', '@lib/src.ts'], '@src')).toEqual(['@src/a.ts', '@src/b.ts']);
    expect(completionList(['@lib/readme.md'], '@rdm')).toEqual(['@lib/readme.md']);
    expect(completionList(['@a/rdm.ts', '@b/readme.md'], '@rdm')).toEqual(['@a/rdm.ts', '@b/readme.md', '@rdm']);
  });
});

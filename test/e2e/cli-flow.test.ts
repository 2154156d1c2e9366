/**
 * `patchbay chat` as a new user meets it (issue 13): MCP servers still starting when the first
 * prompt goes out, a gateway provider's surfaced and injected events, @-completion of MCP
 * resources and OpenCtx mentions, and tool calls no one can approve. The built binary, real
 * processes, a real pseudo-terminal for the REPL, the fake LLM over HTTP.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { KEY, usePty } from '../support/pty.js';
import { BIN, cliEnv, fakeChatConfig, runPatchbay, tempDir, workspace, type CliRun } from './harness.js';
import { contextQuery, mentionsToContexts, tokenFor } from '../../src/cli/chat-mentions.js';

const llm = useFakeLlm({ reset: 'afterEach' });
const spawnPty = usePty();
const fixture = (name: string) => resolve(import.meta.dirname, '../fixtures', name);

function config(extra: Record<string, unknown> = {}): string {
  return fakeChatConfig(llm().url, extra);
}

interface Run extends CliRun {
  cwd: string;
}

/** `patchbay chat ...args` with piped stdio (not a terminal) in a fresh workspace and home. */
async function chat(args: string[], cfg: string, stdin = ''): Promise<Run> {
  const cwd = workspace({}, 'pb-flow-ws-');
  const r = await runPatchbay(['chat', ...args], { home: tempDir('pb-flow-home-'), cwd, env: { PATCHBAY_CONFIG: cfg }, stdin, timeoutMs: 30_000 });
  return { ...r, cwd };
}

/** `patchbay chat` (the REPL) in a pseudo-terminal. */
function repl(cfg: string, files: Record<string, string> = {}) {
  const home = tempDir('pb-flow-home-');
  const cwd = workspace(files, 'pb-flow-ws-');
  const p = spawnPty(process.execPath, [BIN, 'chat'], { cwd, env: { ...cliEnv(home, { PATCHBAY_CONFIG: cfg }), TERM: 'xterm-256color' } });
  return { p, home, cwd };
}

function llmCalls(): any[] {
  return llm()
    .requests.filter((r) => r.path === '/v1/chat/completions')
    .map((r) => r.body);
}

const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);

describe('point 4: the first prompt waits for MCP servers still starting', () => {
  it('a one-shot prompt offers the tools of a server that takes 2 s to come up, and says it waited', async () => {
    llm().script([{ text: 'ok' }]);
    const cfg = config({ mcpServers: { notes: { command: process.execPath, args: [fixture('mcp-notes.mjs'), '--delay-ms', '2000'] } } });
    const r = await chat(['how many notes?'], cfg);
    expect(r.code, r.stderr).toBe(0);
    expect(toolNames(llmCalls()[0])).toContain('notes__note_count');
    expect(r.stderr).toContain('Waiting for MCP servers: notes');
  });

  it('names a server that failed to start, and still answers', async () => {
    llm().script([{ text: 'answered anyway' }]);
    const cfg = config({ mcpServers: { broken: { command: process.execPath, args: [fixture('mcp-notes.mjs'), '--exit', '3'] } } });
    const r = await chat(['hello'], cfg);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('answered anyway');
    // In the chat (from the server) and on stderr (from tool/serverUpdated).
    expect(r.stdout).toMatch(/MCP server broken failed to start: .+; its tools are not available/);
    expect(r.stderr).toMatch(/MCP server broken failed: /);
  });

  it('mcpStartWaitSeconds: 0 does not wait (the first request has no tools of the slow server)', async () => {
    llm().script([{ text: 'ok' }]);
    const cfg = config({ mcpStartWaitSeconds: 0, mcpServers: { notes: { command: process.execPath, args: [fixture('mcp-notes.mjs'), '--delay-ms', '2000'] } } });
    const r = await chat(['hello'], cfg);
    expect(r.code, r.stderr).toBe(0);
    expect(toolNames(llmCalls()[0])).not.toContain('notes__note_count');
    expect(r.stderr).not.toContain('Waiting for MCP servers');
  });
});

describe('point 15: a non-TTY one-shot cannot ask for approval', () => {
  it('rejects the call saying no one could be asked, names --yes and the config, and exits 3', async () => {
    llm().script([{ toolCall: { name: 'patchbay__write_file', args: { path: 'made.txt', content: 'x\n' } } }], [{ text: 'Not created.' }]);
    const r = await chat(['create made.txt'], config());
    expect(r.code, r.stderr).toBe(3);
    expect(existsSync(join(r.cwd, 'made.txt'))).toBe(false);
    expect(r.stdout).toContain('⊘ write_file rejected (no one could be asked)');
    expect(r.stdout).not.toContain('by you');
    expect(r.stderr).toContain('no one could be asked (stdin is not a terminal)');
    expect(r.stderr).toContain('--yes');
    expect(r.stderr).toContain('"toolCall": {"approval": {"allow": {"write_file": {}}}}');
  });

  it('piped into the REPL, the same rejection makes the exit code 3', async () => {
    llm().script([{ toolCall: { name: 'patchbay__write_file', args: { path: 'made.txt', content: 'x\n' } } }], [{ text: 'Not created.' }]);
    const r = await chat([], config(), 'create made.txt\n');
    expect(r.code, r.stderr).toBe(3);
    expect(existsSync(join(r.cwd, 'made.txt'))).toBe(false);
    expect(r.stdout).toContain('⊘ write_file rejected (no one could be asked)');
    expect(r.stdout).toContain('Not created.');
  });

  it('a call the config allows runs and the exit code is 0', async () => {
    llm().script([{ toolCall: { name: 'patchbay__write_file', args: { path: 'made.txt', content: 'x\n' } } }], [{ text: 'Created.' }]);
    const r = await chat(['create made.txt'], config({ toolCall: { approval: { allow: { write_file: {} } } } }));
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(r.cwd, 'made.txt'), 'utf8')).toBe('x\n');
  });
});

/** A provider speaking the gateway's core profile by hand over a real WebSocket. */
class Provider {
  readonly ws: WebSocket;
  private readonly got: any[] = [];
  private waiters: Array<() => void> = [];
  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (raw) => {
      const m = JSON.parse(String(raw));
      this.got.push(m);
      if (m.type === 'tool.call') this.send({ type: 'tool.result', id: m.id, data: `Hello, ${m.args.name}!` });
      for (const w of [...this.waiters]) w();
    });
  }
  send(m: unknown): void {
    this.ws.send(JSON.stringify(m));
  }
  next(type: string): Promise<any> {
    return new Promise((res, reject) => {
      const t = setTimeout(() => reject(new Error(`provider: no ${type}`)), 10_000);
      const check = () => {
        const m = this.got.find((x) => x.type === type);
        if (m) (clearTimeout(t), (this.waiters = this.waiters.filter((w) => w !== check)), res(m));
      };
      this.waiters.push(check);
      check();
    });
  }
}

async function gatewayFiles(home: string): Promise<{ url: string; token: string }> {
  const dir = join(home, '.patchbay', 'gateway');
  const deadline = Date.now() + 10_000;
  while (!existsSync(join(dir, 'address')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return { url: readFileSync(join(dir, 'address'), 'utf8').trim(), token: readFileSync(join(dir, 'provider-token'), 'utf8').trim() };
}

describe('point 6: gateway surface and inject events in the REPL', () => {
  it('shows a surfaced event while idle, and renders a turn an inject starts (tool call approved at the prompt)', async () => {
    const { p, home } = repl(config());
    await p.waitFor('> ');
    llm().script([{ text: 'first answer' }]);
    p.write(`hello${KEY.enter}`);
    await p.waitFor('first answer');
    await p.waitFor('> ');

    const { url, token } = await gatewayFiles(home);
    const prov = new Provider(url);
    await new Promise((r, j) => (prov.ws.once('open', r), prov.ws.once('error', j)));
    prov.send({ type: 'auth', token });
    const sessions = await prov.next('sessions');
    const greet = { name: 'greet', description: 'Greet someone', parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } };
    prov.send({ type: 'hello', name: 'greeter', protocolVersion: 2, session: sessions.active[0].id, tools: [greet] });
    await prov.next('hello.ack');

    p.write('half-typed');
    prov.send({ type: 'push', level: 'surface', event: 'build finished', stream: 'ci' });
    await p.waitFor('[ci] greeter: build finished');
    // The prompt is drawn again below the event, with what was typed.
    await p.waitFor('> half-typed');
    p.write(KEY.ctrlC); // drop the typed text
    await p.waitFor('> ');

    llm().script([{ toolCall: { id: 'g1', name: 'greeter__greet', args: { name: 'Ada' } } }], [{ text: 'Greeted Ada for you.' }]);
    prov.send({ type: 'push', level: 'inject', event: 'please greet Ada', stream: 'ci' });
    await p.waitFor('[ci] greeter: please greet Ada');
    await p.waitFor(/Run greet\? \[y\]es/);
    p.write(`y${KEY.enter}`);
    await p.waitFor(/✓ greet/);
    await p.waitFor('Greeted Ada for you.');
    await p.waitFor('> ');
    const second = llmCalls()[2];
    expect(JSON.stringify(second.messages)).toContain('Hello, Ada!');

    p.write(`/exit${KEY.enter}`);
    expect(await p.exit()).toBe(0);
    prov.ws.terminate();
  });
});

describe("review: leaving the chat while an inject's turn runs in it", () => {
  it('/new, /resume, /rewind and /fork wait for the turn (it would never be heard to end, and every later prompt would wait behind it)', async () => {
    const { p, home } = repl(config());
    await p.waitFor('> ');
    llm().script([{ text: 'first answer' }]);
    p.write(`hello${KEY.enter}`);
    await p.waitFor('first answer');
    await p.waitFor('> ');

    const { url, token } = await gatewayFiles(home);
    const prov = new Provider(url);
    await new Promise((r, j) => (prov.ws.once('open', r), prov.ws.once('error', j)));
    prov.send({ type: 'auth', token });
    const sessions = await prov.next('sessions');
    prov.send({ type: 'hello', name: 'greeter', protocolVersion: 2, session: sessions.active[0].id, tools: [] });
    await prov.next('hello.ack');

    // The inject's turn starts and its model keeps answering.
    llm().script([{ text: 'injected turn running' }, { stall: 'forever' }]);
    prov.send({ type: 'push', level: 'inject', event: 'look at this', stream: 'ci' });
    await p.waitFor('injected turn running');
    for (const command of ['/new', '/resume 1', '/rewind', '/fork']) {
      p.write(`${command}${KEY.enter}`);
      await p.waitFor(`${command.split(' ')[0]}: a turn is running in this chat; wait for it to end, or Ctrl-C to stop it`);
    }
    p.write(KEY.ctrlC);
    await p.waitFor('Stopping');
    // The REPL goes on: a prompt is answered (it waited behind the orphaned turn before).
    llm().script([{ text: 'answered after the stop' }]);
    p.write(`and now?${KEY.enter}`);
    await p.waitFor('answered after the stop');
    await p.waitFor('> ');
    p.write(`/exit${KEY.enter}`);
    expect(await p.exit()).toBe(0);
    prov.ws.terminate();
  });
});

describe('point 14: @-completion of MCP resources and OpenCtx mentions', () => {
  it('Tab completes an MCP resource as @server:name and the prompt carries its content', async () => {
    const cfg = config({ mcpServers: { notes: { command: process.execPath, args: [fixture('mcp-notes.mjs')] } } });
    const { p } = repl(cfg);
    await p.waitFor('> ');
    // A first prompt: by its end the MCP server has started (the turn waits for it).
    llm().script([{ text: 'ready' }], [{ text: 'It ships the frobnicator.' }]);
    p.write(`hi${KEY.enter}`);
    await p.waitFor('ready');
    await p.waitFor('> ');
    p.write(`what is in @notes:Rel${KEY.tab}`);
    await p.waitFor('@notes:Releasenotes');
    p.write(` ?${KEY.enter}`);
    await p.waitFor('It ships the frobnicator.');
    const sent = JSON.stringify(llmCalls()[1].messages);
    expect(sent).toContain('Version 7 ships the frobnicator.');
    p.write(`/exit${KEY.enter}`);
    expect(await p.exit()).toBe(0);
  });

  it('Tab completes an OpenCtx mention and the prompt carries its item', async () => {
    const cfg = config({ openctx: { providers: { [fixture('openctx/notes-provider.mjs')]: true } } });
    const { p } = repl(cfg);
    await p.waitFor('> ');
    llm().script([{ text: 'Alpha it is.' }]);
    p.write(`summarize @openctx:notes:Alp${KEY.tab}`);
    await p.waitFor('@openctx:notes:Alphanote');
    p.write(KEY.enter);
    await p.waitFor('Alpha it is.');
    expect(JSON.stringify(llmCalls()[0].messages)).toContain('content of Alpha note (id 1)');
    p.write(`/exit${KEY.enter}`);
    expect(await p.exit()).toBe(0);
  });
});

describe('mention tokens for MCP resources and OpenCtx mentions', () => {
  it('tokens are <server>:<name> without whitespace; the server is asked for the name part', () => {
    const res = { type: 'mcpResource', server: 'notes', name: 'Release notes', uri: 'notes://release', description: '', mimeType: 'text/plain' };
    expect(tokenFor(res, '/ws')).toBe('notes:Releasenotes');
    expect(tokenFor({ ...res, server: 'openctx:notes', name: 'Alpha note' }, '/ws')).toBe('openctx:notes:Alphanote');
    expect(contextQuery('openctx:notes:Alp')).toBe('Alp');
    expect(contextQuery('notes:')).toBe('');
    expect(contextQuery('src/a.ts')).toBe('src/a.ts');
    expect(contextQuery('https://example.com/x')).toBe('https://example.com/x');
    // A completed token resolves to the context the server offered, even with punctuation after it.
    const known = new Map([['notes:Releasenotes', res as any]]);
    expect(mentionsToContexts('what is in @notes:Releasenotes?', '/ws', known)).toEqual([res]);
  });
});

describe('issue 29: the approval question stays on screen', () => {
  it.each(['repl', 'one-shot'])('(%s) nothing erases "Run …? [y]es / [n]o / [a]lways" while it waits: the spinner stays off until it is answered', async (mode) => {
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'made.txt', content: 'x\n' } } }], [{ text: 'Made it.' }]);
    const home = tempDir('pb-flow-home-');
    const cwd = workspace({}, 'pb-flow-ws-');
    const args = mode === 'repl' ? ['chat'] : ['chat', 'make made.txt'];
    const p = spawnPty(process.execPath, [BIN, ...args], { cwd, env: { ...cliEnv(home, { PATCHBAY_CONFIG: config() }), TERM: 'xterm-256color' } });
    if (mode === 'repl') {
      await p.waitFor('> ');
      p.write(`make made.txt${KEY.enter}`);
    }
    await p.waitFor(/Run write_file\? \[y\]es/);
    // The server says "Waiting for tool call approval" right after the call: that status must not
    // be drawn over the question (a spinner redraw starts with \r and erases the line).
    const asked = p.raw.lastIndexOf('[a]lways');
    p.write(`y${KEY.enter}`);
    await p.waitFor('Made it.');
    // Up to the typed answer's echo (the y, then the Enter's \r).
    const between = p.raw.slice(asked, p.raw.indexOf('y\r', asked));
    expect(between).not.toContain('\x1b[K');
    expect(existsSync(join(cwd, 'made.txt'))).toBe(true);
    if (mode === 'repl') {
      await p.waitFor(/> $/);
      p.write(`/exit${KEY.enter}`);
    }
    expect(await p.exit()).toBe(0);
  });
});

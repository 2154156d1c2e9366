/**
 * The spec's own complete examples (specs/tap-provider-gateway.md "Complete example — Node.js"
 * and "— Python", copied unmodified to test/fixtures/providers/) against the built
 * `patchbay server`. They hard-code ws://localhost:9400 and read TAP_PROVIDER_TOKEN; tests run
 * many servers at once and never depend on a fixed port, so each example runs with that one
 * address replaced by the port the server chose (from its address file), and the token is
 * handed over the way a launcher would. An SDK provider (src/provider via
 * `patchbay-ai/provider`'s source) goes through the same steps.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProvider } from '../../src/provider/index.js';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/providers');
/** The address the examples hard-code (the spec's port). */
const SPEC_ADDRESS = 'localhost:9400';
const { llm, track } = useFakeLlmSuite();

/**
 * How the Python example runs: with a Python that has the real `websockets` (Debian's, which
 * .ci/run installs as python3-websockets, else the one on PATH); on a fresh machine without it,
 * with python3 and the stdlib-only stand-in of its client API (test/fixtures/python-websockets)
 * on PYTHONPATH, so `npm test` needs nothing beyond what the README's install gives.
 */
function pythonForExample(): { python: string; env: Record<string, string>; websockets: 'real' | 'stand-in' } | undefined {
  const candidates = ['/usr/bin/python3', 'python3'];
  const runs = (py: string, code: string, env: Record<string, string> = {}) => {
    try {
      execFileSync(py, ['-c', code], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '', ...env } });
      return true;
    } catch {
      return false;
    }
  };
  const real = candidates.find((py) => runs(py, 'import websockets'));
  if (real) return { python: real, env: {}, websockets: 'real' };
  const python = candidates.find((py) => runs(py, 'import asyncio'));
  return python ? { python, env: { PYTHONPATH: STAND_IN }, websockets: 'stand-in' } : undefined;
}
const STAND_IN = resolve(import.meta.dirname, '../fixtures/python-websockets');
const PYTHON = pythonForExample();

/** A server on a free port with one chat open (the examples bind to the first session). */
async function boot(): Promise<{ p: EcaProc; chatId: string; token: string; home: string; port: number }> {
  const home = tempDir();
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } } }) }));
  await p.initialize(workspace());
  await p.waitFor((m) => m.method === 'config/updated');
  const tokenFile = join(home, '.patchbay', 'gateway', 'provider-token');
  const deadline = Date.now() + 10_000;
  while (!existsSync(tokenFile) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const address = readFileSync(join(home, '.patchbay', 'gateway', 'address'), 'utf8').trim();
  const port = Number(/^ws:\/\/127\.0\.0\.1:(\d+)$/.exec(address)?.[1]);
  expect(port).toBeGreaterThan(0);
  llm().script([{ text: 'hello' }]);
  const chatId = (await p.request('chat/prompt', { message: 'start' })).result.chatId;
  await p.turnDone(chatId);
  return { p, chatId, token: readFileSync(tokenFile, 'utf8').trim(), home, port };
}

/** An example's source with its one hard-coded address pointed at `port`. */
function exampleSource(file: string, port: number): string {
  const src = readFileSync(join(FIXTURES, file), 'utf8');
  expect(src.split(SPEC_ADDRESS)).toHaveLength(2);
  return src.replace(SPEC_ADDRESS, `localhost:${port}`);
}

class Example {
  readonly proc: ChildProcess;
  out = '';
  readonly exited: Promise<number | null>;
  constructor(command: string, args: string[], token: string, env: Record<string, string> = {}) {
    // No .pyc files written beside the fixtures: tests write only to temp dirs.
    const base = { PATH: process.env.PATH ?? '', TAP_PROVIDER_TOKEN: token, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' };
    // cwd: the fixtures folder, so the Node example's `import "ws"` resolves as it would beside the file.
    this.proc = spawn(command, args, { cwd: FIXTURES, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout!.on('data', (d: Buffer) => (this.out += d.toString()));
    this.proc.stderr!.on('data', (d: Buffer) => (this.out += d.toString()));
    this.exited = new Promise((r) => this.proc.once('exit', (code) => r(code)));
  }
  async printed(re: RegExp, ms = 15_000): Promise<RegExpMatchArray> {
    const t0 = Date.now();
    for (;;) {
      const m = re.exec(this.out);
      if (m) return m;
      if (Date.now() - t0 > ms) throw new Error(`example did not print ${re}; output:\n${this.out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  stop(): void {
    if (this.proc.exitCode === null) this.proc.kill('SIGKILL');
  }
}

/** The LLM calls `example-provider__greet`; the example's answer reaches the chat. */
async function greetThroughChat(p: EcaProc, chatId: string, name: string, nth: number): Promise<void> {
  llm().script([{ toolCall: { id: `g-${name}`, name: 'example-provider__greet', args: { name } } }], [{ text: 'greeted' }]);
  await p.request('chat/prompt', { chatId, message: `greet ${name}` });
  await p.turnDone(chatId, nth);
  const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled' && c.content.id === `g-${name}`)!.content;
  expect(called).toMatchObject({ origin: 'provider', server: 'example-provider', name: 'greet', error: false });
  expect(called.outputs[0].text).toBe(`Hello, ${name}!`);
}

const serverUpdated = (name: string, status: string) => (m: { method?: string; params?: any }) => m.method === 'tool/serverUpdated' && m.params?.name === name && m.params?.status === status;

/** The spec's Python example against a fresh server: registers, greets through a chat, exits on shutdown.pending. */
async function runPythonExample(python: string, flags: string[], env: Record<string, string>, name: string): Promise<void> {
  const { p, chatId, token, port } = await boot();
  const ex = new Example(python, [...flags, '-c', exampleSource('example_provider.py', port)], token, env);
  try {
    await ex.printed(/Registered as p-[0-9a-f]+/);
    await p.waitFor(serverUpdated('example-provider', 'running'));
    await greetThroughChat(p, chatId, name, 2);
    await p.request('chat/delete', { chatId });
    // The Python example returns from connect() on shutdown.pending: the process ends.
    expect(await Promise.race([ex.exited, new Promise((r) => setTimeout(() => r('still running'), 8000))])).toBe(0);
    await p.waitFor(serverUpdated('example-provider', 'stopped'));
    expect(ex.out).not.toMatch(/Traceback|Error \[/);
  } finally {
    ex.stop();
  }
}

describe("the spec's example providers against patchbay server", () => {
  it('Node.js example: registers, answers greet, says goodbye on shutdown.pending', async () => {
    const { p, chatId, token, port } = await boot();
    const ex = new Example(process.execPath, ['--input-type=module', '-e', exampleSource('example-provider.mjs', port)], token);
    try {
      const [, providerId] = await ex.printed(/Registered as (p-[0-9a-f]+)/);
      const up = await p.waitFor(serverUpdated('example-provider', 'running'));
      expect(up.params.tools.map((t: { name: string }) => t.name)).toEqual(['example-provider__greet']);
      expect(providerId).toMatch(/^p-/);
      await greetThroughChat(p, chatId, 'Alice', 2);
      await p.request('chat/delete', { chatId });
      // goodbye + close from the example: the provider leaves well before the 10 s deadline
      const t0 = Date.now();
      await p.waitFor(serverUpdated('example-provider', 'stopped'));
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(ex.out).not.toMatch(/Error \[/);
    } finally {
      ex.stop();
    }
  });

  // .ci/run installs Debian's python3-websockets; elsewhere the stand-in runs. No python3 is a failure, not a skip.
  it(`Python example: registers, answers greet, exits after shutdown.pending (websockets: ${PYTHON?.websockets ?? 'no python3'})`, async () => {
    expect(PYTHON, 'python3 on PATH').toBeDefined();
    await runPythonExample(PYTHON!.python, [], PYTHON!.env, 'Bob');
  });

  // A fresh Debian/Ubuntu machine: python3 without websockets. `-S` leaves out site-packages (where
  // python3-websockets lives), so this is that machine even where the package is installed.
  it('Python example on a python3 without websockets: runs unchanged with the stdlib stand-in', async () => {
    expect(PYTHON, 'python3 on PATH').toBeDefined();
    const env = { PATH: process.env.PATH ?? '', PYTHONPATH: STAND_IN };
    expect(() => execFileSync(PYTHON!.python, ['-S', '-c', 'import websockets'], { stdio: 'ignore', env: { PATH: env.PATH } })).toThrow();
    const where = execFileSync(PYTHON!.python, ['-S', '-c', 'import websockets; print(websockets.__file__)'], { encoding: 'utf8', env });
    expect(where.trim()).toBe(join(STAND_IN, 'websockets', '__init__.py'));
    await runPythonExample(PYTHON!.python, ['-S'], { PYTHONPATH: STAND_IN }, 'Dora');
  });

  it('an SDK provider finds the gateway and the token through the server’s files alone', async () => {
    const { p, chatId, home } = await boot();
    const provider = createProvider({
      name: 'example-provider',
      env: { PATCHBAY_HOME: join(home, '.patchbay') },
      tools: [
        {
          name: 'greet',
          description: 'Greet someone by name',
          parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
          handler: ({ name }: { name: string }) => `Hello, ${name}!`,
        },
      ],
    });
    const shutdown: string[] = [];
    const errors: string[] = [];
    provider.on('lifecycle', (s) => shutdown.push(s));
    provider.on('error', (e) => errors.push(e.message)); // after the chat is gone: NO_SESSION while it waits for another
    try {
      await expect(provider.connect()).resolves.toMatchObject({ sessionId: chatId });
      await p.waitFor(serverUpdated('example-provider', 'running'));
      await greetThroughChat(p, chatId, 'Carol', 2);
      await p.request('chat/delete', { chatId });
      await p.waitFor(serverUpdated('example-provider', 'stopped'));
      expect(shutdown).toContain('shutdown.pending');
    } finally {
      await provider.close();
    }
  });
});

/**
 * server/acp-terminal.ts `runTerminal` against a client whose terminals are real processes
 * (test/support/process-terminal-client.ts). It follows ACP's terminal docs
 * (agentclientprotocol.com/protocol/terminals, "Implementing timeouts": create, wait_for_exit
 * raced with a timer, kill, output, release) and the SDK's `TerminalHandle` (kill keeps the
 * terminal, release frees it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runTerminal, sdkTerminalClient, type TerminalClient, type TerminalHandleLike } from '../../src/server/acp/terminal.js';
import type { TerminalRunRequest } from '../../src/shapes/tool.js';
import { isAlive } from '../../src/util/pid.js';
import { ProcessTerminalClient, type Misbehaviour } from '../support/process-terminal-client.js';
import { removeDir, tempDir } from './tools-helpers.js';

const clients: ProcessTerminalClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.killAll();
  await Promise.all(dirs.splice(0).map(removeDir));
});

async function setup(misbehave: Misbehaviour = {}) {
  const dir = await tempDir('pb-acp-term-');
  dirs.push(dir);
  const client = new ProcessTerminalClient(misbehave);
  clients.push(client);
  return { dir, client };
}

function request(line: string, cwd: string, extra: Partial<TerminalRunRequest> = {}): TerminalRunRequest & { sessionId: string } {
  return {
    sessionId: 'sess-1',
    chatId: 'chat-1',
    toolCallId: 'call-1',
    signal: new AbortController().signal,
    command: '/bin/sh',
    args: ['-c', line],
    cwd,
    outputByteLimit: 10_000,
    timeoutMs: 30_000,
    ...extra,
  };
}

/** A client that answers at once: terminal t-1, exit 7, output "x". */
function scripted(): TerminalClient {
  return {
    createTerminal: async () => ({ id: 't-1' }),
    waitForExit: async () => ({ exitCode: 7 }),
    output: async () => ({ output: 'x', truncated: false, exitStatus: { exitCode: 7 } }),
    kill: async () => ({}),
    release: async () => ({}),
  };
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The pid a command wrote to `file` once it is running. */
async function pidIn(file: string): Promise<number> {
  await until(() => existsSync(file) && readFileSync(file, 'utf8').trim() !== '', 'the command to start');
  return Number(readFileSync(file, 'utf8').trim());
}

describe.skipIf(process.platform === 'win32')('runTerminal (ACP terminal/*)', () => {
  it('creates, waits for exit, reads the output, then releases; the create request carries the session, cwd, limit and env', async () => {
    const { dir, client } = await setup();
    const shown: string[] = [];
    const r = await runTerminal(client, request('pwd; echo "$GREETING"; echo err >&2; exit 3', dir, { env: { GREETING: 'hello' } }), (id) => shown.push(id));
    expect(r).toEqual({ output: `${dir}\nhello\nerr\n`, truncated: false, exitCode: 3, signal: null, timedOut: false, aborted: false });
    expect(client.methods()).toEqual(['create', 'waitForExit', 'output', 'release']);
    expect(client.calls[0].params).toEqual({
      sessionId: 'sess-1',
      command: '/bin/sh',
      args: ['-c', 'pwd; echo "$GREETING"; echo err >&2; exit 3'],
      cwd: dir,
      outputByteLimit: 10_000,
      env: [{ name: 'GREETING', value: 'hello' }],
    });
    // The façade is told the terminal's id (to show it in the tool call) before the command ends.
    expect(shown).toEqual(['term-1']);
    expect(client.calls.slice(1).every((c) => c.terminalId === 'term-1')).toBe(true);
    expect(client.open()).toEqual([]);
  });

  it('a command killed by a signal reports the signal and no exit code', async () => {
    const { dir, client } = await setup();
    const r = await runTerminal(client, request('kill -TERM $$', dir));
    expect(r).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: false, aborted: false });
  });

  it('an abort kills the command, then reads what it printed and releases the terminal', async () => {
    const { dir, client } = await setup();
    const stop = new AbortController();
    const pidFile = join(dir, 'pid');
    const running = runTerminal(client, request(`echo started; sleep 30 & echo $! > ${pidFile}; wait`, dir, { signal: stop.signal }));
    const sleeper = await pidIn(pidFile);
    stop.abort();
    const r = await running;
    expect(r).toMatchObject({ output: 'started\n', aborted: true, timedOut: false, signal: 'SIGKILL' });
    expect(client.methods()).toEqual(['create', 'waitForExit', 'kill', 'output', 'release']);
    await until(() => !isAlive(sleeper), 'the command to be killed');
    expect(client.open()).toEqual([]);
  });

  it('at the timeout the command is killed and the result says timedOut', async () => {
    const { dir, client } = await setup();
    const pidFile = join(dir, 'pid');
    const r = await runTerminal(client, request(`sleep 30 & echo $! > ${pidFile}; wait`, dir, { timeoutMs: 300 }));
    expect(r).toMatchObject({ timedOut: true, aborted: false, exitCode: null });
    expect(client.methods()).toEqual(['create', 'waitForExit', 'kill', 'output', 'release']);
    await until(() => !isAlive(Number(readFileSync(pidFile, 'utf8'))), 'the command to be killed');
  });

  it('output over the limit keeps its end within the limit and says truncated', async () => {
    const { dir, client } = await setup();
    const r = await runTerminal(client, request('seq 1 2000', dir, { outputByteLimit: 100 }));
    expect(r.truncated).toBe(true);
    expect(Buffer.byteLength(r.output)).toBeLessThanOrEqual(100);
    expect(r.output.endsWith('1999\n2000\n')).toBe(true);
    expect(r.exitCode).toBe(0);
  });

  it('a client that ignores the limit is held to it here, cut at a character boundary', async () => {
    const { dir, client } = await setup({ ignoreLimit: true });
    // 'é' is two bytes: a cut at 101 bytes from the end falls inside one, and must not split it.
    const r = await runTerminal(client, request("printf 'é%.0s' $(seq 1 500); printf 'x'", dir, { outputByteLimit: 102 }));
    expect(r.truncated).toBe(true);
    expect(r.output).toBe(`${'é'.repeat(50)}x`);
  });

  it('a terminal that cannot be created is an error, and nothing else is asked', async () => {
    const { dir, client } = await setup({ createError: 'terminals are disabled' });
    const r = await runTerminal(client, request('echo hi', dir));
    expect(r.error).toBe('the editor could not create a terminal: terminals are disabled');
    expect(client.methods()).toEqual(['create']);
  });

  it('the terminal is released even when its output cannot be read', async () => {
    const { dir, client } = await setup({ outputError: 'gone' });
    const r = await runTerminal(client, request('echo hi', dir));
    expect(r.error).toBe("the editor's terminal output could not be read: gone");
    expect(client.methods()).toEqual(['create', 'waitForExit', 'output', 'release']);
    expect(client.open()).toEqual([]);
  });

  it('a stop while the editor is still creating the terminal returns at once; the terminal is released when it arrives', async () => {
    const { dir, client } = await setup({ holdCreate: true });
    const stop = new AbortController();
    const running = runTerminal(client, request(`touch ${join(dir, 'ran')}; sleep 30`, dir, { signal: stop.signal }));
    await until(() => client.calls.length === 1, 'the create request');
    stop.abort();
    expect(await running).toMatchObject({ aborted: true, output: '' });
    client.answerCreate();
    await until(() => client.methods().includes('release'), 'the late terminal to be released');
    expect(client.open()).toEqual([]);
  });

  it('an abort before the call starts creates nothing', async () => {
    const { dir, client } = await setup();
    const stop = new AbortController();
    stop.abort();
    expect(await runTerminal(client, request('echo hi', dir, { signal: stop.signal }))).toMatchObject({ aborted: true });
    expect(client.calls).toEqual([]);
  });

  it('an editor that stops answering after a kill does not hold the call forever', { timeout: 30_000 }, async () => {
    const { dir, client } = await setup({ silentAfterExit: true });
    const r = await runTerminal(client, request('sleep 30', dir, { timeoutMs: 200 }));
    expect(r.timedOut).toBe(true);
    expect(client.methods()).toEqual(['create', 'waitForExit', 'kill', 'output', 'release']);
  });

  it('a create answer without a terminal id is an error; an empty wait_for_exit answer is filled in from the output', async () => {
    const noId = { ...scripted(), createTerminal: async () => ({}) as { id: string } };
    expect((await runTerminal(noId, request('true', '/'))).error).toBe('the editor answered terminal/create without a terminal id');
    const quiet = { ...scripted(), waitForExit: async () => ({}) };
    expect(await runTerminal(quiet, request('true', '/'))).toMatchObject({ exitCode: 7, signal: null, output: 'x' });
  });

  it('sdkTerminalClient drives the SDK handle of each terminal it created', async () => {
    const seen: string[] = [];
    const handle = (id: string): TerminalHandleLike => ({
      id,
      currentOutput: async () => (seen.push(`output ${id}`), { output: 'done\n', truncated: false, exitStatus: { exitCode: 0 } }),
      waitForExit: async () => (seen.push(`wait ${id}`), { exitCode: 0 }),
      kill: async () => seen.push(`kill ${id}`),
      release: async () => seen.push(`release ${id}`),
    });
    const client = sdkTerminalClient(async (params) => (seen.push(`create ${params.sessionId}`), handle('t-9')));
    const r = await runTerminal(client, request('true', '/'));
    expect(r).toMatchObject({ output: 'done\n', exitCode: 0 });
    expect(seen).toEqual(['create sess-1', 'wait t-9', 'output t-9', 'release t-9']);
    // Released: the id is no longer known.
    await expect(client.output('t-9')).rejects.toThrow('unknown terminal t-9');
  });
});

/**
 * server/acp-terminal.ts over the official ACP SDK (@agentclientprotocol/sdk): an agent app whose
 * context's `createTerminal` feeds `sdkTerminalClient`, paired with a client app that answers
 * `terminal/create|wait_for_exit|kill|output|release` with real processes. The SDK validates
 * each request and answer against ACP v1's schema on both sides, so this shows the helper's
 * requests are what an ACP client (Zed, acpx) accepts. Follows the SDK's `AgentContext.createTerminal`
 * and `TerminalHandle` (dist/v1/stable/acp.d.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { agent, client, methods } from '@agentclientprotocol/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { runTerminal, sdkTerminalClient } from '../../src/server/acp/terminal.js';
import type { TerminalRunResult } from '../../src/shapes/tool.js';
import { isAlive } from '../../src/util/pid.js';
import { ProcessTerminalClient } from '../support/process-terminal-client.js';
import { removeDir, tempDir } from './tools-helpers.js';

const terminals: ProcessTerminalClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const t of terminals.splice(0)) t.killAll();
  await Promise.all(dirs.splice(0).map(removeDir));
});

/** A client app whose terminals are processes; it records the wire methods it was asked. */
function editorApp(procs: ProcessTerminalClient, wire: string[]) {
  return client({ name: 'test-editor' })
    .onRequest(methods.client.terminal.create, async ({ params }) => {
      wire.push(`create ${params.sessionId}`);
      return { terminalId: (await procs.createTerminal(params)).id };
    })
    .onRequest(methods.client.terminal.waitForExit, async ({ params }) => (wire.push('wait_for_exit'), procs.waitForExit(params.terminalId)))
    .onRequest(methods.client.terminal.kill, async ({ params }) => (wire.push('kill'), await procs.kill(params.terminalId), {}))
    .onRequest(methods.client.terminal.output, async ({ params }) => (wire.push('output'), procs.output(params.terminalId)))
    .onRequest(methods.client.terminal.release, async ({ params }) => (wire.push('release'), await procs.release(params.terminalId), {}));
}

async function setup() {
  const dir = await tempDir('pb-acp-sdk-');
  dirs.push(dir);
  const procs = new ProcessTerminalClient();
  terminals.push(procs);
  const wire: string[] = [];
  return { dir, procs, wire, editor: editorApp(procs, wire) };
}

describe.skipIf(process.platform === 'win32')('runTerminal over the ACP SDK', () => {
  it('runs a command in the client terminal: create, wait_for_exit, output, release, with env as name/value pairs', async () => {
    const { dir, procs, wire, editor } = await setup();
    const shown: string[] = [];
    const r = await agent({ name: 'patchbay-test' }).connectWith(editor, (ctx) =>
      runTerminal(
        sdkTerminalClient((p) => ctx.createTerminal(p)),
        {
          sessionId: 'sess-1',
          chatId: 'c',
          signal: new AbortController().signal,
          command: '/bin/sh',
          args: ['-c', 'echo "$WHO"; exit 2'],
          cwd: dir,
          env: { WHO: 'acp' },
          outputByteLimit: 1000,
          timeoutMs: 30_000,
        },
        (id) => shown.push(id),
      ),
    );
    expect(r).toEqual({ output: 'acp\n', truncated: false, exitCode: 2, signal: null, timedOut: false, aborted: false });
    expect(wire).toEqual(['create sess-1', 'wait_for_exit', 'output', 'release']);
    expect(procs.calls[0].params).toMatchObject({ env: [{ name: 'WHO', value: 'acp' }], cwd: dir, outputByteLimit: 1000 });
    expect(shown).toEqual(['term-1']);
    expect(procs.open()).toEqual([]);
  });

  it('an abort kills and releases the terminal over the wire', async () => {
    const { dir, procs, wire, editor } = await setup();
    const stop = new AbortController();
    const pidFile = join(dir, 'pid');
    const r: TerminalRunResult = await agent({ name: 'patchbay-test' }).connectWith(editor, async (ctx) => {
      const running = runTerminal(
        sdkTerminalClient((p) => ctx.createTerminal(p)),
        {
          sessionId: 's',
          chatId: 'c',
          signal: stop.signal,
          command: '/bin/sh',
          args: ['-c', `sleep 30 & echo $! > ${pidFile}; wait`],
          cwd: dir,
          outputByteLimit: 1000,
          timeoutMs: 30_000,
        },
      );
      for (const end = Date.now() + 10_000; !(existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim());) {
        if (Date.now() > end) throw new Error('the command did not start');
        await new Promise((res) => setTimeout(res, 25));
      }
      stop.abort();
      return running;
    });
    expect(r).toMatchObject({ aborted: true, timedOut: false });
    expect(wire).toEqual(['create s', 'wait_for_exit', 'kill', 'output', 'release']);
    const sleeper = Number(readFileSync(pidFile, 'utf8'));
    for (const end = Date.now() + 10_000; isAlive(sleeper) && Date.now() < end;) await new Promise((res) => setTimeout(res, 25));
    expect(isAlive(sleeper)).toBe(false);
    expect(procs.open()).toEqual([]);
  });

  it('a client that refuses terminal/create gives an error result', async () => {
    const dir = await tempDir('pb-acp-sdk-');
    dirs.push(dir);
    const refusing = client({ name: 'no-terminals' }).onRequest(methods.client.terminal.create, () => {
      throw new Error('terminals are off');
    });
    const r = await agent({ name: 'patchbay-test' }).connectWith(refusing, (ctx) =>
      runTerminal(
        sdkTerminalClient((p) => ctx.createTerminal(p)),
        { sessionId: 's', chatId: 'c', signal: new AbortController().signal, command: '/bin/sh', args: ['-c', 'true'], cwd: dir, outputByteLimit: 10, timeoutMs: 5000 },
      ),
    );
    expect(r.error).toMatch(/^the editor could not create a terminal: /);
  });
});

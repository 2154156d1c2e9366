/**
 * `shell_command` when the front end offers the editor's terminal (`EditorBridge.runInTerminal`,
 * ACP `terminal/*`): the test bridge records each request and runs it through
 * server/acp-terminal.ts over a client whose terminals are real processes, as an ACP client's
 * (Zed, acpx) would. The result the model reads has the local run's format
 * (test/unit/tools-shell.test.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobRegistry } from '../../src/core/jobs/index.js';
import { shellCommandTool } from '../../src/core/tools/native/index.js';
import { runTerminal } from '../../src/server/acp/terminal.js';
import type { EditorBridge, TerminalRunRequest, TerminalRunResult } from '../../src/shapes/tool.js';
import { isAlive } from '../../src/util/pid.js';
import { ProcessTerminalClient, type Misbehaviour } from '../support/process-terminal-client.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

const clients: ProcessTerminalClient[] = [];
const dirs: string[] = [];
const registries: JobRegistry[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.killAll();
  await Promise.all(registries.splice(0).map((r) => r.dispose()));
  await Promise.all(dirs.splice(0).map(removeDir));
});

/** A bridge that records what it was asked and runs it in a process-backed terminal, with a marker in its environment. */
async function setup(misbehave: Misbehaviour = {}) {
  const ws = await tempDir('pb-shell-term-');
  dirs.push(ws);
  const client = new ProcessTerminalClient(misbehave);
  clients.push(client);
  const asked: TerminalRunRequest[] = [];
  const editor: EditorBridge = {
    runInTerminal: (req) => {
      asked.push(req);
      return runTerminal(client, { ...req, env: { RAN_IN: 'editor-terminal' }, sessionId: 's-1' });
    },
  };
  return { ws, client, asked, editor };
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function pidIn(file: string): Promise<number> {
  await until(() => existsSync(file) && readFileSync(file, 'utf8').trim() !== '', 'the command to start');
  return Number(readFileSync(file, 'utf8').trim());
}

describe.skipIf(process.platform === 'win32')("shell_command in the editor's terminal", () => {
  it('runs the line as /bin/sh -c in the working directory, through the bridge; the model reads output and exit code', async () => {
    const { ws, asked, editor } = await setup();
    const ctx = { ...context([ws], { editor }), toolCallId: 'call-7' };
    const r = await shellCommandTool({ maxOutputChars: 5000 }).call({ command: 'pwd; echo "$RAN_IN"; echo err >&2' }, ctx);
    expect(text(r)).toBe(`${ws}\neditor-terminal\nerr\n\nExit code: 0`);
    expect(r.error).toBe(false);
    expect(asked).toHaveLength(1);
    const { signal, ...rest } = asked[0];
    expect(rest).toEqual({
      chatId: 'test-chat',
      toolCallId: 'call-7',
      command: '/bin/sh',
      args: ['-c', 'pwd; echo "$RAN_IN"; echo err >&2'],
      cwd: ws,
      // The agent's variables (core/tool-calls/agent-env.ts), added by the editor to its terminal's environment.
      env: { ECA_AGENT: '1', ECA_CHAT_ID: 'test-chat', PATCHBAY_CHAT_ID: 'test-chat' },
      outputByteLimit: 5000,
      timeoutMs: 60_000,
    });
    expect(signal).toBe(ctx.signal);
  });

  it('a non-zero exit code is an error result; a working_directory is resolved against the first root', async () => {
    const { ws, asked, editor } = await setup();
    await mkdir(join(ws, 'sub'));
    const r = await shellCommandTool().call({ command: 'echo failing; exit 4', working_directory: 'sub', timeout: 5 }, context([ws], { editor }));
    expect(r.error).toBe(true);
    expect(text(r)).toBe('failing\n\nExit code: 4');
    expect(asked[0]).toMatchObject({ cwd: join(ws, 'sub'), timeoutMs: 5000 });
  });

  it('a stop kills the command in the terminal and releases it', async () => {
    const { ws, client, editor } = await setup();
    const stop = new AbortController();
    const pidFile = join(ws, 'pid');
    const call = shellCommandTool().call({ command: `echo started; sleep 30 & echo $! > ${pidFile}; wait` }, context([ws], { editor, signal: stop.signal }));
    const sleeper = await pidIn(pidFile);
    stop.abort();
    const r = await call;
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/^started\n\n.*cancelled; the command and its processes were killed/);
    await until(() => !isAlive(sleeper), 'the command to be killed');
    expect(client.methods()).toEqual(['create', 'waitForExit', 'kill', 'output', 'release']);
  });

  it('the timeout kills it and says so, as the local run does', async () => {
    const { ws, asked, editor } = await setup();
    const pidFile = join(ws, 'pid');
    const r = await shellCommandTool().call({ command: `sleep 30 & echo $! > ${pidFile}; wait`, timeout: 0.5 }, context([ws], { editor }));
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/timed out after 0.5 s; the command and its processes were killed/);
    expect(asked[0].timeoutMs).toBe(500);
    await until(() => !isAlive(Number(readFileSync(pidFile, 'utf8'))), 'the command to be killed');
  });

  it('output over the budget keeps its end, with a notice saying it was cut', async () => {
    const { ws, asked, editor } = await setup();
    const r = await shellCommandTool({ maxOutputChars: 200 }).call({ command: 'seq 1 3000' }, context([ws], { editor }));
    expect(asked[0].outputByteLimit).toBe(200);
    const t = text(r);
    expect(t).toContain("output truncated: the editor's terminal kept only the last");
    expect(t.endsWith('2999\n3000\n\nExit code: 0')).toBe(true);
    expect(t).not.toContain('\n1\n2\n');
  });

  it('a bridge that ignores the budget is held to it', async () => {
    const ws = await tempDir('pb-shell-term-');
    dirs.push(ws);
    const big: TerminalRunResult = { output: 'a'.repeat(1000) + 'END', truncated: false, exitCode: 0, signal: null, timedOut: false, aborted: false };
    const r = await shellCommandTool({ maxOutputChars: 100 }).call({ command: 'true' }, context([ws], { editor: { runInTerminal: async () => big } }));
    const t = text(r);
    expect(t).toContain('kept only the last 100 characters');
    expect(t.endsWith(`${'a'.repeat(97)}END\n\nExit code: 0`)).toBe(true);
  });

  it('a terminal that cannot be created fails the call clearly; nothing runs locally instead', async () => {
    const { ws, editor } = await setup({ createError: 'no terminal here' });
    const r = await shellCommandTool().call({ command: `touch ${join(ws, 'ran')}` }, context([ws], { editor }));
    expect(r.error).toBe(true);
    expect(text(r)).toBe("Could not run the command in the editor's terminal: the editor could not create a terminal: no terminal here");
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('a bridge that throws is reported the same way', async () => {
    const ws = await tempDir('pb-shell-term-');
    dirs.push(ws);
    const editor: EditorBridge = { runInTerminal: () => Promise.reject(new Error('connection closed')) };
    const r = await shellCommandTool().call({ command: `touch ${join(ws, 'ran')}` }, context([ws], { editor }));
    expect(text(r)).toBe("Could not run the command in the editor's terminal: connection closed");
    expect(existsSync(join(ws, 'ran'))).toBe(false);
  });

  it('background: true still runs locally as a job; the editor is not asked', async () => {
    const { ws, asked, editor } = await setup();
    const jobs = new JobRegistry({ graceMs: 200 });
    registries.push(jobs);
    const r = await shellCommandTool({ jobs }).call({ command: 'echo "[$RAN_IN]"', background: true }, context([ws], { editor }));
    expect(asked).toEqual([]);
    // Not the editor's environment: the job is patchbay's own process.
    expect(text(r)).toContain('Output:\n[]');
    expect(jobs.list().map((j) => j.label)).toEqual(['echo "[$RAN_IN]"']);
  });

  it('a bad working_directory is refused before the editor is asked', async () => {
    const { ws, asked, editor } = await setup();
    const r = await shellCommandTool().call({ command: 'true', working_directory: 'nope' }, context([ws], { editor }));
    expect(r.error).toBe(true);
    expect(asked).toEqual([]);
  });
});

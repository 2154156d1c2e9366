/**
 * A front end that offers its terminal (`FrontEnd.terminal`, as the ACP façade will from a client's
 * `terminal` capability): a real Workspace (config, SQLite store, approvals, the fake LLM server)
 * whose model calls shell_command. The ECA server cannot offer a terminal, so the Workspace is
 * built directly. The terminal is server/acp-terminal.ts `runTerminal` over a client whose
 * terminals are real processes. What it follows: ACP's `terminal/*` (agentclientprotocol.com
 * /protocol/terminals) for the bridge, and ECA `src/eca/features/tools/shell.clj`
 * (`shell-command` with `require-approval-fn`) for what still decides before a call runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../src/core/events.js';
import { Workspace } from '../../src/runtime/workspace.js';
import { runTerminal } from '../../src/server/acp/terminal.js';
import type { TerminalRunRequest } from '../../src/shapes/tool.js';
import { isAlive } from '../../src/util/pid.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { ProcessTerminalClient } from '../support/process-terminal-client.js';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';

const llm = useFakeLlm();
const scratch = useTempDirs();
const open: Array<{ ws: Workspace; client: ProcessTerminalClient }> = [];
afterEach(async () => {
  for (const { ws, client } of open.splice(0)) {
    await ws.dispose();
    client.killAll();
  }
});

async function boot(approval: Record<string, unknown>) {
  const root = scratch(workspace({ 'a.txt': 'a\n' }));
  const home = scratch(tempDir());
  const client = new ProcessTerminalClient();
  const asked: TerminalRunRequest[] = [];
  const events: Array<{ chatId: string; e: ChatEvent }> = [];
  let onEvent: (e: ChatEvent, chatId: string) => void = () => {};
  // Unsandboxed: these check the terminal's own argv and host pids (a sandboxed terminal command: acp-client-caps.test.ts).
  const config = { ...fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval }, sandbox: { enabled: false } }), gateway: { enabled: false }, openctx: { host: { enabled: false } } };
  const ws = await Workspace.create({
    roots: [root],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      PATCHBAY_HOME: join(home, '.patchbay'),
      PATCHBAY_LOCAL_MODEL: 'off',
      PATCHBAY_CONFIG: JSON.stringify(config),
    },
    logLevel: 'error',
    frontEnd: {
      canAsk: true,
      canShowDiffs: true,
      terminal: (req) => {
        asked.push(req);
        return runTerminal(client, { ...req, env: { RAN_IN: 'editor-terminal' }, sessionId: 'session-1' });
      },
    },
    events: {
      event(chatId, e) {
        events.push({ chatId, e });
        onEvent(e, chatId);
      },
      opened() {},
      cleared() {},
      deleted() {},
      showMessage() {},
    },
  });
  open.push({ ws, client });
  await ws.modelsReady;
  return { ws, root, client, asked, events, react: (f: typeof onEvent) => (onEvent = f) };
}

const call = (id: string, args: Record<string, unknown>) => [{ toolCall: { id, name: 'patchbay__shell_command', args } }];

/** The tool result the model was sent for call `id`. */
function resultSent(id: string): string {
  for (const r of llm().requests) for (const m of r.body?.messages ?? []) if (m.role === 'tool' && m.tool_call_id === id) return String(m.content);
  throw new Error(`no result sent for ${id}`);
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(process.platform === 'win32')("shell_command in the front end's terminal, in a real workspace", () => {
  it('approval rules and the working-directory rule still decide; approved calls run in the terminal and the model reads their results', { timeout: 30_000 }, async () => {
    const { ws, root, asked, events, react } = await boot({ allow: { shell_command: { argsMatchers: { command: ['echo .*'] } } } });
    const outside = scratch(tempDir('pb-outside-'));
    llm().script(
      call('s0', { command: 'echo "$RAN_IN"' }),
      call('s1', { command: 'touch rejected.txt' }),
      call('s2', { command: 'touch approved.txt; echo made' }),
      call('s3', { command: 'echo "$RAN_IN" && pwd', working_directory: outside }),
      [{ text: 'done' }],
    );
    // The user: rejects s1, approves s2 and s3 (each asked for; s0 is allowed by the rule).
    const needed: string[] = [];
    react((e, chatId) => {
      if (e.type !== 'toolCall' || e.state !== 'announced' || !e.needsApproval) return;
      needed.push(e.id);
      if (e.id === 's1') ws.chats.reject(chatId, e.id);
      else ws.chats.approve(chatId, e.id);
    });
    const turn = ws.chats.prompt({ message: 'run them' });
    expect(await turn.done).toMatchObject({ stopReason: 'end_turn' });

    expect(needed).toEqual(['s1', 's2', 's3']);
    expect(asked.map((a) => [a.toolCallId, a.chatId, a.command, a.args, a.cwd])).toEqual([
      ['s0', turn.chatId, '/bin/sh', ['-c', 'echo "$RAN_IN"'], root],
      ['s2', turn.chatId, '/bin/sh', ['-c', 'touch approved.txt; echo made'], root],
      ['s3', turn.chatId, '/bin/sh', ['-c', 'echo "$RAN_IN" && pwd'], outside],
    ]);
    expect(resultSent('s0')).toBe('editor-terminal\n\nExit code: 0');
    expect(resultSent('s2')).toBe('made\n\nExit code: 0');
    expect(resultSent('s3')).toBe(`editor-terminal\n${outside}\n\nExit code: 0`);
    expect(existsSync(join(root, 'approved.txt'))).toBe(true);
    expect(existsSync(join(root, 'rejected.txt'))).toBe(false);
    const done = events.filter(({ e }) => e.type === 'toolCall' && e.state === 'done').map(({ e }) => (e.type === 'toolCall' ? e.id : ''));
    expect(done).toEqual(['s0', 's2', 's3']);
  });

  it('stopping the turn kills the command in the terminal and releases it; the turn ends cancelled', { timeout: 30_000 }, async () => {
    const { ws, root, client, asked } = await boot({ byDefault: 'allow' });
    const pidFile = join(root, 'pid');
    llm().script(call('s0', { command: `sleep 30 & echo $! > ${pidFile}; wait` }), [{ text: 'never read' }]);
    const turn = ws.chats.prompt({ message: 'wait a while' });
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the command to start');
    const sleeper = Number(readFileSync(pidFile, 'utf8'));
    expect(asked).toHaveLength(1);
    ws.chats.stop(turn.chatId);
    expect(await turn.done).toMatchObject({ stopReason: 'cancelled' });
    await until(() => !isAlive(sleeper), 'the command to be killed');
    await until(() => client.methods().includes('release'), 'the terminal to be released');
    expect(client.methods()).toEqual(['create', 'waitForExit', 'kill', 'output', 'release']);
    expect(client.open()).toEqual([]);
  });
});

/**
 * `patchbay acp` sessions in different folders (issue 30, item 1), through the real binary over
 * stdio: a session's `cwd` and `additionalDirectories` select its workspace, so two sessions in
 * two folders prompted at once each write, run commands, are trusted or not, and get config and
 * MCP servers as their own folder says; sessions in the same folders share one workspace, and the
 * last of them closing stops that workspace's MCP servers while the other folder's run on.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, runPatchbay, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fixture } from '../support/mcp-helpers.js';
import type { Reply } from '../fixtures/fake-llm.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

interface Msg {
  role: string;
  content?: unknown;
}

/** A project folder (its real path) with this `.patchbay/config.json` and files. */
function project(config: Record<string, unknown>, files: Record<string, string> = {}): string {
  const root = realpathSync(scratch(workspace(files)));
  mkdirSync(join(root, '.patchbay'), { recursive: true });
  writeFileSync(join(root, '.patchbay', 'config.json'), JSON.stringify(config, null, 2));
  return root;
}

async function trust(home: string, root: string): Promise<void> {
  const r = await runPatchbay(['trust', '--yes', root], { home, cwd: root, timeoutMs: 30_000 });
  expect(r.code, r.output).toBe(0);
}

/** An MCP server entry (the notes fixture) whose command line carries `marker`, for pgrep. */
const notesServer = (marker: string) => ({ command: process.execPath, args: [fixture('mcp-notes.mjs'), '--marker', marker] });

/** The server processes (node's, not the bwrap that holds a sandboxed one) whose command line holds `marker`. */
function pids(marker: string): number[] {
  const node = process.execPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  try {
    return execFileSync('pgrep', ['-f', `^${node} .*${marker}`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    // pgrep exits 1 when nothing matches.
    return [];
  }
}

/** Waits (bounded) for `pred`, checking again on each poll. */
async function until(pred: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const messages = (body: unknown): Msg[] => ((body as { messages?: Msg[] }).messages ?? []).filter((m) => m && typeof m === 'object');
const textOf = (m: Msg) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
/** The session a chat request comes from: the `[tag:X]` its user message carries. */
const tagOf = (body: unknown) => messages(body).flatMap((m) => (m.role === 'user' ? [/\[tag:(\w+)\]/.exec(textOf(m))?.[1]] : []))[0];
/** How far into its turn a request is: the tool results since the last user message. */
const stepOf = (body: unknown) => {
  const ms = messages(body);
  return ms.slice(ms.map((m) => m.role).lastIndexOf('user') + 1).filter((m) => m.role === 'tool').length;
};
const toolNames = (body: unknown) => ((body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);

/**
 * Answers each session's requests from its own script (by tag, then by step), and holds the
 * first request of each back until every session's first request has come: the turns run at
 * once. `together()` says whether they did (a first request held for 20 s goes on without the rest).
 */
function routeByTag(scripts: Record<string, Reply[]>): { together: () => boolean } {
  const tags = Object.keys(scripts);
  const arrived = new Set<string>();
  let release!: () => void;
  const all = new Promise<void>((r) => (release = r));
  let met = false;
  llm().onRequest = async (_path, body) => {
    const tag = tagOf(body);
    if (!tag || !(tag in scripts)) return undefined;
    const step = stepOf(body);
    if (step === 0) {
      arrived.add(tag);
      if (arrived.size === tags.length) {
        met = true;
        release();
      }
      await Promise.race([all, new Promise((r) => setTimeout(r, 20_000).unref())]);
    }
    return scripts[tag]![step] ?? [{ text: `done ${tag}` }];
  };
  return { together: () => met };
}

/** The chat requests of one session, in order. */
const requestsOf = (tag: string) => llm().requests.filter((r) => r.path === '/v1/chat/completions' && tagOf(r.body) === tag);
/** The text of the last tool result the model got in that session. */
const lastToolResult = (tag: string) => {
  const last = requestsOf(tag).at(-1);
  return last
    ? textOf(
        messages(last.body)
          .filter((m) => m.role === 'tool')
          .at(-1) ?? { role: 'tool' },
      )
    : '';
};

const commandsOf = (p: AcpProc, sessionId: string) =>
  p
    .updates(sessionId)
    .flatMap((u) => (u.sessionUpdate === 'available_commands_update' ? [u.availableCommands.map((c) => c.name)] : []))
    .at(-1) ?? [];

describe('patchbay acp: a workspace per session folder set', () => {
  it('two sessions in two folders prompted at once: paths, shell cwd, config, commands and MCP servers are each their own folder', async () => {
    const home = scratch(tempDir());
    const [markA, markB] = [`pbmark-a-${randomUUID()}`, `pbmark-b-${randomUUID()}`];
    // A allows every call by its own config; B says nothing, so its calls ask.
    const a = project({ toolCall: { approval: { byDefault: 'allow' } }, mcpServers: { notesA: notesServer(markA) } }, { '.patchbay/commands/only-a.md': 'Only in A.\n' });
    const b = project({ mcpServers: { notesB: notesServer(markB) } }, { '.patchbay/commands/only-b.md': 'Only in B.\n' });
    await trust(home, a);
    await trust(home, b);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const sa = await p.newSession(a);
    const sb = await p.newSession(b);
    const turn = (tag: string): Reply[] => [
      [{ toolCall: { id: `w-${tag}`, name: 'patchbay__write_file', args: { path: 'which.txt', content: `${tag}\n` } } }],
      [{ toolCall: { id: `s-${tag}`, name: 'patchbay__shell_command', args: { command: 'pwd' } } }],
    ];
    const route = routeByTag({ A: turn('A'), B: turn('B') });
    const [ra, rb] = await Promise.all([p.prompt(sa, '[tag:A] write which.txt and run pwd'), p.prompt(sb, '[tag:B] write which.txt and run pwd')]);
    expect([ra.stopReason, rb.stopReason]).toEqual(['end_turn', 'end_turn']);
    expect(route.together()).toBe(true);
    // Relative paths: each in its own folder.
    expect(readFileSync(join(a, 'which.txt'), 'utf8')).toBe('A\n');
    expect(readFileSync(join(b, 'which.txt'), 'utf8')).toBe('B\n');
    // The shell: each in its own folder.
    expect(lastToolResult('A')).toContain(a);
    expect(lastToolResult('A')).not.toContain(b);
    expect(lastToolResult('B')).toContain(b);
    expect(lastToolResult('B')).not.toContain(a);
    // Approval rules: A's own config allowed its calls unasked; B's calls asked.
    expect(p.permissionRequests.filter((r) => r.sessionId === sa)).toEqual([]);
    expect(p.permissionRequests.filter((r) => r.sessionId === sb).map((r) => r.toolCall.toolCallId)).toEqual(['w-B', 's-B']);
    // MCP servers: each folder's own server is offered to its session only.
    const firstA = toolNames(requestsOf('A')[0]?.body);
    const firstB = toolNames(requestsOf('B')[0]?.body);
    expect(firstA).toContain('notesA__note_count');
    expect(firstA).not.toContain('notesB__note_count');
    expect(firstB).toContain('notesB__note_count');
    expect(firstB).not.toContain('notesA__note_count');
    // Custom commands: each folder's own.
    await p.until(() => commandsOf(p, sa).includes('only-a') && commandsOf(p, sb).includes('only-b'), 'each session its commands');
    expect(commandsOf(p, sa)).not.toContain('only-b');
    expect(commandsOf(p, sb)).not.toContain('only-a');
  });

  it('a trusted and an untrusted folder at once: the untrusted one is held back in its session only', async () => {
    const home = scratch(tempDir());
    const markU = `pbmark-u-${randomUUID()}`;
    const config = { toolCall: { approval: { byDefault: 'allow' } } };
    const trusted = project(config);
    const untrusted = project({ ...config, mcpServers: { notesU: notesServer(markU) } });
    await trust(home, trusted);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const st = await p.newSession(trusted);
    const su = await p.newSession(untrusted);
    const write = (tag: string): Reply[] => [[{ toolCall: { id: `w-${tag}`, name: 'patchbay__write_file', args: { path: 'which.txt', content: `${tag}\n` } } }]];
    const route = routeByTag({ T: write('T'), U: write('U') });
    const [rt, ru] = await Promise.all([p.prompt(st, '[tag:T] write which.txt'), p.prompt(su, '[tag:U] write which.txt')]);
    expect([rt.stopReason, ru.stopReason]).toEqual(['end_turn', 'end_turn']);
    expect(route.together()).toBe(true);
    expect(readFileSync(join(trusted, 'which.txt'), 'utf8')).toBe('T\n');
    expect(readFileSync(join(untrusted, 'which.txt'), 'utf8')).toBe('U\n');
    // The trusted folder's byDefault applies: no asking. The untrusted one's is held back: its write asked.
    expect(p.permissionRequests.filter((r) => r.sessionId === st)).toEqual([]);
    expect(p.permissionRequests.filter((r) => r.sessionId === su).map((r) => r.toolCall.toolCallId)).toEqual(['w-U']);
    // Each session is told of its own folder's held-back settings, and only those.
    expect(p.text(su)).toMatch(/held back: .*toolCall\.approval\.byDefault/);
    expect(p.text(su)).toContain('mcpServers.notesU');
    expect(p.text(st)).not.toContain('held back');
    // The held-back server never started, and its tools are offered to no one.
    expect(pids(markU)).toEqual([]);
    expect(toolNames(requestsOf('U')[0]?.body)).not.toContain('notesU__note_count');
  });

  it("sessions in the same folder share its workspace; the last one closing stops that folder's MCP server, the other folder's runs on", async () => {
    const home = scratch(tempDir());
    const [markA, markB] = [`pbmark-a-${randomUUID()}`, `pbmark-b-${randomUUID()}`];
    const a = project({ mcpServers: { notesA: notesServer(markA) } });
    const b = project({ mcpServers: { notesB: notesServer(markB) } });
    await trust(home, a);
    await trust(home, b);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } } }) }));
    await p.initialize();
    const a1 = await p.newSession(a);
    const a2 = await p.newSession(a);
    const b1 = await p.newSession(b);
    await until(() => pids(markA).length > 0 && pids(markB).length > 0, "both folders' MCP servers");
    // One workspace for folder A: one server process for its two sessions.
    expect(pids(markA)).toHaveLength(1);
    const count = (tag: string, server: string): Reply[] => [[{ toolCall: { id: `n-${tag}`, name: `${server}__note_count`, args: {} } }]];

    await p.agent.request(methods.agent.session.close, { sessionId: a1 });
    // A2 still uses folder A: its server runs and answers.
    expect(pids(markA)).toHaveLength(1);
    routeByTag({ A2: count('A2', 'notesA') });
    expect((await p.prompt(a2, '[tag:A2] count the notes')).stopReason).toBe('end_turn');
    expect(lastToolResult('A2')).toContain('2');

    await p.agent.request(methods.agent.session.close, { sessionId: a2 });
    // The last session in folder A closed: its workspace is released and its server stops.
    await until(() => pids(markA).length === 0, "folder A's MCP server to stop");
    expect(pids(markB)).toHaveLength(1);
    routeByTag({ B1: count('B1', 'notesB') });
    expect((await p.prompt(b1, '[tag:B1] count the notes')).stopReason).toBe('end_turn');
    const done = p
      .updates(b1)
      .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'n-B1')
      .at(-1);
    expect(done).toMatchObject({ status: 'completed' });
    // Folder A opened again: a fresh workspace, its server started anew.
    const a3 = await p.newSession(a);
    await until(() => pids(markA).length === 1, "folder A's MCP server to start again");
    routeByTag({ A3: count('A3', 'notesA') });
    expect((await p.prompt(a3, '[tag:A3] count the notes')).stopReason).toBe('end_turn');
    expect(toolNames(requestsOf('A3')[0]?.body)).toContain('notesA__note_count');
    expect(toolNames(requestsOf('A3')[0]?.body)).not.toContain('notesB__note_count');
  });
  it('the same folders in another order share one workspace, and each session writes in its own cwd', async () => {
    const home = scratch(tempDir());
    const mark = `pbmark-ab-${randomUUID()}`;
    const a = project({ toolCall: { approval: { byDefault: 'allow' } }, mcpServers: { notes: notesServer(mark) } });
    const b = project({});
    await trust(home, a);
    await trust(home, b);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const sa = (await p.agent.request(methods.agent.session.new, { cwd: a, additionalDirectories: [b], mcpServers: [] })).sessionId;
    const sb = (await p.agent.request(methods.agent.session.new, { cwd: b, additionalDirectories: [a], mcpServers: [] })).sessionId;
    await until(() => pids(mark).length > 0, 'the MCP server');
    const write = (tag: string): Reply[] => [[{ toolCall: { id: `w-${tag}`, name: 'patchbay__write_file', args: { path: 'which.txt', content: `${tag}\n` } } }]];
    const route = routeByTag({ X: write('X'), Y: write('Y') });
    await Promise.all([p.prompt(sa, '[tag:X] write which.txt'), p.prompt(sb, '[tag:Y] write which.txt')]);
    expect(route.together()).toBe(true);
    expect(readFileSync(join(a, 'which.txt'), 'utf8')).toBe('X\n');
    expect(readFileSync(join(b, 'which.txt'), 'utf8')).toBe('Y\n');
    // One workspace: one server for both, and both sessions are under A's config.
    expect(pids(mark)).toHaveLength(1);
    expect(p.permissionRequests).toEqual([]);
  });

  it('a session loaded in other folders moves to their workspace: it writes there, and the workspace it left stops', async () => {
    const home = scratch(tempDir());
    const [markA, markB] = [`pbmark-a-${randomUUID()}`, `pbmark-b-${randomUUID()}`];
    const a = project({ toolCall: { approval: { byDefault: 'allow' } }, mcpServers: { notesA: notesServer(markA) } });
    const b = project({ toolCall: { approval: { byDefault: 'allow' } }, mcpServers: { notesB: notesServer(markB) } });
    await trust(home, a);
    await trust(home, b);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const s = await p.newSession(a);
    routeByTag({ M: [[{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: 'first.txt', content: 'in a\n' } } }]] });
    expect((await p.prompt(s, '[tag:M] write first.txt')).stopReason).toBe('end_turn');
    expect(readFileSync(join(a, 'first.txt'), 'utf8')).toBe('in a\n');
    await until(() => pids(markA).length === 1, "folder A's MCP server");
    await p.agent.request(methods.agent.session.load, { sessionId: s, cwd: b, mcpServers: [] });
    // Its only session left folder A: that workspace is disposed, its server gone; B's runs.
    await until(() => pids(markA).length === 0, "folder A's MCP server to stop");
    await until(() => pids(markB).length === 1, "folder B's MCP server");
    llm().requests.length = 0;
    routeByTag({ M: [[{ toolCall: { id: 'w2', name: 'patchbay__write_file', args: { path: 'second.txt', content: 'in b\n' } } }]] });
    expect((await p.prompt(s, '[tag:M] write second.txt')).stopReason).toBe('end_turn');
    expect(readFileSync(join(b, 'second.txt'), 'utf8')).toBe('in b\n');
    // The chat went on (its history came along) with B's tools, not A's.
    const last = requestsOf('M').at(-1)!.body;
    expect(JSON.stringify(last)).toContain('first.txt');
    expect(toolNames(last)).toContain('notesB__note_count');
    expect(toolNames(last)).not.toContain('notesA__note_count');
    // And resumed back in A: A's workspace again.
    await p.agent.request(methods.agent.session.resume, { sessionId: s, cwd: a, mcpServers: [] });
    await until(() => pids(markB).length === 0 && pids(markA).length === 1, 'the workspaces to swap again');
  });

  it('a prompt sent while its session is being loaded into other folders is refused, and the session then works in the new folder', async () => {
    const home = scratch(tempDir());
    const a = project({ toolCall: { approval: { byDefault: 'allow' } } });
    const b = project({ toolCall: { approval: { byDefault: 'allow' } } });
    await trust(home, a);
    await trust(home, b);
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const s = await p.newSession(a);
    routeByTag({ L: [[{ text: 'hello' }]] });
    expect((await p.prompt(s, '[tag:L] hello')).stopReason).toBe('end_turn');
    // Sent together: the load is in progress when the prompt arrives, so no turn starts in the workspace the session leaves.
    const loading = p.agent.request(methods.agent.session.load, { sessionId: s, cwd: b, mcpServers: [] });
    const early = p.prompt(s, '[tag:L] too early').then(
      () => 'answered',
      (e: unknown) => String((e as { message?: string }).message ?? e),
    );
    await loading;
    expect(await early).toMatch(/being loaded/);
    routeByTag({ L: [[{ toolCall: { id: 'w3', name: 'patchbay__write_file', args: { path: 'moved.txt', content: 'b\n' } } }]] });
    expect((await p.prompt(s, '[tag:L] write moved.txt')).stopReason).toBe('end_turn');
    expect(readFileSync(join(b, 'moved.txt'), 'utf8')).toBe('b\n');
  });
});

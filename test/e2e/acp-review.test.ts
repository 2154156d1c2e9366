/**
 * `patchbay acp` reviewed as a careful client author reads ACP v1: edge cases of prompt content
 * (initialization.mdx "Prompt Capabilities": text and resource_link are the baseline every agent
 * MUST take), message order (session-setup.mdx: updates name a session the client was told of;
 * prompt-turn.mdx: the answer after the turn's updates), and cancel at each point of a turn
 * (prompt-turn.mdx "Cancellation": the answer is `cancelled`, never an error). Driven by the SDK's
 * client over real stdio, as Zed's `agent_servers` crate drives an agent.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';
import { isAlive } from '../../src/util/pid.js';
import { fixture } from '../support/mcp-helpers.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const tracked = useAcpProcs();
const procs: AcpProc[] = [];
/** Every agent of these tests is stopped after each, and must not have logged an unhandled rejection or a failed notification handler. */
function track(p: AcpProc): AcpProc {
  procs.push(p);
  return tracked(p);
}
afterEach(() => {
  for (const p of procs.splice(0)) expect(p.stderr).not.toMatch(/unhandled rejection|Error handling notification|uncaught/i);
});

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

async function started(files: Record<string, string> = { 'a.txt': 'one\n' }, vision = false): Promise<{ p: AcpProc; root: string; sessionId: string }> {
  const root = scratch(workspace(files));
  const config = fakeProviderConfig(llm().url) as { providers: { fake: { models: { m1: Record<string, unknown> } } } };
  if (vision) config.providers.fake.models.m1.imageInput = true;
  const p = track(new AcpProc({ home: scratch(tempDir()), config, env: { PATCHBAY_LOG_LEVEL: 'debug' } }));
  await p.initialize();
  const sessionId = await p.newSession(root);
  return { p, root, sessionId };
}

/** Whether the last model request carries `text` (a boolean, so a failure does not print the whole request). */
function sent(text: string): boolean {
  return JSON.stringify(llm().requests.at(-1)?.body).includes(text);
}

describe('patchbay acp review: prompt content', () => {
  it('a prompt of only a file link, its name with a space and a percent sign, sends that file', async () => {
    const { p, root, sessionId } = await started({ 'my notes%.txt': 'the-linked-content\n' });
    llm().script([{ text: 'read it' }]);
    const uri = pathToFileURL(join(root, 'my notes%.txt')).href;
    expect(uri).toContain('my%20notes%25.txt');
    const r = await p.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'resource_link', uri, name: 'my notes%.txt' }] });
    expect(r.stopReason).toBe('end_turn');
    expect(sent('the-linked-content')).toBe(true);
  });

  it('a prompt of only an image reaches the model', async () => {
    const { p, sessionId } = await started(undefined, true);
    llm().script([{ text: 'a pixel' }]);
    const r = await p.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'image', mimeType: 'image/png', data: PNG }] });
    expect(r.stopReason).toBe('end_turn');
    expect(sent(PNG.slice(0, 40))).toBe(true);
  });

  it('links that are not files (a web page, an editor thread) are taken, as the baseline requires, and named to the model', async () => {
    const { p, sessionId } = await started();
    llm().script([{ text: 'noted' }]);
    const r = await p.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'see these' },
        { type: 'resource_link', uri: 'zed:///agent/thread/abc?name=Earlier', name: 'Earlier thread' },
        { type: 'resource_link', uri: 'mailto:someone@example.invalid', name: 'someone' },
      ],
    });
    expect(r.stopReason).toBe('end_turn');
    expect(sent('zed:///agent/thread/abc?name=Earlier')).toBe(true);
    expect(sent('mailto:someone@example.invalid')).toBe(true);
  });

  it('a web link is read as a web page and a folder link as that folder', async () => {
    const { p, root, sessionId } = await started({ 'src/inner-file.ts': 'x\n' });
    llm().script([{ text: 'seen' }]);
    const page = `${llm().url}/some-page`;
    const folder = pathToFileURL(join(root, 'src')).href + '/';
    const r = await p.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'look' },
        { type: 'resource_link', uri: page, name: 'a page' },
        { type: 'resource_link', uri: folder, name: 'src' },
      ],
    });
    expect(r.stopReason).toBe('end_turn');
    expect(sent(page)).toBe(true);
    expect(sent('inner-file.ts')).toBe(true);
  });

  it("Zed's line ranges (#L2:3 on a file: URI) are kept: a link sends those lines only, an embedded selection is labelled with them", async () => {
    // Zed crates/acp_thread mention.rs `MentionUri`: selections and symbols are file: URIs with a `#L<start>:<end>` fragment (1-based).
    const { p, root, sessionId } = await started({ 'c.txt': 'line-one\nline-two\nline-three\nline-four\n' });
    llm().script([{ text: 'ok' }], [{ text: 'ok' }]);
    const uri = `${pathToFileURL(join(root, 'c.txt')).href}#L2:3`;
    await p.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'resource_link', uri, name: 'c.txt' }] });
    expect(sent('line-two') && sent('line-three')).toBe(true);
    expect(sent('line-one') || sent('line-four')).toBe(false);
    await p.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'explain' },
        { type: 'resource', resource: { uri, text: 'line-two\nline-three\n' } },
      ],
    });
    expect(sent(`${join(root, 'c.txt')} (lines 2-3)`)).toBe(true);
  });

  it('a prompt of only empty text is refused with a message naming what to send', async () => {
    const { p, sessionId } = await started();
    await expect(p.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '  ' }] })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('empty') as string,
    });
    expect(llm().requests).toHaveLength(0);
  });

  it('a 1 MB text prompt is carried whole', async () => {
    const { p, sessionId } = await started();
    llm().script([{ text: 'long' }]);
    const big = `${'x'.repeat(1024 * 1024)}-the-end`;
    const r = await p.prompt(sessionId, big);
    expect(r.stopReason).toBe('end_turn');
    expect(sent('x-the-end')).toBe(true);
  });
});

describe('patchbay acp review: order', () => {
  it('available_commands_update comes only after the session/new answer', async () => {
    const root = scratch(workspace({ 'a.txt': 'one\n' }));
    const p = track(new AcpProc({ home: scratch(tempDir()), config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    for (let i = 0; i < 3; i++) {
      const before = p.notifications.length;
      const sessionId = await p.newSession(root);
      // Nothing for a session the client had not yet been told of.
      expect(p.notifications.slice(before).filter((n) => n.sessionId === sessionId)).toEqual([]);
      await p.until(() => p.updates(sessionId).some((u) => u.sessionUpdate === 'available_commands_update'), 'the commands');
    }
  });
});

describe('patchbay acp review: cancel', () => {
  it('session/cancel sent right after session/prompt, before the turn starts: cancelled, and the model is not asked', async () => {
    const { p, sessionId } = await started();
    llm().script([{ text: 'should not be said' }]);
    const r = p.prompt(sessionId, 'go');
    void p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    expect(p.text(sessionId)).not.toContain('should not be said');
    expect(llm().requests).toHaveLength(0);
    // The session is usable after.
    llm().script([{ text: 'second' }]);
    expect((await p.prompt(sessionId, 'again')).stopReason).toBe('end_turn');
    expect(p.stderr).not.toContain('unhandled rejection');
  });

  it('session/cancel during a shell command run here: cancelled, and the command process is gone', async () => {
    const { p, root, sessionId } = await started();
    // Found by its command line: in the OS sandbox `$$` is a pid of the command's own namespace.
    const seconds = `60.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: `exec sleep ${seconds}` } } }], [{ text: 'never' }]);
    const r = p.prompt(sessionId, 'run');
    const hostPid = () =>
      Number(
        spawnSync('pgrep', ['-x', '-f', `sleep ${seconds}`], { encoding: 'utf8' })
          .stdout.trim()
          .split('\n')[0] || 0,
      );
    await p.until(() => hostPid() > 0, 'the command to start');
    const pid = hostPid();
    expect(isAlive(pid)).toBe(true);
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(isAlive(pid)).toBe(false);
    const last = p
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 's1')
      .at(-1);
    expect(last).toMatchObject({ status: 'failed' });
    expect(p.stderr).not.toContain('unhandled rejection');
  });

  it("session/cancel during a command in the client's terminal: cancelled, the terminal killed and released", async () => {
    // ACP terminals.mdx "Killing Commands" and "Releasing Terminals": a stopped command is killed, every terminal released.
    const root = scratch(workspace({ 'a.txt': 'one\n' }));
    const p = track(new AcpProc({ home: scratch(tempDir()), config: fakeProviderConfig(llm().url) }));
    await p.initialize({ terminal: true });
    const sessionId = await p.newSession(root);
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: 'sleep 60' } } }], [{ text: 'never' }]);
    const r = p.prompt(sessionId, 'run');
    await p.until(() => p.terminals.methods().includes('create') && p.terminals.pids.length > 0, 'the terminal');
    const pid = p.terminals.pids[0]!;
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    await p.until(() => p.terminals.methods().includes('release'), 'the release');
    expect(p.terminals.methods()).toEqual(expect.arrayContaining(['kill', 'release']));
    expect(p.terminals.open()).toEqual([]);
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(isAlive(pid)).toBe(false);
  });

  it('session/cancel while the permission request is open: cancelled, then the next prompt runs normally', async () => {
    const { p, root, sessionId } = await started();
    writeFileSync(join(root, 'b.txt'), 'two\n');
    p.onPermission = () => new Promise(() => undefined);
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'b.txt', original_content: 'two', new_content: 'TWO' } } }], [{ text: 'never' }]);
    const r = p.prompt(sessionId, 'edit');
    await p.until(() => p.permissionRequests.length > 0, 'the permission request');
    // The tool_call came before its permission request.
    expect(p.updates(sessionId).some((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === 'e1')).toBe(true);
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    p.onPermission = (q) => ({ outcome: { outcome: 'selected', optionId: q.options[0]!.optionId } });
    llm().script([{ text: 'fine' }]);
    expect((await p.prompt(sessionId, 'hello')).stopReason).toBe('end_turn');
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('two\n');
    expect(p.stderr).not.toContain('unhandled rejection');
  });
});

describe('patchbay acp review: permissions of subagents and of sessions side by side', () => {
  /** The parent spawns a `general` subagent that edits b.txt (an edit asks permission). */
  function scriptSubagentEdit(root: string): void {
    llm().onRequest = (path, body: { messages: Array<{ role: string; content: unknown }> }) => {
      if (path !== '/v1/chat/completions') return undefined;
      const system = JSON.stringify(body.messages[0]?.content ?? '');
      const results = body.messages.filter((m) => m.role === 'tool').length;
      if (system.includes('general'))
        return results ? [{ text: 'edited' }] : [{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: join(root, 'b.txt'), original_content: 'two', new_content: 'TWO' } } }];
      return results ? [{ text: 'done' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'general', task: 'edit b.txt', activity: 'editing' } } }];
    };
  }

  it("'Always allow in this session' answered in a subagent's call holds for the whole session: the parent's own edit is not asked", async () => {
    // ACP tool-calls.mdx: allow_always is "for the session"; a subagent's calls are calls of the session.
    const { p, root, sessionId } = await started({ 'b.txt': 'two\n' });
    scriptSubagentEdit(root);
    p.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'allow-always' } });
    expect((await p.prompt(sessionId, 'go')).stopReason).toBe('end_turn');
    expect(p.permissionRequests).toHaveLength(1);
    llm().onRequest = undefined;
    llm().script([{ toolCall: { id: 'e2', name: 'patchbay__edit_file', args: { path: join(root, 'b.txt'), original_content: 'TWO', new_content: 'three' } } }], [{ text: 'again' }]);
    expect((await p.prompt(sessionId, 'edit it yourself')).stopReason).toBe('end_turn');
    expect(p.permissionRequests).toHaveLength(1);
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('three\n');
  });

  it("a subagent's call asks permission under its prefixed id, after its tool_call; allowed, the edit is made", async () => {
    // Follows ACP tool-calls.mdx "Requesting Permission": the request names a call the client was told of.
    const { p, root, sessionId } = await started({ 'b.txt': 'two\n' });
    scriptSubagentEdit(root);
    let toldBefore = false;
    p.onPermission = (q) => {
      toldBefore = p.updates(sessionId).some((u) => u.sessionUpdate === 'tool_call' && u.toolCallId === q.toolCall.toolCallId);
      return { outcome: { outcome: 'selected', optionId: 'allow' } };
    };
    expect((await p.prompt(sessionId, 'go')).stopReason).toBe('end_turn');
    expect(p.permissionRequests.map((q) => q.toolCall.toolCallId)).toEqual([expect.stringMatching(/^[^/]+\/e1$/)]);
    expect(toldBefore).toBe(true);
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('TWO\n');
    const id = p.permissionRequests[0]!.toolCall.toolCallId;
    expect(
      p
        .updates(sessionId)
        .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === id)
        .at(-1),
    ).toMatchObject({ status: 'completed' });
  });

  it("session/cancel while a subagent's permission request is open: cancelled, nothing edited, the session goes on", async () => {
    const { p, root, sessionId } = await started({ 'b.txt': 'two\n' });
    scriptSubagentEdit(root);
    p.onPermission = () => new Promise(() => undefined);
    const r = p.prompt(sessionId, 'go');
    await p.until(() => p.permissionRequests.length > 0, 'the permission request');
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('two\n');
    llm().onRequest = undefined;
    llm().script([{ text: 'after' }]);
    expect((await p.prompt(sessionId, 'again')).stopReason).toBe('end_turn');
    expect(p.stderr).not.toContain('unhandled rejection');
  });

  it('session/cancel while a subagent streams: cancelled, and the session goes on', async () => {
    const { p, sessionId } = await started();
    llm().onRequest = (path, body: { messages: Array<{ role: string; content: unknown }> }) => {
      if (path !== '/v1/chat/completions') return undefined;
      if (JSON.stringify(body.messages[0]?.content ?? '').includes('You are an explorer subagent')) return [{ text: 'exploring ' }, { stall: 'forever' }];
      return [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'look', activity: 'looking' } } }];
    };
    const r = p.prompt(sessionId, 'go');
    await p.until(() => llm().requests.length >= 2, 'the subagent request');
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    expect(
      p
        .updates(sessionId)
        .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 's1')
        .at(-1),
    ).toMatchObject({ status: 'failed' });
    llm().onRequest = undefined;
    llm().script([{ text: 'after' }]);
    expect((await p.prompt(sessionId, 'again')).stopReason).toBe('end_turn');
  });

  it("a cancel of one session leaves another session's open permission request alone", async () => {
    const { p, root, sessionId: a } = await started({ 'b.txt': 'two\n' });
    const b = await p.newSession(root);
    let answer: ((optionId: string) => void) | undefined;
    p.onPermission = () => new Promise((res) => (answer = (optionId) => res({ outcome: { outcome: 'selected', optionId } })));
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'b.txt', original_content: 'two', new_content: 'TWO' } } }], [{ text: 'edited' }]);
    const ra = p.prompt(a, 'edit');
    await p.until(() => p.permissionRequests.length > 0, 'the permission request');
    await p.agent.notify(methods.agent.session.cancel, { sessionId: b });
    answer!('allow');
    expect((await ra).stopReason).toBe('end_turn');
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('TWO\n');
  });
});

describe('patchbay acp review: sessions', () => {
  it('session/load of a session made by session/new and not yet prompted keeps it: loaded empty, and its prompt runs', async () => {
    // ACP session-setup.mdx "Loading Sessions": the id is one this agent gave; a failed load must not end a live session.
    const { p, root, sessionId } = await started();
    const loaded = await p.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    expect(loaded.modes?.currentModeId).toBe('code');
    llm().script([{ text: 'still mine' }]);
    expect((await p.prompt(sessionId, 'hi')).stopReason).toBe('end_turn');
    expect(p.text(sessionId)).toBe('still mine');
  });

  it('session/close (sessionCapabilities.close) cancels a running prompt and frees the session: a prompt to it is -32002, a second close is a no-op', async () => {
    // ACP schema.json CloseSessionRequest: "cancel any ongoing work ... then free up any resources associated with the session".
    const root = scratch(workspace({ 'a.txt': 'one\n' }));
    const p = track(new AcpProc({ home: scratch(tempDir()), config: fakeProviderConfig(llm().url) }));
    const init = await p.initialize();
    expect(init.agentCapabilities?.sessionCapabilities?.close).toEqual({});
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'partial ' }, { stall: 'forever' }]);
    const r = p.prompt(sessionId, 'go');
    await p.until(() => p.text(sessionId).includes('partial'), 'the first chunk');
    await p.agent.request(methods.agent.session.close, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    await expect(p.prompt(sessionId, 'again')).rejects.toMatchObject({ code: -32002 });
    // Closing again is idempotent (the SDK's client reads our -32002 for close as done).
    await expect(p.agent.request(methods.agent.session.close, { sessionId })).resolves.toEqual({});
    // The chat is kept: loading it opens the session again.
    await p.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    llm().script([{ text: 'back' }]);
    expect((await p.prompt(sessionId, 'hi')).stopReason).toBe('end_turn');
  });

  it("session/load again without the session's MCP servers stops them (the reload's list is the session's list)", async () => {
    // ACP session-setup.mdx "MCP Servers": the servers are those of the session/new or session/load request.
    const { p, root } = await started();
    const toolNames = () => ((llm().requests.at(-1)?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);
    const made = await p.agent.request(methods.agent.session.new, { cwd: root, mcpServers: [{ name: 'notes', command: process.execPath, args: [fixture('mcp-notes.mjs')], env: [] }] });
    llm().script([{ text: 'one' }]);
    await p.prompt(made.sessionId, 'hello');
    expect(toolNames()).toContain('notes__note_count');
    await p.agent.request(methods.agent.session.load, { sessionId: made.sessionId, cwd: root, mcpServers: [] });
    llm().script([{ text: 'two' }]);
    await p.prompt(made.sessionId, 'again');
    expect(toolNames()).not.toContain('notes__note_count');
  });

  it('session/list before any session, without cwd, does not make the agent folder the first workspace folder', async () => {
    // ACP session-list.mdx: cwd is an optional filter. A later session/new's cwd is where relative paths resolve.
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'one\ntwo\n' }));
    const p = track(new AcpProc({ home, cwd: home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    await p.agent.request(methods.agent.session.list, {});
    const sessionId = await p.newSession(root);
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'a.txt', original_content: 'two', new_content: 'TWO' } } }], [{ text: 'edited' }]);
    expect((await p.prompt(sessionId, 'edit a.txt')).stopReason).toBe('end_turn');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\nTWO\n');
    expect(existsSync(join(home, 'a.txt'))).toBe(false);
  });
});

describe('patchbay acp review: errors', () => {
  it('a cwd that is not a directory is refused (-32602 naming it), first session or later, and the agent goes on', async () => {
    const root = scratch(workspace({ 'a.txt': 'one\n' }));
    const p = track(new AcpProc({ home: scratch(tempDir()), config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const missing = join(root, 'no-such-dir');
    await expect(p.agent.request(methods.agent.session.new, { cwd: missing, mcpServers: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining(missing) as string });
    const sessionId = await p.newSession(root);
    await expect(p.agent.request(methods.agent.session.new, { cwd: join(root, 'a.txt'), mcpServers: [] })).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('a.txt') as string });
    await expect(p.agent.request(methods.agent.session.load, { sessionId, cwd: missing, mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    llm().script([{ text: 'fine' }]);
    expect((await p.prompt(sessionId, 'hi')).stopReason).toBe('end_turn');
  });
});

describe('patchbay acp review: session/load replay', () => {
  it('replays an image, a rejected call, a subagent call and a compaction, all before the answer; a running session cannot be loaded', async () => {
    // ACP session-setup.mdx "Loading Sessions": the whole conversation as session/update, then the answer.
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'b.txt': 'two\n' }));
    const config = fakeProviderConfig(llm().url) as { providers: { fake: { models: { m1: Record<string, unknown> } } } };
    config.providers.fake.models.m1.imageInput = true;
    const first = track(new AcpProc({ home, config }));
    await first.initialize();
    const sessionId = await first.newSession(root);
    llm().script([{ text: 'a pixel' }]);
    await first.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'what is this' },
        { type: 'image', mimeType: 'image/png', data: PNG },
      ],
    });
    first.onPermission = () => ({ outcome: { outcome: 'selected', optionId: 'reject' } });
    llm().script([{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'b.txt', original_content: 'two', new_content: 'TWO' } } }], [{ text: 'not edited' }]);
    expect((await first.prompt(sessionId, 'edit b')).stopReason).toBe('end_turn');
    llm().onRequest = (path, body: { messages: Array<{ role: string; content: unknown }> }) => {
      if (path !== '/v1/chat/completions') return undefined;
      const system = JSON.stringify(body.messages[0]?.content ?? '');
      const results = body.messages.filter((m) => m.role === 'tool').length;
      if (system.includes('You are an explorer subagent')) return [{ text: 'explored' }];
      return results > 1 ? [{ text: 'the subagent said explored' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'look', activity: 'looking' } } }];
    };
    expect((await first.prompt(sessionId, 'explore')).stopReason).toBe('end_turn');
    llm().onRequest = undefined;
    llm().script([{ text: 'Summary: an image, a refused edit, an exploration.' }]);
    expect((await first.prompt(sessionId, '/compact')).stopReason).toBe('end_turn');
    // Loading the session while its prompt runs is refused with what to do.
    llm().script([{ text: 'slow ' }, { stall: 'forever' }]);
    const running = first.prompt(sessionId, 'stall');
    await first.until(() => first.text(sessionId).includes('slow'), 'the running turn');
    await expect(first.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] })).rejects.toMatchObject({
      code: -32600,
      message: expect.stringContaining('cancel') as string,
    });
    await first.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await running).stopReason).toBe('cancelled');
    await first.stop();

    const second = track(new AcpProc({ home, config }));
    await second.initialize();
    await second.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    // Everything below was there when the answer came.
    const u = second.updates(sessionId);
    expect(u).toContainEqual(expect.objectContaining({ sessionUpdate: 'user_message_chunk', content: { type: 'image', mimeType: 'image/png', data: PNG } }));
    expect(u).toContainEqual(expect.objectContaining({ sessionUpdate: 'tool_call', toolCallId: 'e1', kind: 'edit' }));
    expect(u.filter((x) => x.sessionUpdate === 'tool_call_update' && x.toolCallId === 'e1').at(-1)).toMatchObject({
      status: 'failed',
      content: [{ type: 'content', content: { type: 'text', text: 'Rejected by the user.' } }],
    });
    expect(u.filter((x) => x.sessionUpdate === 'tool_call_update' && x.toolCallId === 's1').at(-1)).toMatchObject({ status: 'completed' });
    expect(second.text(sessionId)).toContain('Chat compacted');
    expect(second.text(sessionId, 'user_message_chunk')).toContain('Summary: an image, a refused edit, an exploration.');
    expect(second.text(sessionId)).toContain('slow ');
    // The replay is not live: nothing asks permission, nothing runs.
    expect(second.permissionRequests).toEqual([]);
    expect(readFileSync(join(root, 'b.txt'), 'utf8')).toBe('two\n');
  });
});

/**
 * The ToolGate (core/tool-calls/tool-gate.ts): the one approval decision, judged without any chat. Real
 * folders (containment and protected paths follow real paths and symlinks) and a real Hooks engine
 * running bash for the preToolCall cases.
 */
import { mkdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HookConfig } from '../../src/config/hooks.js';
import { Hooks } from '../../src/core/hooks/index.js';
import { gateCall, judge, rememberAnswer, ToolGate, type GateContext, type SessionAnswers } from '../../src/core/tool-calls/tool-gate.js';
import type { Tool } from '../../src/shapes/tool.js';
import { removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await removeDir(d);
});

async function folder(): Promise<string> {
  const d = await tempDir('patchbay-gate-');
  dirs.push(d);
  return d;
}

/** A native tool: `write` changes things and names its `path`; `read` only reads it. */
function tool(name: string, opts: { mutates?: boolean; paths?: boolean; server?: string } = {}): Tool {
  const mutates = opts.mutates ?? false;
  return {
    name,
    server: opts.server ?? 'patchbay',
    origin: opts.server ? 'mcp' : 'native',
    description: name,
    inputSchema: { type: 'object' },
    readOnly: !mutates,
    mutates,
    ...(opts.paths !== false ? { paths: (a: Record<string, unknown>) => [a.path as string] } : {}),
    call: async () => ({ error: false, outputs: [] }),
  };
}

const write = tool('write_file', { mutates: true });
const read = tool('read_file');
const shell: Tool = { ...tool('shell_command', { mutates: true, paths: false }), paths: (a) => [a.working_directory as string] };

/** An isolated patchbay home, so the protected-path check never looks at the real one. */
function envIn(dir: string): NodeJS.ProcessEnv {
  return { HOME: dir, XDG_CONFIG_HOME: join(dir, '.config'), PATCHBAY_HOME: join(dir, '.patchbay') };
}

async function ctx(extra: Partial<GateContext> = {}): Promise<GateContext> {
  const root = await folder();
  return { roots: [root], approval: {}, env: envIn(await folder()), ...extra };
}

describe('ToolGate: the rules', () => {
  it('deny rules are final: no trust mode, session approval or allow rule runs a denied call', async () => {
    const c = await ctx({
      approval: { allow: { shell_command: {} }, deny: { shell_command: { argsMatchers: { command: ['rm .*'] } } } },
      trust: true,
      session: { approved: new Set(['patchbay__shell_command']) },
    });
    const v = await judge(shell, { command: 'rm -rf /' }, c);
    expect(v).toMatchObject({ kind: 'deny', rejectReason: 'denied', reason: 'the deny rule "shell_command" matches' });
    expect(v.kind === 'deny' && v.why).toBe(`Running "shell_command" is denied by the user's configuration.`);
    // The same tool with other arguments is allowed by the allow rule.
    expect(await judge(shell, { command: 'ls' }, c)).toMatchObject({ kind: 'allow', reason: 'the allow rule "shell_command" matches' });
  });

  it('what asks runs with trust mode (read at each decision) or a session approval; read-only tools are allowed by default', async () => {
    let trusted = false;
    const c = await ctx({ trust: () => trusted });
    expect(await judge(shell, { command: 'make' }, c)).toMatchObject({ kind: 'ask', reason: 'no rule names it, and it may change things' });
    trusted = true;
    expect(await judge(shell, { command: 'make' }, c)).toMatchObject({ kind: 'allow', reason: expect.stringMatching(/^trust mode runs it/) });
    const session: SessionAnswers = { approved: new Set(['patchbay__shell_command']) };
    expect(await judge(shell, { command: 'make' }, { ...c, trust: false, session })).toMatchObject({ kind: 'allow', reason: expect.stringMatching(/approved it for the rest of this chat/) });
    // A session answer is kept under the key it was given (a chat's LLM name).
    expect(await judge(shell, { command: 'make' }, { ...c, trust: false, session, key: 'other' })).toMatchObject({ kind: 'ask' });
    expect(await judge(read, { path: 'a.txt' }, { ...c, trust: false })).toMatchObject({ kind: 'allow', reason: 'no rule names it, and it only reads' });
    expect(await judge(read, { path: 'a.txt' }, { ...c, trust: false, approval: { byDefault: 'ask' } })).toMatchObject({ kind: 'ask', reason: 'no rule names it; byDefault is "ask"' });
  });

  it('a path outside the roots asks, even when allowed, trusted and approved for the chat; a symlink out counts as outside', async () => {
    const c = await ctx({ approval: { byDefault: 'allow' }, trust: true, session: { approved: new Set(['patchbay__write_file']) } });
    const elsewhere = await folder();
    await symlink(elsewhere, join(c.roots[0]!, 'link'));
    expect(await judge(write, { path: 'inside.txt' }, c)).toMatchObject({ kind: 'allow', outside: false });
    for (const path of [join(elsewhere, 'x'), 'link/x', '../x']) {
      const v = await judge(write, { path }, c);
      expect(v, path).toMatchObject({ kind: 'ask', outside: true, reason: `"${path}" is outside the workspace folders, so it asks every time` });
    }
    // A second root contains it.
    expect(await judge(write, { path: join(elsewhere, 'x') }, { ...c, roots: [...c.roots, elsewhere] })).toMatchObject({ kind: 'allow', outside: false });
  });

  it('cwd resolves relative paths without widening the roots', async () => {
    const c = await ctx({ approval: { byDefault: 'allow' } });
    const sub = join(c.roots[0]!, 'sub');
    await mkdir(join(sub, '.git'), { recursive: true });
    const elsewhere = await folder();
    expect(await judge(write, { path: 'x.txt' }, { ...c, cwd: sub })).toMatchObject({ kind: 'allow' });
    // Relative to a cwd outside the roots, the path is outside: asked, not let through.
    expect(await judge(write, { path: 'x.txt' }, { ...c, cwd: elsewhere })).toMatchObject({ kind: 'ask', outside: true });
    // A protected path relative to the cwd is found there.
    expect(await judge(write, { path: '.git/config' }, { ...c, cwd: sub })).toMatchObject({ kind: 'ask', protected: expect.stringMatching(/"\.git\/config" is protected/) });
  });

  it('a protected path asks every time, whatever allows it; the shell is judged by its words', async () => {
    const c = await ctx({ approval: { byDefault: 'allow' }, trust: true, session: { approved: new Set(['patchbay__write_file', 'patchbay__shell_command']) } });
    const v = await judge(write, { path: '.patchbay/config.json' }, c);
    expect(v).toMatchObject({ kind: 'ask', outside: false, protected: `".patchbay/config.json" is protected: .patchbay (patchbay's workspace config)` });
    expect(v.reason).toBe(`it asks every time: ${v.protected}`);
    expect(await judge(shell, { command: 'echo x > .git/hooks/pre-commit' }, c)).toMatchObject({ kind: 'ask', protected: expect.stringMatching(/\.git/) });
    expect(await judge(shell, { command: 'git config core.hooksPath x' }, c)).toMatchObject({ kind: 'ask', protected: expect.stringMatching(/git config/) });
    // Reading a protected path is no write: allowed.
    expect(await judge(read, { path: '.git/config' }, c)).toMatchObject({ kind: 'allow' });
    // patchbay's own data folder (outside the workspace: judged outside first).
    const home = c.env!.PATCHBAY_HOME!;
    expect(await judge(write, { path: join(home, 'trust.json') }, { ...c, roots: [...c.roots, home] })).toMatchObject({ kind: 'ask', protected: expect.stringMatching(/patchbay's data/) });
  });

  it('the plan agent denies what changes things; the session "reject always" is final', async () => {
    const c = await ctx({ approval: { byDefault: 'allow' } });
    expect(await judge(write, { path: 'a' }, { ...c, agent: 'plan' })).toMatchObject({ kind: 'deny', reason: 'the plan agent only reads, and this call changes things' });
    expect(await judge(read, { path: 'a' }, { ...c, agent: 'plan' })).toMatchObject({ kind: 'allow' });
    const session: SessionAnswers = { approved: new Set(), rejected: new Set() };
    rememberAnswer(session, 'patchbay__read_file', { approved: true, saveForSession: true });
    expect(session.approved.has('patchbay__read_file')).toBe(true);
    rememberAnswer(session, 'patchbay__read_file', { approved: false, reason: 'user', saveForSession: true });
    expect(session.approved.has('patchbay__read_file')).toBe(false);
    expect(await judge(read, { path: 'a' }, { ...c, session, trust: true })).toMatchObject({ kind: 'deny', reason: 'the user rejected it for the rest of this chat' });
    // A "stopped" answer, or one not for the session, is not kept.
    const other: SessionAnswers = { approved: new Set(), rejected: new Set() };
    rememberAnswer(other, 'k', { approved: false, reason: 'stopped', saveForSession: true });
    rememberAnswer(other, 'k', { approved: true });
    expect([other.approved.size, other.rejected!.size]).toEqual([0, 0]);
  });
});

describe('ToolGate: preToolCall hooks', () => {
  function hooksIn(root: string, hooks: Record<string, HookConfig>): Hooks {
    return new Hooks({ hooks: () => hooks, roots: () => [root], dbPath: '/db', executable: '/bin/patchbay', env: process.env, problems: () => {} });
  }

  it('a hook rejects, asks about what was allowed, and sees the verdict of the rules', async () => {
    const c = await ctx({ approval: { byDefault: 'allow' } });
    const seen = join(c.roots[0]!, 'seen.json');
    const hooks = hooksIn(c.roots[0]!, {
      no: { type: 'preToolCall', matcher: { eca__read_file: { argsMatchers: { path: ['secret.*'] } } }, actions: [{ type: 'shell', shell: 'echo "not that" >&2; exit 2' }] },
      ask: { type: 'preToolCall', matcher: 'eca__write_file', actions: [{ type: 'shell', shell: `cat > '${seen}'; echo '{"approval":"ask"}'` }] },
    });
    const h = { hooks, chat: { chatId: 'gate' } };
    expect(await gateCall(read, { path: 'secret.txt' }, { ...c, hooks: h })).toMatchObject({ kind: 'deny', rejectReason: 'hook', why: 'not that', reason: 'a preToolCall hook rejected it: not that' });
    expect(await gateCall(read, { path: 'open.txt' }, { ...c, hooks: h })).toMatchObject({ kind: 'allow' });
    // Trust mode does not outvote a hook's ask.
    expect(await gateCall(write, { path: 'a.txt' }, { ...c, hooks: h, trust: true, toolCallId: 't1' })).toMatchObject({ kind: 'ask', reason: expect.stringMatching(/^a preToolCall hook asks/) });
    expect(JSON.parse(await readFile(seen, 'utf8'))).toMatchObject({ tool_name: 'write_file', approval: 'allow', tool_call_id: 't1' });
  });

  it('rewritten arguments are judged again: the stricter verdict stands, and what they touch is what the call runs with', async () => {
    const c = await ctx({ approval: { byDefault: 'allow' } });
    const rewrite = (path: string) =>
      hooksIn(c.roots[0]!, { move: { type: 'preToolCall', matcher: 'eca__write_file', actions: [{ type: 'shell', shell: `echo '{"updatedInput":{"path":"${path}"}}'` }] } });
    const toProtected = await gateCall(write, { path: 'a.txt', content: 'x' }, { ...c, hooks: { hooks: rewrite('.envrc'), chat: { chatId: 'gate' } } });
    expect(toProtected).toMatchObject({ kind: 'ask', args: { path: '.envrc', content: 'x' }, protected: expect.stringMatching(/\.envrc/) });
    // Away from a protected path: the first verdict (ask) still stands, but nothing protected is left to name.
    const away = await gateCall(write, { path: '.envrc', content: 'x' }, { ...c, hooks: { hooks: rewrite('b.txt'), chat: { chatId: 'gate' } } });
    expect(away).toMatchObject({ kind: 'ask', args: { path: 'b.txt' } });
    expect(away.protected).toBeUndefined();
  });
});

describe('ToolGate.decide: a call from no chat', () => {
  it('finds the tool by name, lays the subagent’s rules over the config, and adds insideWorkspace and the tool’s own folders to the roots', async () => {
    const root = await folder();
    const extra = await folder();
    const memory = await folder();
    const mcp = tool('create_issue', { server: 'github', mutates: true, paths: false });
    const closer = tool('close_issue', { server: 'github', mutates: true, paths: false });
    const tools = new Map([write, read, shell, mcp, closer].map((t) => [`${t.server}__${t.name}`, t]));
    const gate = new ToolGate({
      tool: (n) => tools.get(n),
      approval: () => ({ insideWorkspace: [extra], deny: { github: { argsMatchers: { title: ['.*secret.*'] } } } }),
      subagents: () => [
        { name: 'writer', description: '', systemPrompt: '', origin: 'test', tools: { allow: { write_file: {} } } },
        { name: 'looker', description: '', systemPrompt: '', origin: 'test', readOnly: true },
      ],
      toolFolders: (t) => (t.name === 'read_file' ? [memory] : []),
      disabled: () => ['github__close_issue'],
      env: envIn(await folder()),
    });
    const base = { roots: [root] };
    expect(await gate.decide({ ...base, tool: 'write_file', args: { path: 'a' } })).toMatchObject({ kind: 'ask', tool: write });
    expect(await gate.decide({ ...base, tool: 'write_file', args: { path: 'a' }, agent: 'writer' })).toMatchObject({ kind: 'allow', reason: 'the allow rule "write_file" matches' });
    expect(await gate.decide({ ...base, tool: 'patchbay__write_file', args: { path: 'a' }, agent: 'looker' })).toMatchObject({ kind: 'deny', reason: expect.stringMatching(/plan agent/) });
    expect(await gate.decide({ ...base, tool: 'write_file', args: { path: 'a' }, agent: 'nobody' })).toMatchObject({ kind: 'deny', reason: expect.stringMatching(/^Unknown agent "nobody"/) });
    expect(await gate.decide({ ...base, tool: 'nope', args: {} })).toMatchObject({ kind: 'deny', reason: 'Unknown tool "patchbay__nope".' });
    expect((await gate.decide({ ...base, tool: 'nope', args: {} })).tool).toBeUndefined();
    // insideWorkspace: inside for every tool; the memory folder only for the tool it is lent to.
    expect(await gate.decide({ ...base, tool: 'write_file', args: { path: join(extra, 'x') }, trust: true })).toMatchObject({ kind: 'allow', outside: false });
    expect(await gate.decide({ ...base, tool: 'read_file', args: { path: join(memory, 'x') } })).toMatchObject({ kind: 'allow', outside: false });
    expect(await gate.decide({ ...base, tool: 'write_file', args: { path: join(memory, 'x') }, trust: true })).toMatchObject({ kind: 'ask', outside: true });
    // An MCP tool by its full name, or by a bare name and its server.
    expect(await gate.decide({ ...base, tool: 'github__create_issue', args: { title: 'a secret' } })).toMatchObject({ kind: 'deny' });
    expect(await gate.decide({ ...base, tool: 'create_issue', server: 'github', args: { title: 'ok' }, trust: true })).toMatchObject({ kind: 'allow' });
    // A disabled tool is never offered to a chat, so a call to it is refused.
    expect(await gate.decide({ ...base, tool: 'github__close_issue', args: {}, trust: true })).toMatchObject({ kind: 'deny', reason: expect.stringMatching(/disabledTools/) });
  });
});

describe('ToolGate: the OS sandbox', () => {
  const sandboxedShell: Tool = { ...shell, sandboxed: true };
  const policy = { writable: [], readOnly: [], hidden: [], network: false };
  const support = { ok: true as const, kind: 'bubblewrap' as const, bwrap: '/usr/bin/bwrap', version: '0.8.0' };
  const on =
    (autoAllow = true) =>
    () =>
      Promise.resolve({ kind: 'sandboxed' as const, policy, support, autoAllow, wrap: (a: { command: string; args: string[] }) => a });
  const off = () => Promise.resolve({ kind: 'off' as const, why: 'sandbox.enabled is false' });
  const refuse = () => Promise.resolve({ kind: 'refuse' as const, why: 'no bwrap' });

  it('with autoAllow what would ask runs in the sandbox unasked; without it, or off, it asks; deny still denies', async () => {
    const cmd = { command: 'make' };
    expect(await judge(sandboxedShell, cmd, await ctx({ sandbox: on() }))).toMatchObject({ kind: 'allow', reason: expect.stringMatching(/runs in the OS sandbox/) as string });
    expect((await judge(sandboxedShell, cmd, await ctx({ sandbox: on(false) }))).kind).toBe('ask');
    expect((await judge(sandboxedShell, cmd, await ctx({ sandbox: off }))).kind).toBe('ask');
    expect((await judge(sandboxedShell, cmd, await ctx({ sandbox: refuse }))).kind).toBe('ask');
    // A tool that does not run in the sandbox is not let through by it.
    expect((await judge(shell, cmd, await ctx({ sandbox: on() }))).kind).toBe('ask');
    const denied = await judge(sandboxedShell, { command: 'rm -rf x' }, await ctx({ sandbox: on(), approval: { deny: { shell_command: { argsMatchers: { command: ['rm .*'] } } } } }));
    expect(denied.kind).toBe('deny');
  });

  it('"sandbox": false asks every time, whatever allows it: an allow rule, trust mode, a session approval', async () => {
    const args = { command: 'curl example.com', sandbox: false };
    const session: SessionAnswers = { approved: new Set(['patchbay__shell_command']) };
    for (const sandbox of [on(), refuse]) {
      const v = await judge(sandboxedShell, args, await ctx({ sandbox, approval: { byDefault: 'allow', allow: { shell_command: {} } }, trust: true, session }));
      expect(v).toMatchObject({ kind: 'ask', protected: expect.stringMatching(/outside the OS sandbox/) as string });
    }
    // Where the sandbox is off anyway, it changes nothing.
    expect((await judge(sandboxedShell, args, await ctx({ sandbox: off, approval: { byDefault: 'allow' } }))).kind).toBe('allow');
    // A deny rule is still final.
    expect((await judge(sandboxedShell, args, await ctx({ sandbox: on(), approval: { deny: { shell_command: {} } } }))).kind).toBe('deny');
  });
});

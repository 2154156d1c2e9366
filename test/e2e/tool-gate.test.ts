/**
 * The ToolGate outside a chat follows the rules of a chat turn (issue 30 item 4): for one folder
 * and one config, `patchbay tools check` gives every call the verdict a chat turn through
 * `patchbay server` acts on (ECA, fake LLM): denied calls are rejected unasked, calls that ask are
 * announced with `manualApproval`, allowed ones run. A deny rule, the default ask, an ask rule, a
 * protected path, a path outside the folder, preToolCall hooks, a disabled tool, and trust mode (what asked now
 * runs; deny, protected, outside and a hook's ask still hold).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliConfig, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

type Verdict = 'allow' | 'ask' | 'deny';
type Call = { id: string; tool: string; args: Record<string, unknown> };

const APPROVAL = {
  allow: { write_file: {} },
  ask: { read_file: { argsMatchers: { path: ['secret.*'] } } },
  deny: { shell_command: { argsMatchers: { command: ['rm .*'] } } },
};

/** preToolCall hooks: one rejects reading hooked.txt (exit 2), one asks about every grep. */
const HOOKS = {
  guard: { type: 'preToolCall', matcher: { eca__read_file: { argsMatchers: { path: ['hooked.*'] } } }, actions: [{ type: 'shell', shell: 'echo "not that file" >&2; exit 2' }] },
  careful: { type: 'preToolCall', matcher: 'eca__grep', actions: [{ type: 'shell', shell: `echo '{"approval":"ask"}'` }] },
};

function calls(outside: string): Call[] {
  return [
    { id: 'deny', tool: 'shell_command', args: { command: 'rm -f a.txt' } },
    { id: 'shell', tool: 'shell_command', args: { command: 'touch ran-shell' } },
    { id: 'askRule', tool: 'read_file', args: { path: 'secret.txt' } },
    { id: 'git', tool: 'write_file', args: { path: '.git/config', content: '[core]\n\thooksPath = x\n' } },
    { id: 'config', tool: 'write_file', args: { path: '.patchbay/config.json', content: '{"toolCall":{"approval":{"byDefault":"allow"}}}' } },
    { id: 'outside', tool: 'write_file', args: { path: join(outside, 'x.txt'), content: 'x' } },
    { id: 'write', tool: 'write_file', args: { path: 'notes.txt', content: 'ok\n' } },
    { id: 'read', tool: 'read_file', args: { path: 'a.txt' } },
    { id: 'hookDeny', tool: 'read_file', args: { path: 'hooked.txt' } },
    { id: 'hookAsk', tool: 'grep', args: { pattern: 'a' } },
    { id: 'disabled', tool: 'directory_tree', args: { path: '.' } },
  ];
}

/** What the chat did with each call: rejected unasked (deny), asked (then rejected here), or ran. */
async function chatVerdicts(p: EcaProc, list: Call[], trust: boolean, prefix: string): Promise<Record<string, Verdict>> {
  llm().script(...list.map((c) => [{ toolCall: { id: `${prefix}${c.id}`, name: `patchbay__${c.tool}`, args: c.args } }]), [{ text: 'done' }]);
  const chatId = (await p.request('chat/prompt', { message: 'go', trust })).result.chatId;
  const out: Record<string, Verdict> = {};
  for (const c of list) {
    const id = `${prefix}${c.id}`;
    const seen = await p.waitFor(
      (m) => m.method === 'chat/contentReceived' && m.params.chatId === chatId && m.params.content.id === id && ['toolCallRun', 'toolCallRejected'].includes(m.params.content.type),
      `the fate of ${id}`,
    );
    const content = seen.params.content;
    if (content.type === 'toolCallRejected') {
      out[c.id] = 'deny';
      continue;
    }
    out[c.id] = content.manualApproval ? 'ask' : 'allow';
    if (content.manualApproval) p.notify('chat/toolCallReject', { chatId, toolCallId: id });
    else await p.waitFor((m) => m.method === 'chat/contentReceived' && m.params.content.id === id && m.params.content.type === 'toolCalled', `${id} to run`);
  }
  await p.turnDone(chatId);
  return out;
}

/** What `patchbay tools check` says of each call, in the same folder with the same config. */
async function checkVerdicts(home: string, root: string, config: Record<string, unknown>, list: Call[], trust: boolean): Promise<Record<string, Verdict>> {
  const out: Record<string, Verdict> = {};
  for (const c of list) {
    const r = await runPatchbay(['tools', 'check', c.tool, JSON.stringify(c.args), '--json', ...(trust ? ['--trust'] : [])], {
      home,
      cwd: root,
      env: { PATCHBAY_CONFIG: cliConfig(config) },
      timeoutMs: 30_000,
    });
    const v = JSON.parse(r.stdout) as { verdict: Verdict; reason: string };
    expect(r.code, `${c.id}: ${r.output}`).toBe({ allow: 0, ask: 3, deny: 4 }[v.verdict]);
    expect(v.reason, c.id).not.toBe('');
    out[c.id] = v.verdict;
  }
  return out;
}

describe('ToolGate: patchbay tools check and a chat turn agree', () => {
  it('deny rule, default ask, ask rule, protected paths, outside, allow, hooks; with trust mode what asked runs and the rest holds', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n', 'secret.txt': 's\n' }));
    const outside = scratch(tempDir());
    const config = { ...fakeProviderConfig(llm().url), toolCall: { approval: APPROVAL }, hooks: HOOKS, disabledTools: ['directory_tree'] };
    const list = calls(outside);

    const expected: Record<string, Verdict> = {
      deny: 'deny',
      shell: 'ask',
      askRule: 'ask',
      git: 'ask',
      config: 'ask',
      outside: 'ask',
      write: 'allow',
      read: 'allow',
      hookDeny: 'deny',
      hookAsk: 'ask',
      disabled: 'deny',
    };
    const expectedTrusted: Record<string, Verdict> = { ...expected, shell: 'allow', askRule: 'allow' };

    const checked = await checkVerdicts(home, root, config, list, false);
    const checkedTrusted = await checkVerdicts(home, root, config, list, true);
    expect(checked).toEqual(expected);
    expect(checkedTrusted).toEqual(expectedTrusted);
    // The check ran nothing.
    expect(existsSync(join(root, 'notes.txt'))).toBe(false);

    const p = track(new EcaProc({ home, config }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === 'config/updated');
    expect(await chatVerdicts(p, list, false, 'a-')).toEqual(checked);
    expect(existsSync(join(root, 'ran-shell'))).toBe(false);
    expect(await chatVerdicts(p, list, true, 'b-')).toEqual(checkedTrusted);
    // What ran, ran; what was denied or asked (and rejected) did not.
    expect(existsSync(join(root, 'ran-shell'))).toBe(true);
    expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('ok\n');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('a\n');
    expect(existsSync(join(root, '.git'))).toBe(false);
    expect(existsSync(join(root, '.patchbay'))).toBe(false);
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    // Twenty-odd processes one after the other: more than the default 30 s on a loaded machine.
  }, 120_000);

  it('says why, names the protected path, and judges the plan agent; bad usage exits 2 with a pointer to the help', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const config = { toolCall: { approval: APPROVAL } };
    const run = (args: string[]) => runPatchbay(['tools', 'check', ...args], { home, cwd: root, env: { PATCHBAY_CONFIG: cliConfig(config) }, timeoutMs: 30_000 });

    const denied = await run(['shell_command', '{"command":"rm -rf src"}']);
    expect(denied.code).toBe(4);
    expect(denied.stdout).toBe('deny: the deny rule "shell_command" matches\n');

    const git = await run(['patchbay__write_file', '{"path":".git/hooks/pre-commit","content":"x"}', '--json', '--trust']);
    expect(git.code).toBe(3);
    expect(JSON.parse(git.stdout)).toMatchObject({ tool: 'patchbay__write_file', verdict: 'ask', outside: false, protected: expect.stringMatching(/\.git\/hooks\/pre-commit" is protected/) });

    const plan = await run(['write_file', '{"path":"notes.txt","content":"x"}', '--agent', 'plan']);
    expect(plan.code).toBe(4);
    expect(plan.stdout).toMatch(/^deny: the plan agent only reads/);
    // The read-only built-in subagent judges as plan does; its reads are allowed.
    expect((await run(['write_file', '{"path":"notes.txt","content":"x"}', '--agent', 'explorer'])).code).toBe(4);
    expect((await run(['read_file', '{"path":"a.txt"}', '--agent', 'explorer'])).code).toBe(0);

    for (const [args, message] of [
      [['no_such_tool', '{}'], 'Unknown tool "patchbay__no_such_tool"'],
      [['read_file', '[1]'], 'the arguments must be a JSON object'],
      [['read_file', '{nope'], 'the arguments are not JSON'],
      [['read_file', '{}', '--agent', 'nobody'], 'Unknown agent "nobody"'],
      [['read_file', '{}', '--frobnicate'], 'Unknown option --frobnicate'],
      [[], 'check needs a tool name'],
    ] as const) {
      const r = await run([...args]);
      expect(r.code, r.output).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('patchbay tools --help');
      expect(r.stdout).toBe('');
    }
  }, 90_000);

  it('judges as a new chat in the folder would: the configured chat.defaultTrust and chat.defaultAgent apply unless a flag is given', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const run = (config: Record<string, unknown>, args: string[]) => runPatchbay(['tools', 'check', ...args], { home, cwd: root, env: { PATCHBAY_CONFIG: cliConfig(config) }, timeoutMs: 30_000 });
    // By default shell_command runs in the OS sandbox unasked; without autoAllow it asks, and with
    // defaultTrust on a new chat runs it unasked again. Out of the sandbox it asks whatever the rest says.
    const sandboxed = await run({}, ['shell_command', '{"command":"ls"}']);
    expect(sandboxed.code, sandboxed.output).toBe(0);
    expect(sandboxed.stdout).toContain('it runs in the OS sandbox');
    const ask = { sandbox: { autoAllow: false } };
    expect((await run(ask, ['shell_command', '{"command":"ls"}'])).code).toBe(3);
    expect((await run({ ...ask, chat: { defaultTrust: true } }, ['shell_command', '{"command":"ls"}'])).code).toBe(0);
    const out = await run({ chat: { defaultTrust: true } }, ['shell_command', '{"command":"ls","sandbox":false}']);
    expect(out.code).toBe(3);
    expect(out.stdout).toContain('outside the OS sandbox');
    // The plan agent as the default: a write is refused, unless --agent names another.
    const plan = { chat: { defaultAgent: 'plan', defaultTrust: true } };
    expect((await run(plan, ['write_file', '{"path":"n.txt","content":"x"}'])).stdout).toMatch(/^deny: the plan agent only reads/);
    expect((await run(plan, ['write_file', '{"path":"n.txt","content":"x"}', '--agent', 'code'])).code).toBe(0);
  }, 90_000);
});

/**
 * ECA's hooks over the built binary (eca docs/config/hooks.md is the contract; the behaviour each
 * test follows is named on it): shell actions get the event as JSON on stdin and answer on
 * stdout (exit 0) or stderr (exit 2); their runs are shown as hookActionStarted/Finished contents
 * (eca chat/lifecycle.clj `notify-before-hook-action!` / `notify-after-hook-action!`, rendered by
 * eca-emacs eca-chat.el `eca-chat--handle-content` "hookActionStarted"/"hookActionFinished").
 */
import { isAlive } from '../../src/util/pid.js';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(hooks: Record<string, unknown>, files: Record<string, string> = { 'a.txt': 'alpha secret42\n' }) {
  const root = workspace(files);
  const home = tempDir();
  const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { hooks }) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root, home };
}

async function prompt(p: EcaProc, message: string): Promise<string> {
  const chatId = (await p.request(ECA.chatPrompt, { message })).result.chatId;
  await p.turnDone(chatId, 1, 30_000);
  return chatId;
}

const of = (p: EcaProc, chatId: string, type: string) =>
  p
    .contents(chatId)
    .filter((c) => c.content.type === type)
    .map((c) => c.content);

/** The tool message of the last request the fake LLM got (openai-chat). */
const lastToolMessage = () =>
  llm()
    .requests.at(-1)!
    .body.messages.filter((m: any) => m.role === 'tool')
    .at(-1);

describe('hooks', () => {
  // hooks.md "preToolCall": exit 2 rejects the call, stderr is the reason the LLM reads (tool_calls.clj `process-pre-tool-call-hook-result`).
  it('a preToolCall hook that exits 2 rejects the call; the model reads its stderr and the turn goes on', async () => {
    const { p } = await boot({ guard: { type: 'preToolCall', matcher: 'eca__read_file', actions: [{ type: 'shell', shell: 'echo "reading is not allowed here" >&2; exit 2' }] } });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'ok then' }]);
    const chatId = await prompt(p, 'read a.txt');
    const rejected = of(p, chatId, 'toolCallRejected')[0];
    expect(rejected).toMatchObject({ id: 'c1', name: 'read_file', reason: 'hookRejected' });
    expect(lastToolMessage().content).toBe('reading is not allowed here');
    expect(of(p, chatId, 'toolCalled')).toEqual([]);
    expect(p.text(chatId)).toBe('ok then');
  });

  // hooks.md "Choosing a denial method": exit 0 + approval "deny" + additionalContext.
  it('a preToolCall hook answering approval "deny" rejects the call with its additionalContext as the reason', async () => {
    const { p } = await boot({
      policy: {
        type: 'preToolCall',
        matcher: { eca__read_file: { argsMatchers: { path: ['.*\\.txt'] } } },
        actions: [{ type: 'shell', shell: `echo '{"approval":"deny","additionalContext":"text files are off limits"}'` }],
      },
    });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'understood' }]);
    const chatId = await prompt(p, 'read a.txt');
    expect(of(p, chatId, 'toolCallRejected')[0]).toMatchObject({ id: 'c1', reason: 'hookRejected' });
    expect(lastToolMessage().content).toBe('text files are off limits');
    // The block names the call it acted on.
    expect(of(p, chatId, 'hookActionFinished')[0]).toMatchObject({ name: 'policy', status: 0, toolCallId: 'c1' });
  });

  // hooks.md "postToolCall": replacedOutput replaces the result the LLM reads (tool_calls.clj `run-post-tool-call-hooks!`).
  it('a postToolCall hook rewrites a tool result and the model receives the rewritten one', async () => {
    const { p } = await boot({
      redact: {
        type: 'postToolCall',
        matcher: 'eca__read_file',
        actions: [
          {
            type: 'shell',
            shell: `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const i=JSON.parse(s);console.log(JSON.stringify({replacedOutput:i.tool_response.replace(/secret\\d+/g,"[REDACTED]")}))})'`,
          },
        ],
      },
    });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'done' }]);
    const chatId = await prompt(p, 'read a.txt');
    const sent = lastToolMessage().content as string;
    expect(sent).toContain('[REDACTED]');
    expect(sent).not.toContain('secret42');
    const finished = of(p, chatId, 'hookActionFinished')[0];
    expect(finished.output).toMatch(/^Hook executed\nReplacedOutput: ".*\[REDACTED\]/);
  });

  // hooks.md "preRequest": additionalContext is appended to the prompt (chat.clj `prompt-messages!`, wrapped by lifecycle.clj `wrap-additional-context`).
  it('preRequest additionalContext reaches the model with the prompt; the input follows the JSON contract', async () => {
    const { p, root, home } = await boot({
      context: { type: 'preRequest', actions: [{ type: 'shell', shell: `cat > "$PWD/input.json"; echo '{"additionalContext":"the build is green"}'` }] },
    });
    llm().script([{ text: 'noted' }]);
    const chatId = await prompt(p, 'how is the build?');
    const user = llm()
      .requests.at(-1)!
      .body.messages.filter((m: any) => m.role === 'user')
      .at(-1);
    expect(user.content).toContain('how is the build?');
    expect(user.content).toContain('<additionalContext>\nthe build is green\n</additionalContext>');
    // hooks.md "Base input" (hooks.clj `base-hook-data`, `chat-hook-data`): snake_case top-level keys, cwd = the first folder.
    const input = JSON.parse(readFileSync(join(root, 'input.json'), 'utf8'));
    expect(input).toMatchObject({
      hook_name: 'context',
      hook_type: 'preRequest',
      workspaces: [root],
      cwd: root,
      chat_id: chatId,
      agent: 'code',
      behavior: 'code',
      full_model: 'fake/m1',
      prompt: 'how is the build?',
    });
    expect(input.db_cache_path).toContain(home);
    expect(typeof input.session_id).toBe('string');
    expect(typeof input.eca_executable).toBe('string');
  });

  // hooks.md "Execution order": alphabetically by key, actions in order; lifecycle.clj sends Started then Finished with the same id.
  it('hookActionStarted / hookActionFinished arrive in order, alphabetically by hook name, with ECA’s fields', async () => {
    const { p } = await boot({
      zeta: { type: 'preRequest', actions: [{ type: 'shell', shell: 'echo plain text output' }] },
      alpha: {
        type: 'preRequest',
        actions: [
          { type: 'shell', shell: `echo '{"systemMessage":"first says hi"}'` },
          { type: 'shell', shell: 'echo oops >&2; exit 3' },
        ],
      },
      quiet: { type: 'preRequest', visible: false, actions: [{ type: 'shell', shell: 'true' }] },
    });
    llm().script([{ text: 'fine' }]);
    const chatId = await prompt(p, 'go');
    const hooks = p.contents(chatId).filter((c) => c.content.type.startsWith('hookAction'));
    expect(hooks.every((c) => c.role === 'system')).toBe(true);
    const seen = hooks.map((c) => `${c.content.type}:${c.content.name}`);
    expect(seen).toEqual(['hookActionStarted:alpha-1', 'hookActionFinished:alpha-1', 'hookActionStarted:alpha-2', 'hookActionFinished:alpha-2', 'hookActionStarted:zeta', 'hookActionFinished:zeta']);
    const [s1, f1, , f2, , f3] = hooks.map((c) => c.content);
    // docs/protocol.md ChatHookActionStartedContent / ChatHookActionFinishedContent, in its field order.
    expect(Object.keys(s1)).toEqual(['type', 'id', 'name', 'actionType']);
    expect(s1).toMatchObject({ actionType: 'shell' });
    expect(f1).toEqual({ type: 'hookActionFinished', id: s1.id, name: 'alpha-1', actionType: 'shell', status: 0, output: 'Hook executed' });
    expect(f2).toMatchObject({ status: 3, error: 'oops' });
    expect(f3).toMatchObject({ status: 0, output: 'plain text output\n' });
    // systemMessage: its own message, "Hook '<name>': <text>" (lifecycle.clj `hook-system-text`).
    expect(p.text(chatId, 'system')).toContain("Hook 'alpha-1': first says hi\n\n");
    expect(p.text(chatId)).toBe('fine');
  });

  // hooks.clj `run-shell-cmd`: a hook past its timeout is destroyed (its whole tree) and the chat goes on.
  it('a hanging hook is killed at its timeout, with what it started, and the turn goes on', async () => {
    const { p, root } = await boot({
      hang: { type: 'preRequest', timeout: 700, actions: [{ type: 'shell', shell: `sleep 300 & echo $! > "$PWD/child.pid"; wait` }] },
    });
    llm().script([{ text: 'still here' }]);
    const chatId = await prompt(p, 'hello');
    expect(p.text(chatId)).toBe('still here');
    const finished = of(p, chatId, 'hookActionFinished')[0];
    expect(finished).toMatchObject({ name: 'hang', status: 1 });
    expect(finished.error).toMatch(/timed out/);
    const child = Number(readFileSync(join(root, 'child.pid'), 'utf8'));
    await expect.poll(() => isAlive(child), { timeout: 5_000 }).toBe(false);
  });

  // Issue 18 "Done when": a hook command that does not exist or prints garbage is reported by doctor and in the chat.
  it('a missing command, a garbage-printing hook and a missing file are reported in the chat and by doctor; the chat goes on', async () => {
    const { p } = await boot({
      broken: { type: 'preRequest', actions: [{ type: 'shell', shell: 'no-such-command-patchbay-xyz' }] },
      garbage: { type: 'preRequest', visible: false, actions: [{ type: 'shell', shell: `echo '{"additionalContext": oops'` }] },
      // In the home folder: a relative file would be the (untrusted) workspace's, not run at all.
      lost: { type: 'postRequest', actions: [{ type: 'shell', file: '~/hooks/missing.sh' }] },
    });
    llm().script([{ text: 'answered' }]);
    const chatId = await prompt(p, 'hi');
    expect(p.text(chatId)).toBe('answered');
    expect(of(p, chatId, 'hookActionFinished').find((c) => c.name === 'broken')).toMatchObject({ status: 127 });
    expect(p.text(chatId, 'system')).toMatch(/hooks: "garbage" \(preRequest\) printed output that is not a JSON object/);
    const second = (await p.request(ECA.chatPrompt, { chatId, message: '/doctor' })).result.chatId;
    await p.turnDone(second, 2);
    const doctor = p.text(chatId, 'system');
    expect(doctor).toMatch(/Hooks \(3\): broken \(preRequest\), garbage \(preRequest\), lost \(postRequest\)/);
    expect(doctor).toMatch(/hooks: "broken" \(preRequest\) its command was not found \(exit 127\)/);
    expect(doctor).toMatch(/hooks: "lost": file .*hooks\/missing\.sh does not exist/);
  });

  // hooks.md "/hooks command" (commands.clj `hooks-msg`).
  it('/hooks lists the hooks grouped by type', async () => {
    const { p } = await boot({
      b: { type: 'postToolCall', description: 'audit', matcher: 'eca__.*', actions: [{ type: 'shell', shell: 'true' }] },
      a: { type: 'preRequest', visible: false, actions: [{ type: 'shell', shell: 'true' }] },
    });
    const chatId = (await p.request(ECA.chatPrompt, { message: '/hooks' })).result.chatId;
    await p.turnDone(chatId);
    expect(p.text(chatId, 'system')).toContain('Hooks active:\n\n**preRequest**\n- `a` *(hidden)*\n\n**postToolCall**\n- `b` — audit matcher: `eca__.*`\n');
  });

  // held-back.ts: `hooks` run commands, so an untrusted folder's config may not add them.
  it('hooks in an untrusted workspace config do not run', async () => {
    const root = workspace({ 'a.txt': 'x\n' });
    mkdirSync(join(root, '.patchbay'));
    const marker = join(root, 'ran');
    writeFileSync(join(root, '.patchbay', 'config.json'), JSON.stringify({ hooks: { evil: { type: 'preRequest', actions: [{ type: 'shell', shell: `touch ${marker}` }] } } }));
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    await p.initialize(root);
    const held = await p.waitFor((m) => m.method === '$/showMessage' && /held back/.test(m.params.message), 'held-back message');
    expect(held.params.message).toContain('hooks');
    llm().script([{ text: 'done' }]);
    const chatId = await prompt(p, 'hi');
    expect(p.text(chatId)).toBe('done');
    expect(of(p, chatId, 'hookActionStarted')).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });
});

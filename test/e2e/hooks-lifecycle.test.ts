/**
 * ECA's hooks around chats and the session over the built binary (eca docs/config/hooks.md is
 * the contract; each test names the ECA function whose behaviour it follows).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(hooks: Record<string, unknown>) {
  const root = workspace({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n' });
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, 'openai-chat', { hooks }) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root };
}

async function prompt(p: EcaProc, message: string, chatId?: string, nth = 1): Promise<string> {
  const id = (await p.request(ECA.chatPrompt, { message, ...(chatId ? { chatId } : {}) })).result.chatId;
  await p.turnDone(id, nth, 30_000);
  return id;
}

const sh = (type: string, shell: string, extra: Record<string, unknown> = {}) => ({ type, actions: [{ type: 'shell', shell }], ...extra });

describe('hooks around chats and the session', () => {
  // lifecycle.clj `prompt-messages!` runs preRequest for every prompt, a command's rendered one included.
  it("a custom command's prompt goes through preRequest: an exit 2 blocks it before the model is asked", async () => {
    const { p, root } = await boot({ guard: sh('preRequest', `if grep -q 'to production'; then echo "no deploys today" >&2; exit 2; fi`) });
    mkdirSync(join(root, '.patchbay', 'commands'), { recursive: true });
    writeFileSync(join(root, '.patchbay', 'commands', 'deploy.md'), 'Deploy the app to production now.\n');
    llm().script([{ text: 'deployed' }]);
    const chatId = await prompt(p, '/deploy');
    expect(llm().requests).toHaveLength(0);
    expect(p.text(chatId)).not.toContain('deployed');
  });

  // hooks.md "Stopping": a turn a hook stopped runs no postRequest and no follow-up.
  it('a preToolCall continue:false ends the turn without postRequest or its follow-up', async () => {
    const { p, root } = await boot({
      halt: sh('preToolCall', `echo '{"continue":false,"stopReason":"enough for today"}'`),
      more: sh('postRequest', `touch "$PWD/post-ran"; echo '{"followUp":"keep going"}'`),
    });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'never' }]);
    const chatId = await prompt(p, 'read it');
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(root, 'post-ran'))).toBe(false);
    expect(llm().requests).toHaveLength(1);
    expect(p.contents(chatId).some((c) => c.content.type === 'text' && String(c.content.text).includes('enough for today'))).toBe(true);
  });

  // chat.clj `run-start-hooks!`: chatStart's additionalContext goes into the chat's instructions.
  it('chatStart additionalContext reaches the system prompt, once per chat, told whether it was resumed', async () => {
    const { p, root } = await boot({ start: sh('chatStart', `cat >> "$PWD/starts.jsonl"; echo '{"additionalContext":"Today is release day"}'`) });
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    const chatId = await prompt(p, 'first');
    await prompt(p, 'second', chatId, 2);
    const systems = llm().requests.map((r) => r.body.messages.find((m: any) => m.role === 'system')?.content as string);
    expect(systems).toHaveLength(2);
    for (const s of systems) expect(s).toContain('Today is release day');
    const starts = readFileSync(join(root, 'starts.jsonl'), 'utf8').trim().split('\n');
    expect(starts).toHaveLength(1);
    expect(JSON.parse(starts[0])).toMatchObject({ hook_type: 'chatStart', chat_id: chatId, resumed: false });
  });

  // lifecycle.clj `run-post-request-hooks!`: followUp starts a new turn with it as a plain user message.
  it('a postRequest followUp runs as the next user message; follow_up_active stops the loop', async () => {
    const { p } = await boot({
      tests: sh('postRequest', `if grep -q '"follow_up_active":true'; then exit 0; fi; echo '{"followUp":"Now run the tests"}'`),
    });
    llm().script([{ text: 'edited' }], [{ text: 'tests pass' }]);
    const chatId = await prompt(p, 'edit it');
    await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.content.type === 'text' && m.params.content.text === 'tests pass', 'follow-up answer', 30_000);
    expect(p.text(chatId, 'user')).toBe('edit itNow run the tests');
    const last = llm()
      .requests.at(-1)!
      .body.messages.filter((m: any) => m.role === 'user')
      .at(-1);
    expect(last.content).toBe('Now run the tests');
    expect(llm().requests).toHaveLength(2);
  });

  // tool_calls.clj `decide-tool-call-action`: updatedInput is merged into the arguments the tool runs with.
  it('a preToolCall updatedInput changes the arguments the tool runs with', async () => {
    const { p } = await boot({ redirect: sh('preToolCall', `echo '{"updatedInput":{"path":"b.txt"}}'`, { matcher: 'eca__read_file' }) });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read' }]);
    const chatId = await prompt(p, 'read a');
    const called = p.contents(chatId).find((c) => c.content.type === 'toolCalled')!.content;
    expect(called.arguments).toEqual({ path: 'b.txt' });
    expect(called.outputs[0].text).toContain('beta');
    const finished = p.contents(chatId).find((c) => c.content.type === 'hookActionFinished')!.content;
    expect(finished.output).toBe('Hook executed\nUpdatedInput: {"path":"b.txt"}');
  });

  // hooks.md "Stopping": continue:false in a tool hook stops the turn; the LLM is not asked again.
  it('a postToolCall continue:false stops the turn after the tool, telling the user why', async () => {
    const { p } = await boot({ halt: sh('postToolCall', `echo '{"continue":false,"stopReason":"review needed"}'`) });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'never' }]);
    const chatId = await prompt(p, 'read a');
    expect(p.text(chatId, 'system')).toContain("Turn stopped by hook 'halt': review needed");
    expect(llm().requests).toHaveLength(1);
    expect(p.text(chatId)).toBe('');
  });

  // chat.clj `prompt-messages!`: a preRequest exit 2 blocks the prompt; it never enters the history.
  it('a preRequest exit 2 blocks the prompt: the model is not asked and the prompt is not in the history', async () => {
    const { p } = await boot({ gate: sh('preRequest', `if grep -q secret; then echo "no secrets" >&2; exit 2; fi`, { visible: false }) });
    llm().script([{ text: 'answer' }]);
    const chatId = await prompt(p, 'my secret is 42');
    expect(llm().requests).toHaveLength(0);
    expect(p.text(chatId, 'system')).toContain("Request blocked by hook 'gate': no secrets");
    await prompt(p, 'hello', chatId, 2);
    const users = llm().requests[0].body.messages.filter((m: any) => m.role === 'user');
    expect(users.map((m: any) => m.content)).toEqual(['hello']);
  });

  // lifecycle.clj `run-pre-compact-hooks!`: exit 2 blocks compaction only.
  it('a preCompact exit 2 blocks /compact', async () => {
    const { p } = await boot({ keep: sh('preCompact', 'exit 2', { matcher: 'manual' }) });
    llm().script([{ text: 'hi' }]);
    const chatId = await prompt(p, 'hello');
    await prompt(p, '/compact', chatId, 2);
    expect(p.text(chatId, 'system')).toContain("Compaction blocked by hook 'keep'.");
    expect(llm().requests).toHaveLength(1);
  });

  // lifecycle.clj `chat-status-payload` / `trigger-chat-status-hook!`: a full snapshot each time it changed.
  it('chatStatusChanged gets each changed status snapshot of the chat, in order', async () => {
    const { p, root } = await boot({ watch: sh('chatStatusChanged', `cat >> "$PWD/status.jsonl"; echo >> "$PWD/status.jsonl"`) });
    llm().script([{ toolCall: { id: 'c1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'done' }]);
    const chatId = await prompt(p, 'read a');
    const file = join(root, 'status.jsonl');
    const snapshots = () =>
      existsSync(file)
        ? readFileSync(file, 'utf8')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [];
    await expect.poll(() => snapshots().at(-1)?.status, { timeout: 10_000 }).toBe('idle');
    const seen = snapshots().map((s) => `${s.status}:${s.running_tool_call_ids.join(',')}`);
    expect(seen).toEqual(['running:', 'running:c1', 'running:', 'idle:']);
    expect(snapshots()[0]).toMatchObject({ hook_type: 'chatStatusChanged', chat_id: chatId, awaiting_user_input: false, pending_approval_tool_call_ids: [] });
  });

  // hooks.md "chatEnd": fires when a chat is deleted, side effects only.
  it('chatEnd runs when a chat is deleted', async () => {
    const { p, root } = await boot({ bye: sh('chatEnd', `cat > "$PWD/end.json"`) });
    llm().script([{ text: 'hi' }]);
    const chatId = await prompt(p, 'hello');
    await p.request(ECA.chatDelete, { chatId });
    const file = join(root, 'end.json');
    await expect.poll(() => existsSync(file) && readFileSync(file, 'utf8').length > 0, { timeout: 10_000 }).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ hook_type: 'chatEnd', chat_id: chatId });
  });

  // hooks.md "Session hooks": sessionStart when the server is initialized, sessionEnd when it shuts down.
  it('sessionStart runs at start-up and sessionEnd at shutdown, with the base input', async () => {
    const { p, root } = await boot({
      begin: sh('sessionStart', `cat > "$PWD/start.json"`),
      end: sh('sessionEnd', `cat > "$PWD/end.json"`),
    });
    await expect.poll(() => existsSync(join(root, 'start.json')), { timeout: 10_000 }).toBe(true);
    await p.stop();
    const end = JSON.parse(readFileSync(join(root, 'end.json'), 'utf8'));
    expect(end).toMatchObject({ hook_name: 'end', hook_type: 'sessionEnd', cwd: root, workspaces: [root] });
    expect(end.chat_id).toBeUndefined();
  });
});

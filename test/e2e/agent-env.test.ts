/**
 * What a command the model or a hook runs is told about itself (issue 28, point 4): ECA's
 * docs/config/tools.md "Spawned command environment" — `ECA_AGENT=1` always, `ECA_CHAT_ID` the
 * chat that triggered it — and patchbay's own `PATCHBAY_CHAT_ID`. Checked for a foreground
 * `shell_command`, a background job, a hook, and a command run in an ACP client's terminal.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const trackAcp = useAcpProcs();

const PRINT = 'echo "agent=$ECA_AGENT eca=$ECA_CHAT_ID pb=$PATCHBAY_CHAT_ID"';
const seen = (chatId: string) => `agent=1 eca=${chatId} pb=${chatId}`;

/** The text of the tool messages of the last request the fake LLM got (openai-chat): the whole chat's. */
const toolTexts = () =>
  (llm().requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content))
    .join('\n');

describe('the environment of what patchbay runs for a chat', () => {
  it('a shell command, a background job and a hook see ECA_AGENT=1 and the chat id', async () => {
    const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
    const home = scratch(tempDir());
    // The hook writes what it saw into the workspace; it runs before the read_file call.
    const hooks = { seeEnv: { type: 'preToolCall', matcher: 'eca__read_file', actions: [{ type: 'shell', shell: `${PRINT} > hook-env.txt` }] } };
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { hooks, toolCall: { approval: { byDefault: 'allow' } } }) }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    llm().script(
      [{ toolCall: { id: 'fg', name: 'patchbay__shell_command', args: { command: PRINT } } }],
      [{ toolCall: { id: 'bg', name: 'patchbay__shell_command', args: { command: `${PRINT}; sleep 30`, background: 'env-job' } } }],
      [{ toolCall: { id: 'rd', name: 'patchbay__read_file', args: { path: 'a.txt' } } }],
      [{ text: 'done' }],
    );
    const chatId = (await p.request(ECA.chatPrompt, { message: 'show the environment' })).result.chatId as string;
    await p.turnDone(chatId, 1, 30_000);
    const texts = toolTexts();
    // The foreground command's output and the job's first output, as the model read them.
    expect(texts.split(seen(chatId)).length - 1, texts).toBe(2);
    expect(readFileSync(join(root, 'hook-env.txt'), 'utf8').trim()).toBe(seen(chatId));
    await p.request(ECA.jobsKill, { jobId: 'job-1' }).catch(() => undefined);
  });

  it('a command run in the ACP client’s terminal is given the same variables', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace());
    const p = trackAcp(new AcpProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } } }) }));
    await p.initialize({ terminal: true });
    const sessionId = await p.newSession(root);
    llm().script([{ toolCall: { id: 's1', name: 'patchbay__shell_command', args: { command: PRINT } } }], [{ text: 'ran' }]);
    expect((await p.prompt(sessionId, 'run it')).stopReason).toBe('end_turn');
    const create = p.terminals.calls.find((c) => c.method === 'create');
    expect(create?.params).toMatchObject({
      env: expect.arrayContaining([
        { name: 'ECA_AGENT', value: '1' },
        { name: 'ECA_CHAT_ID', value: sessionId },
        { name: 'PATCHBAY_CHAT_ID', value: sessionId },
      ]) as unknown,
    });
    expect(toolTexts()).toContain(seen(sessionId));
  });
});

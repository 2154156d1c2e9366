/**
 * argsMatchers on shell_command over the built binary (issue 14, point 1): a newline, a
 * separator, quotes or a command substitution must not hide a command an ask rule names, and an
 * allow rule must cover every command of the line.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

async function boot(approval: Record<string, unknown>) {
  const root = scratch(workspace({ 'victim.txt': 'precious\n', x: 'x\n' }));
  const p = track(new EcaProc({ home: scratch(tempDir()), config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval } }) }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === 'config/updated');
  return { p, root };
}

/**
 * Has the fake LLM call shell_command with each command in turn; rejects the ones that ask.
 * Returns each call's manualApproval.
 */
async function runCommands(p: EcaProc, commands: string[]): Promise<boolean[]> {
  llm().script(...commands.map((command, k) => [{ toolCall: { id: `s${k}`, name: 'patchbay__shell_command', args: { command } } }]), [{ text: 'done' }]);
  const chatId = (await p.request('chat/prompt', { message: 'run them' })).result.chatId;
  const asked: boolean[] = [];
  for (let k = 0; k < commands.length; k++) {
    const run = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === `s${k}`, `toolCallRun s${k}`);
    asked.push(run.params.content.manualApproval);
    if (run.params.content.manualApproval) p.notify('chat/toolCallReject', { chatId, toolCallId: `s${k}` });
  }
  await p.turnDone(chatId);
  return asked;
}

describe('shell_command approval per simple command', () => {
  it('an ask rule ".*rm .*" asks for rm after a newline, a separator, in quotes or in $(…); the file survives', async () => {
    const { p, root } = await boot({ byDefault: 'allow', ask: { shell_command: { argsMatchers: { command: ['.*rm .*'] } } } });
    const attacks = ['true\nrm victim.txt', 'true; rm victim.txt', 'true && "r"m victim.txt', 'true || r\\m victim.txt', 'echo $(rm victim.txt)'];
    // The last one shows byDefault "allow" is in force: a harmless line runs unasked.
    const asked = await runCommands(p, [...attacks, 'true; echo fine']);
    expect(asked).toEqual([true, true, true, true, true, false]);
    expect(existsSync(join(root, 'victim.txt'))).toBe(true);
  });

  it('an allow rule "git .*" allows git alone, not git followed by another command or writing a file', async () => {
    const { p, root } = await boot({ allow: { shell_command: { argsMatchers: { command: ['git .*'] } } } });
    const asked = await runCommands(p, ['git --version', 'git --version; rm x', 'git --version > victim.txt', 'git --version\nrm x']);
    expect(asked).toEqual([false, true, true, true]);
    expect(existsSync(join(root, 'x'))).toBe(true);
  });
});

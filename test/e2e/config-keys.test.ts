/**
 * Config files over the built binary: unknown keys are reported (file, dotted path, did-you-mean)
 * in the editor and in `patchbay doctor` while the rest applies; ECA keys patchbay does not
 * implement are named as such; files are JSONC (comments, trailing commas).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliConfig, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

function userConfig(home: string, text: string): string {
  mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
  const file = join(home, '.config', 'patchbay', 'config.json');
  writeFileSync(file, text);
  return file;
}

/** `patchbay doctor`'s stdout and stderr, interleaved. */
async function doctor(home: string, cwd: string): Promise<string> {
  const env = { PATCHBAY_CONFIG: cliConfig(fakeProviderConfig(llm().url)) };
  return (await runPatchbay(['doctor'], { home, cwd, env, stdin: null, timeoutMs: 30_000 })).output;
}

const warnings = (p: EcaProc): string[] => p.messages.filter((m) => m.method === '$/showMessage').map((m) => m.params.message);

describe('config keys', () => {
  it('reports a misspelt key with a did-you-mean in the editor and in doctor; the rest applies', async () => {
    const home = tempDir();
    const file = userConfig(
      home,
      JSON.stringify({
        mcpServer: { x: { command: 'true' } },
        welcomeMessage: 'still applied',
        toolCall: { approval: { byDefualt: 'deny', deny: { grep: { argMatchers: {} } } } },
        chat: { maxRetrys: 2 },
        customTools: { pre: {} },
      }),
    );
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    const init = await p.initialize(workspace());
    expect(init.result.chatWelcomeMessage).toBe('still applied');
    await p.waitFor((m) => m.method === '$/showMessage' && m.params.message.includes('"mcpServer"'), 'mcpServer warning');
    await p.waitFor((m) => m.method === 'config/updated', 'config/updated');
    const shown = warnings(p);
    expect(shown).toContain(`Invalid config in ${file} at mcpServer: unknown key "mcpServer"; did you mean "mcpServers"?`);
    expect(shown).toContain(`Invalid config in ${file} at toolCall.approval.byDefualt: unknown key "byDefualt"; did you mean "byDefault"?`);
    expect(shown).toContain(`Invalid config in ${file} at toolCall.approval.deny.grep.argMatchers: unknown key "argMatchers"; did you mean "argsMatchers"?`);
    expect(shown).toContain(`Invalid config in ${file} at chat.maxRetrys: unknown key "maxRetrys"; did you mean "maxRetries"?`);
    // An ECA key is not a typo, and the editor is not bothered with it.
    expect(shown.some((m) => m.includes('customTools'))).toBe(false);

    const report = await doctor(home, workspace());
    expect(report).toContain('at mcpServer: unknown key "mcpServer"; did you mean "mcpServers"?');
    expect(report).toContain('Config warning in');
    expect(report).toContain('at customTools: "customTools" is an ECA setting patchbay does not implement; ignored');
    expect(report).not.toContain('Config problems: none');
  });

  it('a wrongly cased key in a workspace file is reported too', async () => {
    const root = workspace({ '.patchbay/config.json': JSON.stringify({ toolcall: { approval: { deny: { grep: null } } }, welcomeMessage: 'ws' }) });
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    const init = await p.initialize(root);
    expect(init.result.chatWelcomeMessage).toBe('ws');
    const msg = await p.waitFor((m) => m.method === '$/showMessage' && m.params.message.includes('toolcall'), 'toolcall warning');
    expect(msg.params.message).toBe(`Invalid config in ${join(root, '.patchbay', 'config.json')} at toolcall: unknown key "toolcall"; did you mean "toolCall"?`);
  });

  it('loads a JSONC config file with comments and trailing commas', async () => {
    const home = tempDir();
    userConfig(
      home,
      `// my patchbay config
{
  /* shown when a chat opens */
  "welcomeMessage": "from jsonc", // trailing comment
  "chat": { "defaultAgent": "plan", },
  "disabledTools": ["move_file",],
}
`,
    );
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    const init = await p.initialize(workspace());
    expect(init.result.chatWelcomeMessage).toBe('from jsonc');
    expect(init.result.chatDefaultBehavior).toBe('plan');
    await p.waitFor((m) => m.method === 'config/updated', 'config/updated');
    expect(warnings(p)).toEqual([]);
  });

  it('a broken JSONC file is still reported with line and column, and skipped', async () => {
    const home = tempDir();
    const file = userConfig(home, '{\n  // fine\n  "welcomeMessage": "x"\n  "defaultModel": "y"\n}\n');
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace());
    const msg = await p.waitFor((m) => m.method === '$/showMessage', 'parse error');
    expect(msg.params.message).toBe(`Invalid config in ${file}: Invalid JSON at line 4, column 3: expected ','; file ignored`);
  });
});

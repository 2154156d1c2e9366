/**
 * A config file that is not a regular file, or is huge (issue 31 findings 5 and 6), over the built
 * binary: a FIFO nobody writes to (mkfifo) as the workspace's or the user's config, at start and
 * swapped in while the server runs, and a sparse 300 MB file (no disk used). The server answers
 * `initialize` and later requests, the editor is told with the file's path (`$/showMessage`, as for
 * any config problem), and `patchbay doctor` lists it under "Config problems". Before, a FIFO hung
 * the server at start or on the reload, and the 300 MB file failed every `initialize` with -32603.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliConfig, ECA, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, useTempDirs, workspace, type Msg } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

const NOT_REGULAR = 'is not a regular file (a FIFO, socket or device); ignored';
const TOO_LARGE = 'is 300 MB, over the 4 MB a config file may have; ignored';

function userConfigFile(home: string): string {
  mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
  return join(home, '.config', 'patchbay', 'config.json');
}
const fifo = (path: string): string => (execFileSync('mkfifo', [path]), path);
const sparse300 = (path: string): string => (writeFileSync(path, ''), truncateSync(path, 300 * 1024 * 1024), path);

function shown(p: EcaProc, text: string, from = 0): Promise<Msg> {
  return p.waitFor((m) => m.method === ECA.showMessage.method && String(m.params.message).includes(text), `$/showMessage with "${text}"`, 15_000, from);
}

/** The server still works: a prompt gets the fake LLM's answer. */
async function answers(p: EcaProc): Promise<void> {
  llm().script([{ text: 'still here' }]);
  const r = await p.request(ECA.chatPrompt, { message: 'hi' });
  expect(r.error).toBeUndefined();
  await p.turnDone(r.result.chatId);
  expect((await p.request(ECA.providersList, {})).error).toBeUndefined();
}

async function doctor(home: string, cwd: string): Promise<string> {
  return (await runPatchbay(['doctor'], { home, cwd, env: { PATCHBAY_CONFIG: cliConfig(fakeProviderConfig(llm().url)) }, stdin: null, timeoutMs: 30_000 })).output;
}

describe('a config file that is not a regular file or is too large', () => {
  for (const [name, make, message] of [
    ['a FIFO', fifo, NOT_REGULAR],
    ['a sparse 300 MB file', sparse300, TOO_LARGE],
  ] as const) {
    it(`${name} as the workspace config: initialize answers, the editor and doctor name the file, the server works`, async () => {
      const home = scratch(tempDir());
      const root = scratch(workspace({ '.patchbay/.keep': '' }));
      const file = make(join(root, '.patchbay', 'config.json'));
      const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { welcomeMessage: 'from the env' }) }));
      const init = await p.initialize(root);
      expect(init.error).toBeUndefined();
      expect(init.result.chatWelcomeMessage).toBe('from the env');
      await shown(p, `Invalid config in ${file}: ${message}`);
      await answers(p);
      expect(await doctor(home, root)).toContain(`Invalid config in ${file}: ${message}`);
    });

    it(`${name} as the user config: initialize answers and the editor names the file`, async () => {
      const home = scratch(tempDir());
      const file = make(userConfigFile(home));
      const root = scratch(workspace({ '.patchbay/config.json': JSON.stringify({ welcomeMessage: 'from the workspace' }) }));
      const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
      const init = await p.initialize(root);
      expect(init.error).toBeUndefined();
      expect(init.result.chatWelcomeMessage).toBe('from the workspace');
      await shown(p, `Invalid config in ${file}: ${message}`);
      await answers(p);
    });
  }

  for (const where of ['workspace', 'user'] as const) {
    it(`a FIFO swapped in for the ${where} config while the server runs: reported, and the server works`, async () => {
      const home = scratch(tempDir());
      const root = scratch(workspace({ '.patchbay/.keep': '' }));
      const file = where === 'workspace' ? join(root, '.patchbay', 'config.json') : userConfigFile(home);
      writeFileSync(file, JSON.stringify({ welcomeMessage: 'before' }));
      const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
      expect((await p.initialize(root)).result.chatWelcomeMessage).toBe('before');
      await p.waitFor((m) => m.method === ECA.configUpdated.method, 'config/updated');
      const from = p.messages.length;
      // Made beside it and renamed over it, as an editor's save replaces a file.
      renameSync(fifo(join(root, 'swap.fifo')), file);
      await shown(p, `Invalid config in ${file}: is not a regular file (a FIFO, socket or device); patchbay keeps the config it had until the file is fixed`, from);
      await answers(p);
    });
  }
});

/**
 * A new user's first run with no network: no API key, no provider, no Ollama, and the default
 * local model cannot be downloaded. The failure must say what to do next, in the editor (the
 * chat's content) and in `patchbay chat` (stderr, exit 1). HF_ENDPOINT (the Hugging Face
 * mirror variable) points the download at an address that cannot answer.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliConfig, EcaProc, refusedPort, runPatchbay, tempDir, useEcaProcs, workspace } from './harness.js';

const track = useEcaProcs();

const DEFAULT_URI = 'hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf';

/** The next steps every offline failure lists. */
function expectNextSteps(text: string, configPath: string): void {
  expect(text).toContain('Without this download, patchbay can use any one of these:');
  expect(text).toContain('set OPENAI_API_KEY or ANTHROPIC_API_KEY');
  expect(text).toContain('set OLLAMA_API_URL');
  expect(text).toContain(`a provider in ${configPath}`);
  expect(text).toContain('PATCHBAY_LOCAL_MODEL=/path/to/model.gguf');
  expect(text).toContain('`patchbay models pull qwen2.5-coder-1.5b`');
}

describe('first run with no network', () => {
  it('in the editor: the chat says the default model could not be fetched and what else works', async () => {
    const port = await refusedPort();
    const home = tempDir();
    const p = track(
      new EcaProc({
        home,
        config: { chat: { generateTitles: false } },
        // The built-in default local model (PATCHBAY_LOCAL_MODEL unset), fetched through an unreachable mirror.
        env: { PATCHBAY_LOCAL_MODEL: '', HF_ENDPOINT: `http://127.0.0.1:${port}`, OLLAMA_API_URL: `http://127.0.0.1:${port}` },
      }),
    );
    await p.initialize(workspace());
    const cfg = await p.waitFor((m) => m.method === 'config/updated', 'config/updated');
    expect(cfg.params.chat.selectModel).toBe('local/qwen2.5-coder-1.5b');
    const res = await p.request('chat/prompt', { message: 'What does this project do?' });
    const chatId = res.result.chatId as string;
    await p.turnDone(chatId, 1, 60_000);
    const text = p.text(chatId, 'system');
    expect(text).toContain(`Error from local/qwen2.5-coder-1.5b: Could not get the local model ${DEFAULT_URI}: could not download http://127.0.0.1:${port}/Qwen/`);
    expect(text).toMatch(/ECONNREFUSED/);
    expectNextSteps(text, join(home, '.config', 'patchbay', 'config.json'));
    // Nothing half-downloaded is left behind, and the server is still up.
    expect(existsSync(join(home, '.patchbay', 'models', 'hf_Qwen_Qwen2.5-Coder-1.5B-Instruct-GGUF_qwen2.5-coder-1.5b-instruct-q4_k_m.gguf'))).toBe(false);
    expect((await p.request('chat/list', {})).error).toBeUndefined();
  }, 90_000);

  it("`patchbay chat` (the README's first command): the next steps on stderr, exit 1", async () => {
    const home = tempDir();
    const port = await refusedPort();
    const { code, stdout, stderr } = await runPatchbay(['chat', 'What does this project do?'], {
      home,
      cwd: workspace(),
      env: {
        XDG_CONFIG_HOME: join(home, 'xdg'),
        // The built-in default local model (PATCHBAY_LOCAL_MODEL unset)…
        PATCHBAY_LOCAL_MODEL: undefined,
        // …from a host that cannot resolve, as huggingface.co does offline.
        HF_ENDPOINT: 'https://huggingface.invalid',
        OLLAMA_API_URL: `http://127.0.0.1:${port}`,
        PATCHBAY_CONFIG: cliConfig({ chat: { generateTitles: false } }),
      },
      stdin: null,
      timeoutMs: 0,
      until: 'close',
    });
    expect(code, stderr).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toContain('Could not get the local model hf:Qwen/');
    expect(stderr).toContain('https://huggingface.invalid/Qwen/');
    expectNextSteps(stderr, join(home, 'xdg', 'patchbay', 'config.json'));
  }, 90_000);
});

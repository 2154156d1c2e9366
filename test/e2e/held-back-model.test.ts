/**
 * Held back, not missing. When the only provider comes from an untrusted folder's
 * `.patchbay/config.json`, its url and key are held back until the folder is trusted
 * (config/held-back.ts), so no model can be used. The chat's own answer says so, names what is
 * held back and how to trust the folder (`/trust`, `patchbay trust`): eca-webview and other
 * clients never show the `$/showMessage` that says it at start-up, and "No LLM is configured"
 * sent the user to configure what the folder already has. The same text answers over ACP.
 */
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const trackAcp = useAcpProcs();

/** A folder whose own config is the only one naming a provider. */
function folderWithProvider(): string {
  const config = {
    providers: { proj: { api: 'openai-chat', url: `${llm().url}/v1`, key: 'folder-key', models: { m1: {} } } },
    defaultModel: 'proj/m1',
  };
  return scratch(workspace({ '.patchbay/config.json': JSON.stringify(config) }));
}

function expectHeldBackText(text: string, root: string): void {
  expect(text).not.toContain('No LLM is configured');
  expect(text).toContain('held back');
  expect(text).toContain('providers.proj.url');
  expect(text).toContain('/trust');
  expect(text).toContain(`patchbay trust ${root}`);
  // Never the key itself.
  expect(text).not.toContain('folder-key');
}

describe('a provider held back by trust', () => {
  it('ECA: the chat answers what is held back and how to trust the folder, never "No LLM is configured"', async () => {
    const root = folderWithProvider();
    const p = track(new EcaProc({ home: scratch(tempDir()), config: { chat: { generateTitles: false } } }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    const res = await p.request(ECA.chatPrompt, { chatId: 'c1', message: 'hello' });
    expect(res.result.status).toBe('login');
    await p.turnDone('c1');
    const said = p.text('c1', 'system');
    expectHeldBackText(said, root);
    expect(llm().requests).toHaveLength(0);
  });

  it('ACP: session/prompt is refused with the same text', async () => {
    const root = folderWithProvider();
    const p = trackAcp(new AcpProc({ home: scratch(tempDir()), config: { chat: { generateTitles: false } } }));
    await p.initialize();
    const sessionId = await p.newSession(root);
    const err = await p.prompt(sessionId, 'hello').then(
      () => undefined,
      (e: unknown) => e as { message: string; code: number },
    );
    expect(err).toBeDefined();
    expectHeldBackText(err!.message, root);
    expect(llm().requests).toHaveLength(0);
  });
});

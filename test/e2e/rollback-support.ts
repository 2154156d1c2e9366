/** What the chat/rollback e2e files share: a server booted on a workspace, and one trusted turn. */
import { ECA, EcaProc, fakeProviderConfig, tempDir } from './harness.js';
import type { FakeLlm, Step } from '../fixtures/fake-llm.js';

export interface ToolCallScript {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export function rollbackSupport(llm: () => FakeLlm, track: (p: EcaProc) => EcaProc) {
  async function boot(root: string, home = tempDir()): Promise<{ p: EcaProc; home: string }> {
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    return { p, home };
  }

  /** One trusted turn: `message` (contentId `cid`), the model makes `calls` one step each, then says `answer`. */
  async function turn(p: EcaProc, chatId: string, nth: number, cid: string, message: string, calls: ToolCallScript[], answer: string): Promise<void> {
    const steps: Step[][] = calls.map((c) => [{ toolCall: { id: c.id, name: `patchbay__${c.name}`, args: c.args } }]);
    llm().script(...steps, [{ text: answer }]);
    await p.request(ECA.chatPrompt, { chatId, message, contentId: cid, trust: true });
    await p.turnDone(chatId, nth);
  }

  return { boot, turn };
}

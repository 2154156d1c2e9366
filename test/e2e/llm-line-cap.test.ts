import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const OFFERED = 64 * 1024 * 1024;

async function until(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each(['openai-chat', 'openai-responses', 'anthropic', 'ollama'])('an endless stream line over %s', (api) => {
  it('stops the stream at the 8 MB cap with an error the user sees; the chat and server carry on', async () => {
    const p = track(new EcaProc({ home: scratch(tempDir()), config: fakeProviderConfig(llm().url, api) }));
    await p.initialize(scratch(workspace()));
    await p.waitFor((m) => m.method === 'config/updated');
    llm().script([{ text: 'partial answer ' }, { endlessLine: OFFERED }], [{ text: 'second answer' }]);
    const chatId = (await p.request('chat/prompt', { message: 'first' })).result.chatId;
    await p.turnDone(chatId, 1, 60_000);
    expect(p.text(chatId, 'system')).toContain('the LLM sent a line longer than 8 MB; stream stopped');
    // patchbay hung up: the fake saw the connection close long before it had written everything.
    const [run] = llm().endlessLines;
    await until(() => run.clientClosed, 'the fake LLM to see the connection closed');
    expect(run.written).toBeLessThan(OFFERED / 2);
    // No retry of a line that would come again.
    expect(llm().endlessLines).toHaveLength(1);
    // The chat keeps its messages and goes on.
    await p.request('chat/prompt', { chatId, message: 'second' });
    await p.turnDone(chatId, 2);
    expect(p.text(chatId)).toContain('second answer');
    const sent = llm().requests.at(-1)!.body;
    expect(JSON.stringify(sent)).toContain('first');
  }, 90_000);
});

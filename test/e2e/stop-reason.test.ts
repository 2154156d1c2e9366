/**
 * The stop reason of each turn on the ECA wire: the final `progress finished` content carries
 * `stopReason` (a patchbay extension), from the model's own finish reason through every adapter.
 */
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeChatConfig, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(api = 'openai-chat') {
  const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url, api) }));
  await p.initialize(workspace({ 'a.txt': 'alpha\n' }));
  await p.waitFor((m) => m.method === 'config/updated');
  return p;
}

async function stopReason(p: EcaProc, message: string, nth = 1): Promise<unknown> {
  const chatId = (await p.request('chat/prompt', { chatId: 'c1', message })).result.chatId;
  return (await p.turnDone(chatId, nth)).params.content.stopReason;
}

describe.each(['openai-chat', 'openai-responses', 'anthropic'])('stopReason over %s', (api) => {
  it('end_turn, max_tokens at the output limit, refusal', async () => {
    const p = await boot(api);
    llm().script([{ text: 'fine' }], [{ text: 'cut o' }, { finish: 'length' }], [{ finish: 'refusal' }]);
    expect(await stopReason(p, 'a')).toBe('end_turn');
    expect(await stopReason(p, 'b', 2)).toBe('max_tokens');
    expect(await stopReason(p, 'c', 3)).toBe('refusal');
  });
});

describe('stopReason', () => {
  it('a model error ends the turn with error; a stopped turn is cancelled', async () => {
    const p = await boot();
    llm().script({ status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } });
    expect(await stopReason(p, 'a')).toBe('error');
    llm().script([{ text: 'partial' }, { stall: 'forever' }]);
    const done = stopReason(p, 'b', 2);
    await p.waitFor((m) => m.params?.content?.text === 'partial');
    p.notify('chat/promptStop', { chatId: 'c1' });
    expect(await done).toBe('cancelled');
  });
});

describe('patchbay chat and the stop reason', () => {
  it('a one-shot answer cut off at the output limit says so, and exits 0', async () => {
    llm().script([{ text: 'The first half' }, { finish: 'length' }]);
    const r = await runPatchbay(['chat', 'explain'], { home: tempDir('pb-chat-home-'), cwd: workspace({}, 'pb-chat-ws-'), env: { PATCHBAY_CONFIG: fakeChatConfig(llm().url) } });
    expect(r.stdout).toContain('The first half\nThe answer was cut off: the model reached its output token limit.\n');
    expect(r.code).toBe(0);
  });
});

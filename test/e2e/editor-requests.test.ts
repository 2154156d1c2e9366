/**
 * Requests patchbay sends to the editor (`editor/getDiagnostics`), over the built binary's real
 * stdio: one the editor never answers ends at its deadline (10 s), the editor is told with
 * `$/cancelRequest` for that request's id, and the tool call still finishes.
 */
import { describe, expect, it } from 'vitest';
import { EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

describe('requests to the editor', () => {
  it('an unanswered editor/getDiagnostics is cancelled with $/cancelRequest at its deadline', async () => {
    const root = workspace({ 'a.ts': 'const x = 1;\n' });
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    p.onServerRequest = () => {}; // an editor that never answers
    await p.initialize(root, { capabilities: { codeAssistant: { chat: true, editor: { diagnostics: true } } } });
    llm().script([{ toolCall: { id: 'd1', name: 'patchbay__editor_diagnostics', args: {} } }], [{ text: 'done' }]);
    const chatId = (await p.request('chat/prompt', { message: 'check' })).result.chatId;
    const asked = await p.waitFor((m) => m.method === 'editor/getDiagnostics', 'editor/getDiagnostics');
    const cancel = await p.waitFor((m) => m.method === '$/cancelRequest', '$/cancelRequest', 25_000);
    expect(cancel.params).toEqual({ id: asked.id });
    expect(cancel.id).toBeUndefined(); // a notification
    // The tool call ends (without the editor's diagnostics) and the turn goes on.
    await p.turnDone(chatId, 1, 20_000);
    expect(p.contents(chatId).some((c) => c.content.type === 'toolCalled' && c.content.id === 'd1')).toBe(true);
    expect(p.text(chatId)).toBe('done');
  }, 60_000);
});

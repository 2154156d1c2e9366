/**
 * `@path` written in the prompt's text, over the built binary's stdio, as eca-nvim sends it: its
 * prompt keeps every `@file` the user picked as text (eca-nvim `lua/eca/sidebar.lua`), and its
 * mediator (`lua/eca/mediator.lua` `mediator:send`) sends only the contexts it adapts beside it.
 * ECA's server reads them (eca `src/eca/features/context.clj` `contexts-str-from-prompt`:
 * `@/abs`, `@./rel`, `@~/…`, an optional `:Lx-Ly`, a directory when the path is one).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

describe('@path in the prompt text (eca-nvim)', () => {
  it('@/abs, @./rel with lines, @~/ and a directory become contexts the model reads, each once; an e-mail address is not one, nor is a sentence’s trailing punctuation part of a path', async () => {
    const home = tempDir();
    writeFileSync(join(home, 'notes.md'), 'home-notes-content\n');
    const root = workspace({ 'src/a.ts': 'export const alpha = 1;\n', 'lines.txt': 'one\ntwo\nthree\nfour\n', 'docs/guide.md': 'guide\n' });
    mkdirSync(join(root, 'empty'));
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);

    llm().script([{ text: 'read them' }]);
    const message = `compare @${join(root, 'src/a.ts')} with @./lines.txt:L2-L3, see @./docs and @~/notes.md; again @./src/a.ts. Mail a@b.example`;
    // eca-nvim also sends the file it attached as a context: read once all the same.
    const { chatId } = (await p.request(ECA.chatPrompt, { message, contexts: [{ type: 'file', path: join(root, 'src/a.ts') }] })).result;
    await p.turnDone(chatId);

    const sent = JSON.stringify(llm().requests.at(-1)!.body.messages);
    expect(sent.split('export const alpha').length - 1).toBe(1);
    expect(sent).toContain('two\\nthree');
    expect(sent).not.toContain('four');
    expect(sent).toContain('guide.md');
    expect(sent).toContain('home-notes-content');
    expect(sent).not.toContain('b.example"');
    // The sentence's punctuation after "@~/notes.md;" and "@./src/a.ts." is not taken for the path.
    expect(p.contents(chatId).some((c) => /Context skipped/.test(c.content.text ?? ''))).toBe(false);
    // The user's text is shown as typed.
    expect(p.contents(chatId).find((c) => c.role === 'user')!.content.text).toBe(message);
  });

  it('a mention of a missing file is reported in the chat and the prompt still runs', async () => {
    const p = track(new EcaProc({ home: tempDir(), config: fakeProviderConfig(llm().url) }));
    await p.initialize(workspace({ 'a.txt': 'a\n' }));
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    llm().script([{ text: 'fine' }]);
    const { chatId } = (await p.request(ECA.chatPrompt, { message: 'look at @./nope.txt' })).result;
    await p.turnDone(chatId);
    const texts = p.contents(chatId).map((c) => c.content.text ?? '');
    expect(texts.some((t) => /Context skipped/.test(t) && t.includes('nope.txt'))).toBe(true);
    expect(texts).toContain('fine');
  });
});

/**
 * A chat's system prompt is pinned (issue 18, point 7), over the built binary's real stdio against
 * the fake Anthropic server. Follows ECA's chat.clj (the `:prompt-cache` of a chat, kept while
 * `chat.autoSyncSystemPrompt` is off; `pinned-system-prompt-changed-text`;
 * `send-system-prompt-changed-notice!`) and commands.clj "sync-system-prompt".
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, tempDir, useFakeLlmSuite, workspace } from './harness.js';

const { llm, track } = useFakeLlmSuite();

async function boot(chat: Record<string, unknown> = {}) {
  const root = workspace({ 'AGENTS.md': 'AGENTS-V1: use pnpm.', '.agents/skills/deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys the app.\n---\nBody.' });
  const cfg = fakeProviderConfig(llm().url, 'anthropic', {});
  cfg.chat = { ...(cfg.chat as object), ...chat };
  const p = track(new EcaProc({ home: tempDir(), config: cfg }));
  await p.initialize(root);
  await p.waitFor((m) => m.method === ECA.configUpdated.method);
  return { p, root };
}

const stableOf = (n: number): string => llm().requests.filter((r) => r.path === '/v1/messages')[n].body.system[0].text;
const notices = (p: EcaProc, chatId: string): string[] =>
  p
    .contents(chatId)
    .filter((c) => c.role === 'system' && c.content.type === 'text')
    .map((c) => c.content.text as string);

async function turn(p: EcaProc, message: string, chatId: string | undefined, nth: number): Promise<string> {
  const id: string = (await p.request(ECA.chatPrompt, { message, ...(chatId ? { chatId } : {}) })).result.chatId;
  await p.turnDone(id, nth);
  return id;
}

describe('the pinned system prompt', () => {
  it('an AGENTS.md edit mid-chat keeps the chat on its first prompt, tells the user once, and /sync-system-prompt applies it', async () => {
    const { p, root } = await boot();
    const chatId = await turn(p, 'one', undefined, 1);
    expect(stableOf(0)).toContain('AGENTS-V1');
    writeFileSync(join(root, 'AGENTS.md'), 'AGENTS-V2: use bun.');
    await turn(p, 'two', chatId, 2);
    await turn(p, 'three', chatId, 3);
    // The cached prefix is the chat's first one, byte for byte.
    expect(stableOf(1)).toBe(stableOf(0));
    expect(stableOf(2)).toBe(stableOf(0));
    const kept = 'System prompt changed (contexts), keeping current chat system prompt, changes will apply to new chats. Use /sync-system-prompt to apply now.';
    expect(notices(p, chatId).filter((t) => t === kept)).toHaveLength(1);

    // A new chat gets the new text.
    const other = await turn(p, 'new chat', undefined, 1);
    expect(stableOf(3)).toContain('AGENTS-V2');
    expect(notices(p, other)).not.toContain(kept);

    // /prompt-show shows what the chat's model receives: the pinned prompt.
    await p.request(ECA.chatPrompt, { chatId, message: '/prompt-show' });
    const shown = await p.waitFor((m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && String(m.params.content.text).startsWith('System prompt:'), '/prompt-show');
    expect(shown.params.content.text).toContain('AGENTS-V1');
    expect(shown.params.content.text).not.toContain('AGENTS-V2');

    await p.request(ECA.chatPrompt, { chatId, message: '/sync-system-prompt' });
    await p.waitFor(
      (m) => m.method === ECA.chatContentReceived.method && m.params.chatId === chatId && m.params.content.text === 'System prompt will be re-synced on the next message (prompt cache invalidated).',
      'the sync notice',
    );
    await turn(p, 'four', chatId, 6);
    expect(stableOf(4)).toContain('AGENTS-V2');
    expect(stableOf(4)).not.toContain('AGENTS-V1');
  });

  it('chat.autoSyncSystemPrompt: the change applies at once and the user is told the cache was invalidated; a skill change still does not re-sync', async () => {
    const { p, root } = await boot({ autoSyncSystemPrompt: true });
    const chatId = await turn(p, 'one', undefined, 1);
    writeFileSync(join(root, 'AGENTS.md'), 'AGENTS-V2: use bun.');
    await turn(p, 'two', chatId, 2);
    expect(stableOf(1)).toContain('AGENTS-V2');
    expect(notices(p, chatId)).toContain('System prompt changed (contexts), prompt cache invalidated.');
    // Marked as a note on patchbay's workings (`patchbay chat` shows it with --verbose); the kept-prompt notice below is not: it says what to do.
    const invalidated = p.contents(chatId).find((c) => c.content.text === 'System prompt changed (contexts), prompt cache invalidated.');
    expect(invalidated?.content.internal).toBe(true);
    // ECA: skill catalog changes never re-sync an existing chat.
    writeFileSync(join(root, '.agents/skills/deploy/SKILL.md'), '---\nname: deploy\ndescription: Deploys the app to production.\n---\nBody.');
    await turn(p, 'three', chatId, 3);
    expect(stableOf(2)).toBe(stableOf(1));
    expect(notices(p, chatId)).toContain('System prompt changed (skills), keeping current chat system prompt, changes will apply to new chats. Use /sync-system-prompt to apply now.');
    expect(p.contents(chatId).find((c) => String(c.content.text).startsWith('System prompt changed (skills)'))?.content.internal).toBeUndefined();
  });
});

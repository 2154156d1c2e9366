/**
 * ECA chats have no folders of their own (issue 30 item 2, src/core/chat/chat-roots.ts): they use the
 * workspace's as they are at each turn, so `workspace/didChangeWorkspaceFolders` moves a chat's
 * relative paths and shell commands with it, and the store records the folders each turn ran with.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { InProcEca, useInProcEca } from '../support/eca-inproc.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fakeProviderConfig, useTempDirs, workspace } from '../e2e/harness.js';

const llm = useFakeLlm();
const temp = useTempDirs();
const track = useInProcEca();

const folder = (path: string) => ({ uri: pathToFileURL(path).href, name: path });

/** The folders the store records for a chat (read beside the running server, as another process would). */
function storedRoots(home: string, chatId: string): { roots: string[]; own: number } | undefined {
  const db = new Database(join(home, '.patchbay', 'patchbay.db'), { readonly: true });
  try {
    const row = db.prepare('SELECT roots, own FROM chat_roots WHERE chat_id = ?').get(chatId) as { roots: string; own: number } | undefined;
    return row && { roots: JSON.parse(row.roots) as string[], own: row.own };
  } finally {
    db.close();
  }
}

/** The text of the last request's tool results, as the model read them. */
function toolResults(): string {
  const messages = (llm().requests.at(-1)?.body.messages ?? []) as Array<{ role: string; content: unknown }>;
  return messages
    .filter((m) => m.role === 'tool')
    .map((m) => JSON.stringify(m.content))
    .join('\n');
}

describe('ECA chats follow the workspace folders', () => {
  it('relative writes and shell commands go to the workspace folders of each turn; the store records them', async () => {
    const home = temp(workspace());
    const w1 = realpathSync(temp(workspace()));
    const w2 = realpathSync(temp(workspace({ 'marker-two.txt': 'here\n' })));
    const s = new InProcEca({ home, config: fakeProviderConfig(llm().url) });
    track(s);
    await s.initialize(w1);

    const turn = (file: string) =>
      llm().script(
        [
          { toolCall: { id: `w-${file}`, name: 'patchbay__write_file', args: { path: file, content: file } } },
          { toolCall: { id: `p-${file}`, name: 'patchbay__shell_command', args: { command: 'pwd' } } },
        ],
        [{ text: 'done' }],
      );
    turn('one.txt');
    const { chatId } = await s.request('chat/prompt', { message: 'write one', trust: true });
    await s.turnDone(chatId);
    expect(readFileSync(join(w1, 'one.txt'), 'utf8')).toBe('one.txt');
    expect(toolResults()).toContain(w1);
    expect(storedRoots(home, chatId)).toEqual({ roots: [w1], own: 0 });

    s.notify('workspace/didChangeWorkspaceFolders', { event: { added: [folder(w2)], removed: [folder(w1)] } });
    // Applied once the added folder's files are offered (its index is made when the change applies).
    for (let i = 0; ; i++) {
      const { files } = await s.request('chat/queryFiles', { query: 'marker-two' });
      if (files.some((f: { path: string }) => f.path === join(w2, 'marker-two.txt'))) break;
      if (i > 2000) throw new Error('the workspace folders never changed');
    }

    turn('two.txt');
    await s.request('chat/prompt', { chatId, message: 'write two' });
    await s.turnDone(chatId, 2);
    expect(readFileSync(join(w2, 'two.txt'), 'utf8')).toBe('two.txt');
    expect(existsSync(join(w1, 'two.txt'))).toBe(false);
    expect(toolResults()).toContain(w2);
    expect(storedRoots(home, chatId)).toEqual({ roots: [w2], own: 0 });
  });
});

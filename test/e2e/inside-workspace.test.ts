/**
 * `toolCall.approval.insideWorkspace` (ECA 0.172; issue 28, point 5): folders the tools treat as
 * inside the workspace. A read or write there is judged as one in a workspace folder: no asking
 * for being outside, the containment at open time lets it through, and the config's rules still
 * decide the rest. From an untrusted folder's own `.patchbay/config.json` it is held back (it
 * widens where tools go unasked); trusted, it applies.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, useTempDirs, workspace, type Msg } from './harness.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

/** A home with a folder `~/shared` outside every workspace folder, holding notes.txt. */
function homeWithShared(): { home: string; shared: string } {
  const home = scratch(tempDir());
  const shared = join(home, 'shared');
  mkdirSync(shared);
  writeFileSync(join(shared, 'notes.txt'), 'shared notes\n');
  return { home, shared };
}

/** The model reads ~/shared/notes.txt, then writes ~/shared/out.txt; each call that asks is rejected. Returns whether each asked. */
async function readThenWrite(p: EcaProc, shared: string): Promise<boolean[]> {
  llm().script(
    [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: join(shared, 'notes.txt') } } }],
    [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: join(shared, 'out.txt'), content: 'written\n' } } }],
    [{ text: 'done' }],
  );
  const chatId = (await p.request(ECA.chatPrompt, { message: 'use the shared folder' })).result.chatId as string;
  const asked: boolean[] = [];
  for (const id of ['r1', 'w1']) {
    const run: Msg = await p.waitFor((m) => m.params?.content?.type === 'toolCallRun' && m.params.content.id === id, `toolCallRun ${id}`);
    asked.push(run.params.content.manualApproval);
    if (run.params.content.manualApproval) p.notify(ECA.chatToolCallReject, { chatId, toolCallId: id });
  }
  await p.turnDone(chatId, 1, 30_000);
  return asked;
}

/** The user's own approval rules: writes allowed; reads are allowed by default. */
const allowWrites = { allow: { write_file: {} } };

describe('toolCall.approval.insideWorkspace', () => {
  it('without it, a read and a write in a folder outside the workspace ask', async () => {
    const { home, shared } = homeWithShared();
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: allowWrites } }) }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(await readThenWrite(p, shared)).toEqual([true, true]);
  });

  it('from the user’s config (`~/shared`), the read and the write there run without asking', async () => {
    const { home, shared } = homeWithShared();
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const approval = { ...allowWrites, insideWorkspace: ['~/shared'] };
    const p = track(new EcaProc({ home, config: fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval } }) }));
    await p.initialize(root);
    await p.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(await readThenWrite(p, shared)).toEqual([false, false]);
    expect(readFileSync(join(shared, 'out.txt'), 'utf8')).toBe('written\n');
    const toolMessages = (llm().requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === 'tool');
    expect(String(toolMessages[0]?.content)).toContain('shared notes');
  });

  it('from an untrusted folder’s own config it is held back (the calls ask); once trusted, it applies', async () => {
    const { home, shared } = homeWithShared();
    const root = scratch(workspace({ '.patchbay/config.json': JSON.stringify({ toolCall: { approval: { insideWorkspace: [shared] } } }) }));
    const config = fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: allowWrites } });
    const p = track(new EcaProc({ home, config }));
    await p.initialize(root);
    const held = await p.waitFor((m) => m.method === ECA.showMessage.method && String(m.params?.message).includes('insideWorkspace'), 'the held-back message');
    expect(held.params.message).toContain('toolCall.approval.insideWorkspace');
    expect(await readThenWrite(p, shared)).toEqual([true, true]);
    await p.stop();

    expect((await runPatchbay(['trust', '--yes', root], { home, cwd: scratch(tempDir()) })).code).toBe(0);
    const q = track(new EcaProc({ home, config }));
    await q.initialize(root);
    await q.waitFor((m) => m.method === ECA.configUpdated.method);
    expect(await readThenWrite(q, shared)).toEqual([false, false]);
    expect(readFileSync(join(shared, 'out.txt'), 'utf8')).toBe('written\n');
  });
});

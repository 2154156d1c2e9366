/**
 * ACP diffs carry the file's real text (issue 28, point 14): ACP tool-call `diff` content's
 * `oldText`/`newText` (schema `Diff`) keep each line's newline, the last one too, and add none a
 * file lacks; live and in a replay (`session/load`).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods, type SessionUpdate } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

const diffsOf = (updates: SessionUpdate[], id: string) =>
  updates.flatMap((u) => ((u.sessionUpdate === 'tool_call' || u.sessionUpdate === 'tool_call_update') && u.toolCallId === id ? (u.content ?? []) : [])).filter((c) => c.type === 'diff');

describe('ACP diffs keep the final newline', () => {
  it('a new file’s newText is its whole content; an edit keeps the last line’s newline, and a file without one gets none', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'bare.txt': 'one\ntwo' }));
    const config = fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } } });
    const p = track(new AcpProc({ home, config }));
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script(
      [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: join(root, 'new.txt'), content: 'alpha\nbeta\n' } } }],
      [{ toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: join(root, 'new.txt'), original_content: 'beta', new_content: 'gamma' } } }],
      [{ toolCall: { id: 'e2', name: 'patchbay__edit_file', args: { path: join(root, 'bare.txt'), original_content: 'two', new_content: 'three' } } }],
      [{ text: 'done' }],
    );
    expect((await p.prompt(sessionId, 'write and edit')).stopReason).toBe('end_turn');
    expect(readFileSync(join(root, 'new.txt'), 'utf8')).toBe('alpha\ngamma\n');
    expect(diffsOf(p.updates(sessionId), 'w1').at(-1)).toEqual({ type: 'diff', path: join(root, 'new.txt'), oldText: null, newText: 'alpha\nbeta\n' });
    expect(diffsOf(p.updates(sessionId), 'e1').at(-1)).toEqual({ type: 'diff', path: join(root, 'new.txt'), oldText: 'alpha\nbeta\n', newText: 'alpha\ngamma\n' });
    expect(diffsOf(p.updates(sessionId), 'e2').at(-1)).toEqual({ type: 'diff', path: join(root, 'bare.txt'), oldText: 'one\ntwo', newText: 'one\nthree' });
    await p.stop();

    // Replayed by another connection: the same texts.
    const q = track(new AcpProc({ home, config }));
    await q.initialize();
    await q.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    expect(diffsOf(q.updates(sessionId), 'w1').at(-1)).toMatchObject({ oldText: null, newText: 'alpha\nbeta\n' });
    expect(diffsOf(q.updates(sessionId), 'e1').at(-1)).toMatchObject({ oldText: 'alpha\nbeta\n', newText: 'alpha\ngamma\n' });
  });
});

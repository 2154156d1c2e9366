/**
 * A client that never answers `fs/read_text_file` or `fs/write_text_file` (ACP file-system.mdx):
 * the tool fails with an error saying the editor did not answer in time, the turn goes on, and
 * the server keeps serving (issue 31 finding 4: the 30 s deadline was built as
 * `AbortSignal.any([…, AbortSignal.timeout()])`, which Node 20 may never fire). The deadline is
 * shortened with PATCHBAY_ACP_FS_TIMEOUT_MS; no test here looks at a clock.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

function start(): { p: AcpProc; root: string } {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'on disk\n' }));
  const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url), env: { PATCHBAY_ACP_FS_TIMEOUT_MS: '300' } }));
  // The client takes the requests and never answers them.
  p.onRead = () => new Promise(() => {});
  p.onWrite = () => new Promise(() => {});
  return { p, root };
}

/** What the model was told about its tool call (the tool message of the request after it). */
function toolResult(requestIndex: number): string {
  return JSON.stringify(llm().requests[requestIndex]?.body);
}

describe('patchbay acp when the client never answers a file request', () => {
  it('a read fails with a clear error; the turn ends and the session still prompts', async () => {
    const { p, root } = start();
    await p.initialize({ fs: { readTextFile: true, writeTextFile: true } });
    const sessionId = await p.newSession(root);
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: join(root, 'a.txt') } } }], [{ text: 'gave up' }], [{ text: 'still here' }]);
    expect((await p.prompt(sessionId, 'read it')).stopReason).toBe('end_turn');
    expect(p.reads).toHaveLength(1);
    expect(toolResult(1)).toContain('Cannot read file: the editor did not answer fs/read_text_file within 300 ms');
    const failed = p.updates(sessionId).find((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'r1' && u.status === 'failed');
    expect(failed).toBeDefined();
    expect((await p.prompt(sessionId, 'again')).stopReason).toBe('end_turn');
    expect(p.text(sessionId)).toContain('still here');
  });

  it('a write fails with a clear error and nothing lands on disk', async () => {
    const { p, root } = start();
    await p.initialize({ fs: { writeTextFile: true } });
    const sessionId = await p.newSession(root);
    const file = join(root, 'new.txt');
    llm().script([{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: file, content: 'x\n' } } }], [{ text: 'gave up' }]);
    expect((await p.prompt(sessionId, 'write it')).stopReason).toBe('end_turn');
    expect(p.writes).toHaveLength(1);
    expect(toolResult(1)).toContain('Cannot write file: the editor did not answer fs/write_text_file within 300 ms');
    expect(existsSync(file)).toBe(false);
  });
});

/**
 * ACP `session/new` `mcpServers` (ACP session-setup.mdx "MCP Servers"): started for that session
 * only, beside the configured ones, and never written to a config file; and the permission
 * option `reject_always` (ACP tool-calls.mdx "Requesting Permission"): that tool is not asked
 * again in the session.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAlive } from '../../src/util/pid.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { fixture } from '../support/mcp-helpers.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

const toolNames = (body: unknown) => ((body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);

describe('patchbay acp: session MCP servers and reject-always', () => {
  it("a session's MCP server is offered in that session only and its tool runs; no config file is written", async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'a\n' }));
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    const init = await p.initialize();
    expect(init.agentCapabilities?.mcpCapabilities).toMatchObject({ http: true, sse: true });
    const withNotes = await p.agent.request(methods.agent.session.new, { cwd: root, mcpServers: [{ name: 'notes', command: process.execPath, args: [fixture('mcp-notes.mjs')], env: [] }] });
    const plain = await p.newSession(root);
    llm().script([{ toolCall: { id: 'n1', name: 'notes__note_count', args: {} } }], [{ text: 'counted' }]);
    expect((await p.prompt(withNotes.sessionId, 'count notes')).stopReason).toBe('end_turn');
    expect(toolNames(llm().requests[0]?.body)).toContain('notes__note_count');
    const done = p
      .updates(withNotes.sessionId)
      .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'n1')
      .at(-1);
    expect(done).toMatchObject({ status: 'completed' });
    llm().script([{ text: 'plain' }]);
    await p.prompt(plain, 'hello');
    expect(toolNames(llm().requests.at(-1)?.body)).not.toContain('notes__note_count');
    // Nothing written to a config file.
    expect(existsSync(join(root, '.patchbay'))).toBe(false);
    expect(existsSync(join(home, '.config', 'patchbay', 'config.json'))).toBe(false);
    // The client goes away: the session's server goes with patchbay.
    const children = execFileSync('pgrep', ['-P', String(p.child.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
    expect(children.length).toBeGreaterThan(0);
    await p.stop();
    expect(children.filter(isAlive)).toEqual([]);
  });

  it('reject_always: the same tool is refused without asking again; another tool still asks', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'one\n' }));
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize();
    const sessionId = await p.newSession(root);
    p.onPermission = (r) => ({ outcome: { outcome: 'selected', optionId: r.options.find((o) => o.kind === 'reject_always')!.optionId } });
    const edit = (id: string) => ({ toolCall: { id, name: 'patchbay__edit_file', args: { path: join(root, 'a.txt'), original_content: 'one', new_content: 'ONE' } } });
    llm().script([edit('e1')], [edit('e2')], [{ toolCall: { id: 'w1', name: 'patchbay__write_file', args: { path: join(root, 'b.txt'), content: 'b\n' } } }], [{ text: 'gave up' }]);
    expect((await p.prompt(sessionId, 'edit')).stopReason).toBe('end_turn');
    expect(p.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(['e1', 'w1']);
    const e2 = p
      .updates(sessionId)
      .filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'e2')
      .at(-1);
    expect(e2).toMatchObject({ status: 'failed' });
  });
});

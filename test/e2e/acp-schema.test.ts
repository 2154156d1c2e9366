/**
 * The harness's ACP schema check (./acp-schema.ts) itself: it sees every message both ways,
 * checks each against its method's type in the SDK's schema/v1/schema.json, catches what breaks
 * it, and lets a test skip the bad input it sends on purpose.
 */
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';
import { AcpSchemaCheck } from './acp-schema.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

const line = (m: unknown) => `${JSON.stringify(m)}\n`;

describe('the ACP schema check', () => {
  it('checks params, results and errors by method and direction, and reports what breaks them', () => {
    const c = new AcpSchemaCheck();
    c.feed('toAgent', line({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } }));
    c.feed('toClient', line({ jsonrpc: '2.0', id: 1, result: { protocolVersion: 1 } }));
    c.feed('toAgent', line({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/w' } })); // mcpServers missing
    c.feed('toClient', line({ jsonrpc: '2.0', id: 2, error: { code: -32602, message: 'Invalid params' } }));
    // Split across chunks, as a pipe may deliver it: an update with a bad sessionUpdate.
    const bad = line({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'no_such_update' } } });
    c.feed('toClient', bad.slice(0, 20));
    c.feed('toClient', bad.slice(20));
    c.feed('toClient', line({ jsonrpc: '2.0', id: 3, result: {} })); // answers nothing seen: envelope only
    c.feed('toClient', line({ jsonrpc: '2.0', id: 9, method: 'session/no_such_method', params: {} }));
    c.feed('toClient', line({ jsonrpc: '2.0', id: 4, error: { message: 'no code' } }));
    expect(c.violations.map((v) => `${v.direction} ${v.what}`)).toEqual([
      'toAgent request session/new',
      'toClient notification session/update',
      'toClient request session/no_such_method',
      'toClient the error answering request 4',
    ]);
    expect(c.violations[0]!.errors).toContain('mcpServers');
    expect(c.checked).toBeGreaterThanOrEqual(4);
  });

  it('a result is checked against the type of the request it answers', () => {
    const c = new AcpSchemaCheck();
    c.feed('toAgent', line({ jsonrpc: '2.0', id: 'a', method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: 'hi' }] } }));
    c.feed('toClient', line({ jsonrpc: '2.0', id: 'a', result: { stopReason: 'finished' } }));
    c.feed('toClient', line({ jsonrpc: '2.0', id: 7, method: 'fs/read_text_file', params: { sessionId: 's', path: '/w/a.txt' } }));
    c.feed('toAgent', line({ jsonrpc: '2.0', id: 7, result: { text: 'not content' } }));
    expect(c.violations.map((v) => `${v.direction} ${v.what}`)).toEqual(['toClient response session/prompt', 'toAgent response fs/read_text_file']);
  });

  it('a real session is checked message by message; bad input sent on purpose can be skipped', async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
    const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await p.initialize({ fs: { readTextFile: true, writeTextFile: true } });
    p.onRead = () => ({ content: 'alpha\n' });
    const sessionId = await p.newSession(root);
    p.schema.skip((m) => m.method === methods.agent.session.new && !(m.params as { mcpServers?: unknown }).mcpServers);
    await expect(p.agent.request(methods.agent.session.new, { cwd: root } as never)).rejects.toMatchObject({ code: -32602 });
    llm().script([{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: 'a.txt' } } }], [{ text: 'read' }]);
    expect((await p.prompt(sessionId, 'read a.txt')).stopReason).toBe('end_turn');
    // initialize, session/new and prompt with their answers, the updates, fs/read_text_file both ways.
    expect(p.schema.checked).toBeGreaterThan(10);
    expect(p.schema.violations).toEqual([]);
  });
});

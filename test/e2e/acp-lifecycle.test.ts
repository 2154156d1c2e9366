/**
 * `patchbay acp` under bad input and departures: ACP's errors for what a client gets wrong, a
 * cancel that ends the prompt with `cancelled` (ACP prompt-turn.mdx "Cancellation"), a permission
 * request that is never answered, and a client that disappears mid-turn (the process exits within
 * a second and the chat is kept). ACP error codes: schema.json `ErrorCode`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { methods } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';
import { isAlive } from '../../src/util/pid.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

function start(home = scratch(tempDir())): { p: AcpProc; root: string; home: string } {
  const root = scratch(workspace({ 'a.txt': 'one\ntwo\n' }));
  const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
  return { p, root, home };
}

const EDIT = { toolCall: { id: 'e1', name: 'patchbay__edit_file', args: { path: 'a.txt', original_content: 'two', new_content: 'TWO' } } };

describe('patchbay acp: bad input', () => {
  it('requests before initialize are refused; an unknown session is -32002; a malformed block -32602; audio -32602 naming the block', async () => {
    const { p, root } = start();
    await expect(p.agent.request(methods.agent.session.new, { cwd: root, mcpServers: [] })).rejects.toMatchObject({ code: -32600 });
    await p.initialize();
    await expect(p.prompt('no-such-session', 'hi')).rejects.toMatchObject({ code: -32002 });
    const sessionId = await p.newSession(root);
    // A block no content type matches, on purpose: not a schema violation of the test's.
    p.schema.skip((m) => JSON.stringify(m.params ?? null).includes('"type":"bogus"'));
    await expect(p.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'bogus' } as never] })).rejects.toMatchObject({ code: -32602 });
    await expect(
      p.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [
          { type: 'text', text: 'x' },
          { type: 'audio', data: 'AA==', mimeType: 'audio/wav' },
        ],
      }),
    ).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('prompt[1]') as string,
    });
    await expect(p.agent.request(methods.agent.session.new, { cwd: 'relative/dir', mcpServers: [] })).rejects.toMatchObject({ code: -32602 });
    await expect(p.agent.request(methods.agent.session.load, { sessionId: 'no-such-chat', cwd: root, mcpServers: [] })).rejects.toMatchObject({ code: -32002 });
    // Still serving: a good prompt after all that.
    llm().script([{ text: 'still here' }]);
    expect((await p.prompt(sessionId, 'hi')).stopReason).toBe('end_turn');
    expect(p.text(sessionId)).toBe('still here');
  });

  it('a second prompt while one runs is refused (-32600); the first goes on', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ delay: 600 }, { text: 'first' }]);
    const first = p.prompt(sessionId, 'one');
    await p.until(() => llm().requests.length > 0, 'the first request');
    await expect(p.prompt(sessionId, 'two')).rejects.toMatchObject({ code: -32600, message: expect.stringContaining('already running') as string });
    expect((await first).stopReason).toBe('end_turn');
    expect(p.text(sessionId)).toBe('first');
  });

  it('a turn that fails answers the prompt with an error carrying the cause', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script({ status: 400, body: { error: { message: 'bad model input', type: 'invalid_request_error' } } });
    await expect(p.prompt(sessionId, 'hi')).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('bad model input') as string });
  });
});

describe('patchbay acp: cancel and departures', () => {
  it('session/cancel while the model streams ends the prompt with cancelled', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'partial ' }, { stall: 'forever' }]);
    const r = p.prompt(sessionId, 'go');
    await p.until(() => p.text(sessionId).includes('partial'), 'the first chunk');
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
  });

  it('a permission request never answered: cancel ends the prompt with cancelled, the call does not run', async () => {
    const { p, root } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    p.onPermission = () => new Promise(() => undefined);
    llm().script([EDIT], [{ text: 'never' }]);
    const r = p.prompt(sessionId, 'edit');
    await p.until(() => p.permissionRequests.length > 0, 'the permission request');
    await p.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await r).stopReason).toBe('cancelled');
    expect(readFileSync(join(root, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    const updates = p.updates(sessionId).filter((u) => u.sessionUpdate === 'tool_call_update');
    expect(updates.at(-1)).toMatchObject({ toolCallId: 'e1', status: 'failed' });
  });

  it('a client that disappears mid-turn: the process exits within a second, no child is left, and the chat is kept', async () => {
    const { p, root, home } = start();
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'streaming ' }, { stall: 'forever' }]);
    void p.prompt(sessionId, 'remember this prompt').catch(() => undefined);
    await p.until(() => p.text(sessionId).includes('streaming'), 'the first chunk');
    const pid = p.child.pid!;
    const t0 = Date.now();
    p.child.stdin.end();
    p.child.stdout.destroy();
    const code = await Promise.race([p.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 10_000))]);
    const ms = Date.now() - t0;
    console.log(`exited ${ms} ms after the client went away`);
    expect(code).not.toBe('hung');
    expect(isAlive(pid)).toBe(false);
    // Nothing lost: a new process loads the session with the user's prompt in it.
    const q = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
    await q.initialize();
    await q.agent.request(methods.agent.session.load, { sessionId, cwd: root, mcpServers: [] });
    expect(q.text(sessionId, 'user_message_chunk')).toBe('remember this prompt');
  });
});

/**
 * What a turn shows over ACP beyond text (ACP prompt-turn.mdx, agent-plan.mdx, tool-calls.mdx,
 * session usage): thoughts as `agent_thought_chunk`, the task tool's list as a whole `plan` each
 * time, usage against the model's window, and a subagent's tool calls as calls of the session
 * (ACP has no nesting; their ids carry the child's chat id), its answer as the spawn call's result.
 */
import { describe, expect, it } from 'vitest';
import type { SessionUpdate } from '@agentclientprotocol/sdk';
import { fakeProviderConfig, tempDir, useTempDirs, workspace } from './harness.js';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { AcpProc, useAcpProcs } from './acp-harness.js';

const scratch = useTempDirs();
const llm = useFakeLlm();
const track = useAcpProcs();

async function session(): Promise<{ p: AcpProc; root: string; sessionId: string }> {
  const home = scratch(tempDir());
  const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
  const p = track(new AcpProc({ home, config: fakeProviderConfig(llm().url) }));
  await p.initialize();
  return { p, root, sessionId: await p.newSession(root) };
}

const ofKind = <K extends SessionUpdate['sessionUpdate']>(us: SessionUpdate[], k: K) => us.filter((u): u is Extract<SessionUpdate, { sessionUpdate: K }> => u.sessionUpdate === k);

describe('patchbay acp session updates', () => {
  it('thoughts, the plan from the task tool (whole, each time), and usage against the window', async () => {
    const { p, sessionId } = await session();
    const plan = {
      op: 'plan',
      tasks: [
        { subject: 'Write parser', description: 'Parse it' },
        { subject: 'Wire CLI', description: 'Call it', priority: 'high' },
      ],
    };
    llm().script(
      [{ reasoning: 'Let me plan.' }, { toolCall: { id: 't1', name: 'patchbay__task', args: plan } }],
      [{ toolCall: { id: 't2', name: 'patchbay__task', args: { op: 'start', ids: [1], active_summary: 'parsing' } } }],
      [{ text: 'planned' }],
    );
    expect((await p.prompt(sessionId, 'plan the work')).stopReason).toBe('end_turn');
    expect(p.text(sessionId, 'agent_thought_chunk')).toBe('Let me plan.');
    const plans = ofKind(p.updates(sessionId), 'plan');
    expect(plans.length).toBeGreaterThanOrEqual(2);
    expect(plans[0]!.entries).toEqual([
      { content: 'Write parser', priority: 'medium', status: 'pending' },
      { content: 'Wire CLI', priority: 'high', status: 'pending' },
    ]);
    expect(plans.at(-1)!.entries[0]).toMatchObject({ content: 'Write parser', status: 'in_progress' });
    const usage = ofKind(p.updates(sessionId), 'usage_update').at(-1);
    expect(usage).toMatchObject({ size: 100_000, cost: { currency: 'USD' } });
    expect(usage!.used).toBeGreaterThan(0);
  });

  it("a subagent's tool calls show as calls of the session, prefixed with its chat id; its answer is the spawn call's result", async () => {
    const { p, root, sessionId } = await session();
    llm().onRequest = (path, body: { messages: Array<{ role: string; content: unknown }> }) => {
      if (path !== '/v1/chat/completions') return undefined;
      const system = JSON.stringify(body.messages[0]?.content ?? '');
      const results = body.messages.filter((m) => m.role === 'tool').length;
      if (system.includes('You are an explorer subagent'))
        return results ? [{ text: 'alpha is in a.txt' }] : [{ toolCall: { id: 'r1', name: 'patchbay__read_file', args: { path: `${root}/a.txt` } } }];
      return results ? [{ text: 'found it' }] : [{ toolCall: { id: 's1', name: 'patchbay__spawn_agent', args: { agent: 'explorer', task: 'find alpha', activity: 'looking' } } }];
    };
    expect((await p.prompt(sessionId, 'where is alpha?')).stopReason).toBe('end_turn');
    const calls = ofKind(p.updates(sessionId), 'tool_call').map((c) => c.toolCallId);
    expect(calls).toEqual(['s1', 'subagent-s1/r1']);
    // The child's own text is not the session's answer; the parent's is.
    expect(p.text(sessionId)).toBe('found it');
    const spawnDone = ofKind(p.updates(sessionId), 'tool_call_update')
      .filter((u) => u.toolCallId === 's1')
      .at(-1);
    expect(spawnDone).toMatchObject({ status: 'completed' });
    expect(JSON.stringify(spawnDone!.content)).toContain('alpha is in a.txt');
  });

  it("config problems are told once, in the first prompt's answer (ACP has no message outside a session)", async () => {
    const home = scratch(tempDir());
    const root = scratch(workspace({ 'a.txt': 'alpha\n' }));
    const p = track(new AcpProc({ home, config: { ...fakeProviderConfig(llm().url), toolCall: { approval: 'nonsense' } } }));
    await p.initialize();
    const sessionId = await p.newSession(root);
    llm().script([{ text: 'one' }], [{ text: 'two' }]);
    await p.prompt(sessionId, 'first');
    expect(p.text(sessionId)).toMatch(/^Invalid config in .*toolCall/);
    const before = p.text(sessionId).length;
    await p.prompt(sessionId, 'second');
    expect(p.text(sessionId).slice(before)).toBe('two');
  });
});

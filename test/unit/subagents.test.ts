// Subagent definitions from Markdown (ECA docs/config/agents.md), how a step's spawn_agent calls
// are scheduled (core/subagents/step.ts), and the order the model reads their results in.
import { describe, expect, it } from 'vitest';
import { parseAgentConfig, parseAgentFile } from '../../src/core/subagents/parse.js';
import { runToolCalls } from '../../src/core/subagents/step.js';
import { ChildIds } from '../../src/core/subagents/child-ids.js';
import { subagentApproval } from '../../src/core/subagents/definitions.js';
import { toLlmMessages, type StoredMessage } from '../../src/core/chat/messages.js';
import type { Tool } from '../../src/shapes/tool.js';

const file = (front: string, body = 'Do the job.') => `---\n${front}\n---\n${body}\n`;

describe('agent Markdown files', () => {
  it('takes the name from front-matter (lowercased) or the file name without its extensions', () => {
    const named = parseAgentFile('/a/x.md', file('name: " Critic "\ndescription: Finds flaws'), { widen: true });
    expect(named).toMatchObject({ kind: 'subagent', def: { name: 'critic', description: 'Finds flaws', systemPrompt: 'Do the job.' } });
    const unnamed = parseAgentFile('/a/Architect.agent.md', file('description: Designs'), { widen: true });
    expect(unnamed).toMatchObject({ kind: 'subagent', def: { name: 'architect' } });
  });

  it('reads model, variant, maxSteps, and tools as ECA rules with `tool(pattern)` command matchers', () => {
    const p = parseAgentFile(
      '/a/r.md',
      file(
        'description: d\nmodel: fake/m2\nvariant: high\nmaxSteps: 4\ntools:\n  byDefault: ask\n  allow:\n    - eca__shell_command(npm run .*)\n    - eca__shell_command(git diff)\n    - eca__read_file\n  deny: [eca__write_file]',
      ),
      { widen: true },
    );
    expect(p).toMatchObject({
      kind: 'subagent',
      def: {
        model: 'fake/m2',
        variant: 'high',
        maxSteps: 4,
        tools: { byDefault: 'ask', allow: { eca__shell_command: { argsMatchers: { command: ['npm run .*', 'git diff'] } }, eca__read_file: null }, deny: { eca__write_file: null } },
      },
    });
  });

  it('a flat tools list is byDefault ask with the list allowed (Claude Code form); untrusted, only the ask stays', () => {
    const text = file('description: d\ntools: [eca__read_file, eca__grep]');
    expect(parseAgentFile('/a/l.md', text, { widen: true })).toMatchObject({ def: { tools: { byDefault: 'ask', allow: { eca__read_file: null, eca__grep: null } } } });
    const untrusted = parseAgentFile('/a/l.md', text, { widen: false });
    expect(untrusted).toMatchObject({ kind: 'subagent', narrowed: true, def: { tools: { byDefault: 'ask' } } });
    expect(untrusted.kind === 'subagent' && untrusted.def.tools?.allow).toBeUndefined();
  });

  it('reports what is wrong: no description, no body, unknown mode, bad maxSteps, bad YAML', () => {
    const bad = parseAgentFile('/a/b.md', file('mode: [subagent, helper]\nmaxSteps: -1', ''), { widen: true });
    expect(bad.kind === 'bad' && bad.problems).toEqual([
      'unknown mode ["subagent","helper"] (use "primary", "subagent" or both)',
      'no "description" (the model reads it to decide when to use the agent)',
      'no instructions (the body of the file, or "systemPrompt")',
      '"maxSteps" is not a positive whole number',
    ]);
    expect(parseAgentFile('/a/y.md', '---\na: [\n---\nx', { widen: true })).toMatchObject({ kind: 'bad', problems: [expect.stringMatching(/^YAML: /)] });
    expect(parseAgentFile('/a/p.md', file('description: d\nmode: primary'), { widen: true })).toEqual({ kind: 'primaryOnly' });
  });

  it('config entries count only with mode subagent; defaultModel and toolCall.approval are read', () => {
    expect(parseAgentConfig('plan', { defaultModel: 'x/y' })).toEqual({ kind: 'primaryOnly' });
    const p = parseAgentConfig('sleeper', { mode: 'subagent', description: 'Sleeps', systemPrompt: 'Sleep.', defaultModel: 'a/b', toolCall: { approval: { deny: { eca__shell_command: null } } } });
    expect(p).toMatchObject({ kind: 'subagent', def: { name: 'sleeper', model: 'a/b', tools: { deny: { eca__shell_command: null } } } });
  });

  it("an agent's approvals are laid over the user's: the user's deny still wins", () => {
    const merged = subagentApproval({ deny: { shell_command: null } }, { name: 'x', description: 'd', systemPrompt: 'p', origin: 'o', tools: { byDefault: 'allow', allow: { shell_command: null } } });
    expect(merged).toEqual({ byDefault: 'allow', allow: { shell_command: null }, ask: {}, deny: { shell_command: null } });
  });
});

describe('runToolCalls', () => {
  const tool = (parallel: number | undefined) => ({ name: 't', parallel: parallel === undefined ? undefined : { limit: () => parallel } }) as unknown as Tool;

  it('runs neighbouring parallel calls together up to the limit, every other call alone and in order', async () => {
    const calls = ['a', 's1', 's2', 's3', 'b', 's4'];
    let running = 0;
    const log: string[] = [];
    let peak = 0;
    await runToolCalls(
      calls,
      (c) => tool(c.startsWith('s') ? 2 : undefined),
      async (c) => {
        running++;
        peak = Math.max(peak, running);
        log.push(`start ${c}`);
        await new Promise((r) => setTimeout(r, c === 's1' ? 30 : 5));
        log.push(`end ${c}`);
        running--;
      },
    );
    expect(peak).toBe(2);
    // `a` ends before any subagent starts; `b` waits for all three; s3 takes s2's slot (s1 is slower).
    expect(log.indexOf('end a')).toBeLessThan(log.indexOf('start s1'));
    expect(log.slice(0, 3)).toEqual(['start a', 'end a', 'start s1']);
    expect(log.indexOf('start b')).toBeGreaterThan(Math.max(log.indexOf('end s1'), log.indexOf('end s2'), log.indexOf('end s3')));
    expect(log.indexOf('start s3')).toBeLessThan(log.indexOf('end s1'));
  });
});

describe('toLlmMessages with results stored as they finished', () => {
  it('gives the model the results in the order of its calls', () => {
    const result = (id: string): StoredMessage => ({
      role: 'tool',
      toolCallId: id,
      name: 'spawn_agent',
      server: 'patchbay',
      origin: 'native',
      args: {},
      outcome: 'called',
      error: false,
      outputs: [],
      llmText: id,
      totalTimeMs: 1,
    });
    const stored: StoredMessage[] = [
      { role: 'user', text: 'go' },
      {
        role: 'assistant',
        parts: [
          { type: 'toolCall', id: 'x', name: 'patchbay__spawn_agent', args: {} },
          { type: 'toolCall', id: 'y', name: 'patchbay__spawn_agent', args: {} },
        ],
      },
      result('y'),
      result('x'),
    ];
    const out = toLlmMessages(stored);
    expect(out.filter((m) => m.role === 'tool').map((m) => (m as { toolCallId: string }).toolCallId)).toEqual(['x', 'y']);
  });
});

describe('child chat ids (core/subagents/child-ids.ts)', () => {
  it("is ECA's `subagent-<toolCallId>` when free, the same until claimed, and suffixed when the id is taken or reserved", () => {
    const existing = new Set(['subagent-c0']);
    const ids = new ChildIds((id) => existing.has(id));
    expect(ids.peek('p1', 'c1')).toBe('subagent-c1');
    expect(ids.peek('p1', 'c1')).toBe('subagent-c1');
    // Another chat's call with the same id while the first is not started yet.
    expect(ids.peek('p2', 'c1')).toBe('subagent-c1-2');
    expect(ids.claim('p1', 'c1')).toBe('subagent-c1');
    existing.add('subagent-c1');
    // The same parent reusing the id in a later step gets a new chat.
    expect(ids.claim('p1', 'c1')).toBe('subagent-c1-3');
    expect(ids.claim('p1', 'c0')).toBe('subagent-c0-2');
  });
});

/**
 * The context-window arithmetic (src/core/turn/context-size.ts), what the model reads after a summary
 * (messages.ts `sentMessages`), and which turn auto-compaction keeps (compaction.ts `keptTail`).
 */
import { describe, expect, it } from 'vitest';
import { keptTail } from '../../src/core/turn/compaction.js';
import { contextBreakdown, estimateTokens, PRUNED_MARKER, pruneToolResults, reachedThreshold } from '../../src/core/turn/context-size.js';
import { autoCompactPercentage } from '../../src/core/turn/context-window.js';
import { SUMMARY_HEAD, sentMessages, toLlmMessages, type StoredMessage } from '../../src/core/chat/messages.js';
import { configSchema } from '../../src/config/schema.js';
import type { LlmMessage, ModelEntry } from '../../src/shapes/llm.js';

const user = (text: string): StoredMessage => ({ role: 'user', text });
const said = (text: string): StoredMessage => ({ role: 'assistant', parts: [{ type: 'text', text }] });
const calls = (id: string): StoredMessage => ({ role: 'assistant', parts: [{ type: 'toolCall', id, name: 'patchbay__read_file', args: { path: id } }] });
const result = (id: string, text: string): StoredMessage => ({
  role: 'tool',
  toolCallId: id,
  name: 'read_file',
  server: 'patchbay',
  origin: 'native',
  args: { path: id },
  outcome: 'called',
  error: false,
  outputs: [{ type: 'text', text }],
  llmText: text,
  totalTimeMs: 1,
});
const summary = (text: string, kept?: number): StoredMessage => ({ role: 'system', kind: 'summary', text, ...(kept !== undefined ? { kept } : {}) });
const entry = (context?: number): ModelEntry => ({ id: 'p/m', provider: 'p', modelName: 'm', ...(context ? { limit: { context, output: 100 } } : {}) }) as ModelEntry;

describe('reachedThreshold (ECA lifecycle.clj auto-compact?)', () => {
  it('compares the used share of the window with the percentage, inclusive', () => {
    expect(reachedThreshold(750, 1000, 75)).toBe(true);
    expect(reachedThreshold(749, 1000, 75)).toBe(false);
    expect(reachedThreshold(90_000, 100_000, 90)).toBe(true);
  });

  it('never fires without a known window or with the feature off', () => {
    expect(reachedThreshold(10_000, undefined, 75)).toBe(false);
    expect(reachedThreshold(10_000, 0, 75)).toBe(false);
    expect(reachedThreshold(10_000, 1000, null)).toBe(false);
  });

  it("reads the config's key, 75 by default, the agent's own first, null for off", () => {
    expect(autoCompactPercentage(configSchema.parse({}), 'code')).toBe(75);
    expect(autoCompactPercentage(configSchema.parse({ autoCompactPercentage: 60 }), 'code')).toBe(60);
    expect(autoCompactPercentage(configSchema.parse({ autoCompactPercentage: 60, agent: { code: { autoCompactPercentage: 80 } } }), 'code')).toBe(80);
    expect(autoCompactPercentage(configSchema.parse({ autoCompactPercentage: 60, agent: { code: { autoCompactPercentage: 80 } } }), 'plan')).toBe(60);
    expect(autoCompactPercentage(configSchema.parse({ autoCompactPercentage: null }), 'code')).toBeNull();
    expect(configSchema.safeParse({ autoCompactPercentage: 150 }).success).toBe(false);
  });
});

describe('pruneToolResults', () => {
  const history: LlmMessage[] = toLlmMessages([user('go'), calls('a'), result('a', 'A'.repeat(400)), calls('b'), result('b', 'B'.repeat(400)), calls('c'), result('c', 'C'.repeat(400)), said('done')]);

  it('empties the results older than the last steps, keeping which tool ran', () => {
    const pruned = pruneToolResults(history, 2);
    const tools = pruned.filter((m) => m.role === 'tool');
    expect(tools.map((m) => m.content)).toEqual([PRUNED_MARKER, PRUNED_MARKER, 'C'.repeat(400)]);
    expect(tools.map((m) => m.toolCallId)).toEqual(['a', 'b', 'c']);
    expect(estimateTokens(pruned)).toBeLessThan(estimateTokens(history));
    // What was given is left as it was: pruning is for what is sent only.
    expect(history.filter((m) => m.role === 'tool').map((m) => m.content.length)).toEqual([400, 400, 400]);
  });

  it('returns the same messages when there is nothing old enough', () => {
    expect(pruneToolResults(history, 10)).toBe(history);
    expect(pruneToolResults(pruneToolResults(history, 1), 1)).toEqual(pruneToolResults(history, 1));
  });
});

describe('what the model reads after a summary', () => {
  it('is the summary, the turn it kept, then what came after; the store keeps all', () => {
    const stored = [user('old'), said('old answer'), user('current'), calls('x'), result('x', 'X'), summary('S', 3), said('after')];
    expect(sentMessages(stored)).toEqual([stored[5], stored[2], stored[3], stored[4], stored[6]]);
    const llm = toLlmMessages(stored);
    expect(llm[0]).toEqual({ role: 'user', content: `${SUMMARY_HEAD}\nS` });
    expect(llm.slice(1).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(JSON.stringify(llm)).not.toContain('old answer');
  });

  it('only the last summary counts, and one that kept nothing starts afresh', () => {
    const stored = [user('a'), said('b'), summary('S1'), user('c'), said('d'), summary('S2'), user('e')];
    expect(toLlmMessages(stored)).toEqual([
      { role: 'user', content: `${SUMMARY_HEAD}\nS2` },
      { role: 'user', content: 'e' },
    ]);
  });
});

describe('keptTail', () => {
  it('keeps the latest turn when it is small and there is older history to summarise', () => {
    const stored = [user('a'.repeat(4000)), said('b'), user('now'), calls('x'), result('x', 'small')];
    expect(keptTail(stored, entry(10_000))).toBe(3);
  });

  it('keeps nothing when the latest turn is most of the window, or all there is', () => {
    expect(keptTail([user('a'), said('b'), user('now'), calls('x'), result('x', 'y'.repeat(20_000))], entry(10_000))).toBe(0);
    expect(keptTail([user('now'), calls('x'), result('x', 'small')], entry(10_000))).toBe(0);
  });
});

describe('contextBreakdown (ECA shared.clj context-breakdown)', () => {
  const req = {
    system: 's'.repeat(400),
    tools: [{ name: 't', description: 'd', parameters: {} }],
    messages: toLlmMessages([user('u'.repeat(400)), calls('x'), result('x', 'r'.repeat(800))]),
  };

  it('estimates each category, and scales them to the reported count', () => {
    const est = contextBreakdown(req, undefined, 1000);
    expect(est.categories.map((c) => c.name)).toEqual(['System prompt', 'Tool definitions', 'Tool calls', 'Conversation']);
    expect(est.categories.find((c) => c.name === 'System prompt')?.tokens).toBe(100);
    expect(est.usedTokens).toBe(est.categories.reduce((n, c) => n + c.tokens, 0));
    expect(est.contextLimit).toBe(1000);
    const scaled = contextBreakdown(req, est.usedTokens * 2, undefined);
    expect(scaled.usedTokens).toBe(est.usedTokens * 2);
    expect(scaled.categories.find((c) => c.name === 'System prompt')?.tokens).toBe(200);
    expect(scaled.contextLimit).toBeUndefined();
  });

  it("counts the rules, the skills catalog and AGENTS.md apart, by their sections' ids (ECA split-system-prompt)", () => {
    const agents = 'a'.repeat(200);
    const rules = 'r'.repeat(80);
    const inPlay = 'p'.repeat(40);
    const skills = 'k'.repeat(120);
    const hooks = 'h'.repeat(40);
    const system = ['own text '.repeat(20), agents, rules, skills, inPlay, hooks].join('\n\n');
    const sections = [
      { id: 'instructions:/w/AGENTS.md', text: agents, stable: true },
      { id: 'rules', text: rules, stable: true },
      { id: 'skills', text: skills, stable: true },
      { id: 'rules:in-play', text: inPlay, stable: false },
      { id: 'hooks:chatStart', text: hooks, stable: false },
    ];
    const b = contextBreakdown({ ...req, system, sections }, undefined, undefined);
    expect(b.categories.map((c) => [c.name, c.tokens])).toEqual([
      ['System prompt', Math.ceil(system.length / 4) - 50 - 30 - 30],
      ['Rules', 30],
      ['Skills', 30],
      ['AGENTS.md', 50],
      ['Tool definitions', expect.any(Number)],
      ['Tool calls', expect.any(Number)],
      ['Conversation', expect.any(Number)],
    ]);
  });
});

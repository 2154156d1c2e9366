/**
 * How the terminal renderer (src/cli/chat-render.ts) shows subagents, piped (no status line):
 * lines indented under the spawn_agent call, and named by agent while two run at once.
 */
import { describe, expect, it } from 'vitest';
import { Renderer } from '../../src/cli/chat-render.js';
import { Term } from '../../src/cli/chat-term.js';
import type { ChatContent } from '../../src/protocol/eca/content.js';

function renderer() {
  let out = '';
  const stream = { write: (s: string) => ((out += s), true), isTTY: false };
  const r = new Renderer(new Term(stream, stream, {}), '/ws');
  return { r, out: () => out };
}

const spawn = (id: string, agent: string, activity: string): ChatContent => ({
  type: 'toolCallRun',
  origin: 'native',
  id,
  name: 'spawn_agent',
  server: 'eca',
  summary: `${agent}: ${activity}`,
  arguments: { agent, task: 't' },
  manualApproval: false,
  details: { type: 'subagent', subagentChatId: `subagent-${id}`, model: 'fake/m1', agentName: agent, step: 1 },
});
const called = (id: string, name: string): ChatContent => ({ type: 'toolCalled', origin: 'native', id, name, server: 'eca', arguments: {}, error: false, outputs: [], totalTimeMs: 3 });

describe('Renderer: subagents', () => {
  it('one subagent: its label and calls indented under it; two at once: each line names its agent; a chat no call named shows nothing', () => {
    const { r, out } = renderer();
    r.content('assistant', spawn('s1', 'explorer', 'reading'));
    r.subagentContent('subagent-s1', 'assistant', called('c1', 'read_file'));
    r.content('assistant', spawn('s2', 'general', 'writing'));
    r.subagentContent('subagent-s2', 'assistant', called('c2', 'write_file'));
    r.subagentContent('subagent-s9', 'assistant', called('c9', 'grep'));
    r.content('assistant', called('s1', 'spawn_agent'));
    r.subagentContent('subagent-s2', 'assistant', called('c3', 'read_file'));
    expect(out().split('\n')).toEqual(['  explorer: reading', '  ✓ read_file (3 ms)', '  general: writing', '  [general] ✓ write_file (3 ms)', '✓ spawn_agent (3 ms)', '  ✓ read_file (3 ms)', '']);
  });

  it('an error of the subagent is shown under it; its notes only with --verbose', () => {
    const { r, out } = renderer();
    r.content('assistant', spawn('s1', 'explorer', 'reading'));
    r.subagentContent('subagent-s1', 'system', { type: 'text', text: 'MCP server x is still starting' });
    r.subagentContent('subagent-s1', 'system', { type: 'text', text: 'Error from fake/m1: boom', error: true });
    expect(out()).toBe('  explorer: reading\n  Error from fake/m1: boom\n');
    r.verbose = true;
    r.subagentContent('subagent-s1', 'system', { type: 'text', text: 'MCP server x is still starting' });
    expect(out()).toContain('  MCP server x is still starting\n');
  });
});

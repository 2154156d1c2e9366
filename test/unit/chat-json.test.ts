/**
 * `patchbay chat --json`'s view of a turn (src/cli/chat-json.ts `JsonView`): ECA contents in, JSON
 * events out, content by content. The e2e tier (test/e2e/chat-json.test.ts) runs the binary.
 */
import { describe, expect, it } from 'vitest';
import { JsonView, exitCodeOf, type JsonEvent } from '../../src/cli/chat-json.js';
import type { ChatContent } from '../../src/protocol/eca/content.js';

function view(verbose = false) {
  const events: JsonEvent[] = [];
  const v = new JsonView((e) => events.push(e), { verbose, messagesShown: new Set(['Invalid config in /x']) });
  return { v, events, types: () => events.map((e) => e.type) };
}

const text = (t: string): ChatContent => ({ type: 'text', text: t });
const spawnRun: ChatContent = {
  type: 'toolCallRun',
  origin: 'native',
  id: 's1',
  name: 'spawn_agent',
  server: 'eca',
  summary: 'explorer: looking around',
  arguments: { agent: 'explorer', task: 't' },
  manualApproval: false,
  details: { type: 'subagent', subagentChatId: 'subagent-s1', model: 'fake/m1', agentName: 'explorer', step: 1 },
};

describe('JsonView', () => {
  it('a message is whole at the next tool call or the end, not at a progress report or usage in between', () => {
    const { v, events } = view();
    v.content('assistant', text('Hel'));
    v.content('system', { type: 'progress', state: 'running', text: 'Generating' });
    v.content('system', { type: 'usage', sessionTokens: 10, messageInputTokens: 7, messageOutputTokens: 3 });
    v.content('assistant', text('lo'));
    v.content('system', { type: 'progress', state: 'finished', text: '' });
    expect(events.filter((e) => e.type === 'message')).toEqual([{ type: 'message', text: 'Hello' }]);
    v.done({ kind: 'done', errors: [], stopped: false, unasked: [] }, 0, 'c1');
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'end_turn', chatId: 'c1', exitCode: 0, usage: { contextTokens: 10, inputTokens: 7, outputTokens: 3 }, answer: 'Hello' });
  });

  it("patchbay's own tools are the server patchbay (ECA says eca); a rejection no one could answer is said once, as unasked", () => {
    const { v, events } = view();
    const call = { type: 'toolCallRun', origin: 'native', id: 'w1', name: 'write_file', server: 'eca', arguments: { path: 'a' }, manualApproval: true } as const;
    v.content('assistant', call);
    expect(events).toEqual([]); // said once decided
    v.unasked('w1');
    v.decided(call, 'unasked');
    v.content('assistant', { ...call, type: 'toolCallRejected', reason: 'user' });
    expect(events).toEqual([expect.objectContaining({ type: 'toolCall', id: 'w1', server: 'patchbay', status: 'rejected', reason: 'unasked', message: expect.stringContaining('--yes') })]);
  });

  it('a call denied by the config, never asked: rejected with reason config', () => {
    const { v, events } = view();
    v.content('assistant', { type: 'toolCallRejected', origin: 'mcp', id: 'x1', name: 'rm', server: 'files', arguments: {}, reason: 'userConfigDeny' });
    expect(events).toEqual([expect.objectContaining({ type: 'toolCall', id: 'x1', server: 'files', status: 'rejected', reason: 'config' })]);
  });

  it('internal notes only when verbose; a text already said as a server message is not said again; a marked error is an error', () => {
    const quiet = view();
    const note: ChatContent = { type: 'text', text: 'System prompt changed (model), prompt cache invalidated.', internal: true };
    quiet.v.content('system', note);
    quiet.v.content('system', text('Invalid config in /x'));
    expect(quiet.events).toEqual([]);
    expect(quiet.v.content('system', { type: 'text', text: 'It broke.', error: true })).toBe('It broke.');
    expect(quiet.events).toEqual([{ type: 'error', message: 'It broke.' }]);
    const loud = view(true);
    loud.v.content('system', note);
    expect(loud.events).toEqual([{ type: 'notice', text: 'System prompt changed (model), prompt cache invalidated.', internal: true }]);
  });

  it("a subagent's contents carry parentToolCallId; its text is only whole messages; a chat no call named is ignored", () => {
    const { v, events, types } = view();
    v.content('assistant', spawnRun);
    expect(types()).toEqual(['toolCall', 'subagent']);
    expect(events[1]).toEqual({ type: 'subagent', toolCallId: 's1', chatId: 'subagent-s1', agent: 'explorer', activity: 'looking around', model: 'fake/m1', step: 1 });
    v.subagentContent('subagent-s1', 'assistant', text('found '));
    v.subagentContent('subagent-s1', 'assistant', text('it'));
    v.subagentContent('subagent-s1', 'system', { type: 'progress', state: 'finished', text: '' });
    v.subagentContent('elsewhere', 'assistant', text('not ours'));
    expect(events.slice(2)).toEqual([{ type: 'message', text: 'found it', parentToolCallId: 's1' }]);
    // A further step of the subagent is said; the same step again is not.
    const step2: ChatContent = {
      type: 'toolCallRunning',
      origin: 'native',
      id: 's1',
      name: 'spawn_agent',
      server: 'eca',
      summary: 'explorer: looking around',
      arguments: {},
      details: { type: 'subagent', subagentChatId: 'subagent-s1', model: 'fake/m1', agentName: 'explorer', step: 2 },
    };
    v.content('assistant', step2);
    v.content('assistant', step2);
    expect(events.filter((e) => e.type === 'subagent').map((e) => e.step)).toEqual([1, 2]);
    expect(v.answer).toBeUndefined(); // the subagent's message is not our answer
  });

  it('the exit codes of the plain one-shot', () => {
    expect(exitCodeOf({ kind: 'done', errors: [], stopped: false, unasked: [] })).toBe(0);
    expect(exitCodeOf({ kind: 'done', errors: ['x'], stopped: false, unasked: [] })).toBe(1);
    expect(exitCodeOf({ kind: 'done', errors: [], stopped: true, unasked: [] })).toBe(130);
    expect(exitCodeOf({ kind: 'done', errors: [], stopped: false, unasked: ['write_file'] })).toBe(3);
    expect(exitCodeOf({ kind: 'login' })).toBe(1);
    expect(exitCodeOf({ kind: 'failed', message: 'gone' })).toBe(1);
  });
});

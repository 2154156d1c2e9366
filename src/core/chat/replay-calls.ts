/**
 * A stored tool call redrawn stage by stage, as a live turn showed it (ECA chat.clj
 * `message-content->chat-content`: a `tool_call` message replays as `toolCallPrepare`, its
 * `tool_call_output` as `toolCallRun`, `toolCallRunning` and `toolCalled`). eca-webview builds a
 * call's card at its `toolCallPrepare` and only updates a card it has (redux/slices/chat.ts
 * `applyContentToMessages`): a replay of the last stage alone showed no card, and the texts on
 * either side of the call ran together. Every event is marked `replayed`, so a façade says
 * nothing of what the chat is doing now (no "Calling tool" progress).
 */
import type { ToolCallEvent } from '../events.js';
import type { StoredMessage } from './stored-message.js';

type ToolMessage = Extract<StoredMessage, { role: 'tool' }>;

/** Who the stored call is, in every stage's event. */
function fields(m: ToolMessage) {
  return {
    type: 'toolCall' as const,
    origin: m.origin,
    id: m.toolCallId,
    name: m.name,
    server: m.server,
    arguments: m.args,
    ...(m.summary !== undefined ? { summary: m.summary } : {}),
    ...(m.details ? { details: m.details } : {}),
    replayed: true,
  };
}

/** The call's `preparing`: its whole arguments as one delta (a client that joins deltas gets them whole). */
export function preparedCall(m: ToolMessage): ToolCallEvent {
  return { ...fields(m), state: 'preparing', argumentsDelta: JSON.stringify(m.args) };
}

/**
 * The stages after preparing: a call that ran is announced, running, then done. A rejected one is
 * announced when it was live (the user said no to it; a stopped one: ../tool-calls/tool-call.ts announces a call
 * before it is stopped); a call the config, the agent or a hook refused never was. Announced
 * without asking, as ECA's replay sends `toolCallRun` (no `manualApproval`): the question was
 * answered long ago, and a client must not offer to approve it again.
 */
export function finishedCall(m: ToolMessage): ToolCallEvent[] {
  const f = fields(m);
  if (m.outcome === 'called') {
    return [
      { ...f, state: 'announced', needsApproval: false },
      { ...f, state: 'running' },
      { ...f, state: 'done', error: m.error, outputs: m.outputs, totalTimeMs: m.totalTimeMs },
    ];
  }
  const reason = m.reason ?? 'user';
  const announced = reason === 'user' || reason === 'stopped' ? [{ ...f, state: 'announced' as const, needsApproval: false }] : [];
  return [...announced, { ...f, state: 'rejected', reason }];
}

/**
 * The tool message that answered the call `id` of the assistant message at `at`: among the
 * messages after it, before the next assistant or user message.
 */
export function answerOf(stored: readonly StoredMessage[], at: number, id: string): ToolMessage | undefined {
  for (let i = at + 1; i < stored.length; i++) {
    const m = stored[i];
    if (m.role === 'assistant' || m.role === 'user') return undefined;
    if (m.role === 'tool' && m.toolCallId === id) return m;
  }
  return undefined;
}

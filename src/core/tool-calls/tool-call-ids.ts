/**
 * Tool-call ids unique within a chat. Some providers repeat them (a later call reusing an earlier
 * call's id, in the same step or a later one); the editor keys a call's card by its id (ECA
 * `toolCall*` contents, ACP `toolCallId`) and the store keys the call's row by it, so a repeat
 * would overwrite the earlier call. A repeated id is replaced by one of patchbay's own, and the
 * replacement is what the chat keeps everywhere: the assistant message's call, the tool result,
 * the events. The model then reads one consistent conversation (OpenAI's `tool_calls[].id` and
 * `tool_call_id`, Anthropic's `tool_use.id` and `tool_use_id`, Responses' `call_id`, all from the
 * stored messages); the replacement is letters, digits and `_`, as Anthropic's id pattern asks.
 */
import { randomBytes } from 'node:crypto';
import type { StoredMessage } from '../chat/stored-message.js';

/** The ids of the calls a chat already has (its assistant messages' calls and its tool results). */
export function usedCallIds(stored: readonly StoredMessage[]): Set<string> {
  const used = new Set<string>();
  for (const m of stored) {
    if (m.role === 'tool') used.add(m.toolCallId);
    else if (m.role === 'assistant') for (const p of m.parts) if (p.type === 'toolCall') used.add(p.id);
  }
  return used;
}

/**
 * One model step's calls: the provider's ids in, the chat's ids out. A provider's stream names a
 * call by its id at its start, in its argument pieces and at its end; with a repeated id the
 * pieces go to the call started last, and the ends close the calls in the order they started.
 */
export class StepCallIds {
  /** Per provider id, the chat's ids of its calls not yet ended, in the order they started. */
  private readonly open = new Map<string, string[]>();
  /** Per provider id, the call started last (its argument pieces go there). */
  private readonly latest = new Map<string, string>();

  constructor(private readonly used: Set<string>) {}

  start(providerId: string): string {
    const id = this.used.has(providerId) || !providerId ? freshId() : providerId;
    this.used.add(id);
    this.open.set(providerId, [...(this.open.get(providerId) ?? []), id]);
    this.latest.set(providerId, id);
    return id;
  }

  delta(providerId: string): string {
    return this.latest.get(providerId) ?? providerId;
  }

  /** A call's end; a provider that sends only the end (no start) gets its id here. */
  end(providerId: string): string {
    const q = this.open.get(providerId);
    if (q?.length) return q.shift()!;
    const id = this.start(providerId);
    this.open.get(providerId)!.pop();
    return id;
  }
}

function freshId(): string {
  return `call_pb${randomBytes(10).toString('hex')}`;
}

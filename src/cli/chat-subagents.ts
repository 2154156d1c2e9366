/**
 * Which `spawn_agent` call a subagent's chat runs for, in `patchbay chat`. The server names the
 * child chat in the call's `SubagentDetails.subagentChatId` (from `toolCallRun` on; ECA
 * docs/protocol.md "SubagentDetails"), and every content of the child carries `parentChatId`
 * (ECA lifecycle.clj `send-content!`); eca-emacs nests the child's contents under the call the
 * same way. Shared by the terminal renderer and the JSON lines.
 */
import type { ChatContent } from '../protocol/eca/content.js';

type ToolCallContent = Extract<ChatContent, { type: 'toolCallRun' | 'toolCallRunning' | 'toolCalled' | 'toolCallRejected' }>;

export interface SubagentCall {
  /** The `spawn_agent` call's id in our chat. */
  toolCallId: string;
  /** The subagent's own chat. */
  chatId: string;
  agent: string;
  /** The call's summary: `explorer: exploring codebase` (the agent and the model's activity label). */
  label: string;
  /** The label only, when the model gave one. */
  activity?: string;
  model: string;
  step: number;
  maxSteps?: number;
}

export class SubagentCalls {
  private readonly byChat = new Map<string, SubagentCall>();
  private readonly byCall = new Map<string, SubagentCall>();

  /**
   * Notes a tool call of our chat; returns the subagent when the call runs one, with `fresh`
   * true the first time it is seen and `stepped` when its step moved on.
   */
  note(c: ToolCallContent): { sub: SubagentCall; fresh: boolean; stepped: boolean } | undefined {
    const d = c.details;
    if (d?.type !== 'subagent') return undefined;
    const chatId = d.subagentChatId ?? `subagent-${c.id}`;
    const known = this.byCall.get(c.id);
    const label = c.summary ?? d.agentName;
    const prefix = `${d.agentName}: `;
    const activity = label.startsWith(prefix) ? label.slice(prefix.length) : undefined;
    const sub: SubagentCall = {
      toolCallId: c.id,
      chatId,
      agent: d.agentName,
      label,
      ...(activity ? { activity } : {}),
      model: d.model,
      step: d.step,
      ...(d.maxSteps !== undefined ? { maxSteps: d.maxSteps } : {}),
    };
    if (known && known.chatId !== chatId) this.byChat.delete(known.chatId);
    this.byCall.set(c.id, sub);
    this.byChat.set(chatId, sub);
    return { sub, fresh: !known, stepped: !!known && known.step !== sub.step };
  }

  /** The call a child chat runs for (its chat id named in the call's details, else ECA's `subagent-<toolCallId>`). */
  of(chatId: string): SubagentCall | undefined {
    return this.byChat.get(chatId) ?? (chatId.startsWith('subagent-') ? this.byCall.get(chatId.slice('subagent-'.length)) : undefined);
  }

  /** Subagents seen this turn whose calls have not finished. */
  get running(): number {
    return this.byCall.size;
  }

  /** The call finished (or was rejected): its subagent is no longer running. */
  finished(toolCallId: string): void {
    this.byCall.delete(toolCallId);
  }

  clear(): void {
    this.byChat.clear();
    this.byCall.clear();
  }
}

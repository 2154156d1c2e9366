/**
 * A replayed chat with its subagents' contents inside it, as ECA replays them (chat.clj
 * `messages->contents`): a finished `spawn_agent` call is announced and started with its
 * subagent details (../chat/replay-calls.ts), then the child chat's messages follow under the child's
 * id naming the parent, then the call's result. eca-emacs (eca-chat.el `eca-chat-content-received`, `eca-chat--render-history-contents`)
 * nests contents that carry `parentChatId` under the call it mapped from `details.subagentChatId`
 * at `toolCallRun`; without the child's messages a reopened chat shows an empty subagent block.
 */
import type { ChatEvent } from '../events.js';
import { replayEvents } from '../chat/messages.js';
import type { StoredMessage } from '../chat/stored-message.js';

export interface ReplayItem {
  chatId: string;
  event: ChatEvent;
  /** Set on a subagent's contents: the chat they are shown in. */
  parentChatId?: string;
}

/** `events` of `chatId`, each finished subagent call with its child's replay before its result. `child(id)`: a stored child chat of `chatId`'s messages. */
export function withSubagents(chatId: string, events: ChatEvent[], child: (childId: string) => StoredMessage[] | undefined): ReplayItem[] {
  const out: ReplayItem[] = [];
  for (const event of events) {
    const childId = event.type === 'toolCall' && event.state === 'done' && event.details?.type === 'subagent' ? event.details.subagentChatId : undefined;
    const messages = childId === undefined ? undefined : child(childId);
    // The call was announced and started before its result (with its subagent details: the editor
    // maps the child's id to the call there), so the child's contents go between them.
    if (childId !== undefined && messages) for (const e of replayEvents(messages)) out.push({ chatId: childId, event: e, parentChatId: chatId });
    out.push({ chatId, event });
  }
  return out;
}

/**
 * chatStatusChanged (ECA docs/config/hooks.md "chatStatusChanged"; eca chat/lifecycle.clj
 * `chat-status-payload`, `trigger-chat-status-hook!`): the chat's aggregate status, rebuilt from
 * core's events, sent to the hooks whenever it changed. Advisory: nothing waits for these hooks;
 * one chat's runs go one after another so they see the snapshots in order.
 */
import type { ChatEvent, ChatEvents } from '../events.js';
import type { Hooks } from './hooks.js';

interface ChatState {
  status: 'idle' | 'running' | 'stopping';
  approval: Set<string>;
  question: Set<string>;
  running: Set<string>;
  last: string;
  queue: Promise<unknown>;
}

/** ECA's ask_user is a question to the user, not a running tool. */
const QUESTION_TOOLS = new Set(['ask_user']);

export class StatusHooks {
  private readonly chats = new Map<string, ChatState>();

  constructor(private readonly hooks: Hooks) {}

  /** `events` with every event also seen here. */
  observe(events: ChatEvents): ChatEvents {
    // Spelled out: the sink may be a class instance, whose methods a spread would lose.
    return {
      // A subagent's chat names its parent (the payload's `parent_chat_id`) with every event.
      event: (chatId, e, parentChatId) => (events.event(chatId, e, parentChatId), this.seen(chatId, e, parentChatId)),
      opened: (chatId, title) => events.opened(chatId, title),
      cleared: (chatId) => events.cleared(chatId),
      deleted: (chatId) => (events.deleted(chatId), this.chats.delete(chatId)),
      showMessage: (type, message) => events.showMessage(type, message),
      ...(events.together ? { together: (fn: () => void) => events.together!(fn) } : {}),
    };
  }

  private seen(chatId: string, e: ChatEvent, parent: string | undefined): void {
    if (e.type !== 'status' && e.type !== 'toolCall' && e.type !== 'turnEnded') return;
    // A replayed call is history: it waits for no one and runs nothing now.
    if (e.type === 'toolCall' && e.replayed) return;
    if (!this.hooks.has('chatStatusChanged')) return;
    let s = this.chats.get(chatId);
    if (!s) this.chats.set(chatId, (s = { status: 'idle', approval: new Set(), question: new Set(), running: new Set(), last: '', queue: Promise.resolve() }));
    if (e.type === 'status') s.status = e.status;
    else if (e.type === 'turnEnded') {
      s.status = 'idle';
      s.approval.clear();
      s.question.clear();
      s.running.clear();
    } else {
      s.approval.delete(e.id);
      s.question.delete(e.id);
      s.running.delete(e.id);
      if (e.state === 'announced' && e.needsApproval) s.approval.add(e.id);
      if (e.state === 'running') (QUESTION_TOOLS.has(e.name) ? s.question : s.running).add(e.id);
    }
    const sorted = (set: Set<string>) => [...set].sort();
    const awaiting = s.approval.size > 0 || s.question.size > 0;
    const data = {
      status: s.status,
      awaitingUserInput: awaiting,
      pendingApprovalToolCallIds: sorted(s.approval),
      pendingQuestionToolCallIds: sorted(s.question),
      runningToolCallIds: sorted(s.running),
      ...(awaiting ? { waitingReason: s.approval.size ? 'toolApproval' : 'userQuestion' } : {}),
      ...(parent ? { parentChatId: parent } : {}),
    };
    const snapshot = JSON.stringify(data);
    if (snapshot === s.last) return;
    s.last = snapshot;
    s.queue = s.queue.then(() => this.hooks.trigger('chatStatusChanged', { chat: { chatId }, data })).catch(() => {});
  }
}

/**
 * What the remote API says of a chat besides its events: its status, followed from the events as
 * one front end of the port that follows every chat (a chat with no event since the API started
 * is idle). One small entry per chat, dropped when the chat is deleted.
 */
import type { ChatStatus } from '../../../core/events.js';
import { NO_CAPABILITIES, type PortFrontEnd, type SeqEvent } from '../../../core/chat/port.js';

export class ChatStates {
  private readonly status = new Map<string, ChatStatus>();

  readonly frontEnd: PortFrontEnd<unknown> = {
    name: 'remote-status',
    capabilities: NO_CAPABILITIES,
    chatEvent: (e: SeqEvent) => {
      const ev = e.event;
      if (ev.type === 'status') this.status.set(e.chatId, ev.status);
      else if (ev.type === 'turnEnded') this.status.set(e.chatId, 'idle');
      else if (ev.type === 'chatDeleted') this.status.delete(e.chatId);
    },
  };

  statusOf(chatId: string): ChatStatus {
    return this.status.get(chatId) ?? 'idle';
  }
}

/**
 * What the remote API needs of the host's FrontEndPort (issue 30): chat events numbered per chat
 * (1, 2, 3, …), an attach that replays one chat after a number and then follows live with no gap
 * and no duplicate, the open approvals of a chat, and answers where the first one wins.
 *
 * `ChatEventLog` is an in-process stand-in for that port: the ECA façade tees its chat events
 * into it while the remote API is on. It keeps the newest `maxPerChat` events of each chat in
 * memory (not in the store), so a replay reaches back only as far as this process has seen.
 */
import type { ChatEvent, ChatStatus, ToolCallEvent } from '../../core/events.js';
import { errorMessage, logger } from '../../util/log.js';

const log = logger('remote');

/** One chat event as front ends receive it: `seq` counts from 1 in each chat. */
export interface SeqChatEvent {
  chatId: string;
  seq: number;
  event: ChatEvent;
  parentChatId?: string;
}

export interface RemoteFrontEnd {
  chatEvent(e: SeqChatEvent): void;
}

/** A tool call waiting for the user's answer (ECA: a call in `:waiting-approval`). */
export type PendingApproval = Extract<ToolCallEvent, { state: 'announced' }> & { chatId: string; kind: 'approval' };

export type AnswerOutcome = 'answered' | 'alreadyAnswered' | 'unknown';

export interface RemoteChatInfo {
  id: string;
  title?: string;
  status: ChatStatus;
  parentChatId?: string;
  /** The number of its newest event (0: none yet). */
  lastSeq: number;
}

/** Where a replay starts: that chat's events after `afterSeq`. */
export interface AttachFrom {
  chatId: string;
  afterSeq: number;
}

export class ReplayUnavailable extends Error {
  constructor(
    readonly chatId: string,
    readonly oldestSeq: number,
  ) {
    super(`chat ${chatId}: events before ${oldestSeq} are no longer kept; replay from ${oldestSeq - 1} or later`);
  }
}

export interface RemotePort {
  /**
   * Replays `from` (synchronously, before it returns) and then hands the front end every chat
   * event live; returns its detach. Throws ReplayUnavailable when the replay would have a gap.
   */
  attach(frontEnd: RemoteFrontEnd, from?: AttachFrom): () => void;
  chat(chatId: string): RemoteChatInfo | undefined;
  pending(chatId: string): PendingApproval[];
  /** Approve or reject an open approval; the first answer wins (the others get `alreadyAnswered`). */
  answer(chatId: string, toolCallId: string, approve: boolean): AnswerOutcome;
}

interface ChatLog {
  events: SeqChatEvent[];
  lastSeq: number;
  title?: string;
  status: ChatStatus;
  parentChatId?: string;
  pending: Map<string, PendingApproval>;
  /** Tool call ids seen in this chat: an answer to one no longer pending is `alreadyAnswered`. */
  seen: Set<string>;
}

export interface ApprovalSink {
  approve(chatId: string, toolCallId: string): void;
  reject(chatId: string, toolCallId: string): void;
}

export class ChatEventLog implements RemotePort {
  private readonly chats = new Map<string, ChatLog>();
  private readonly frontEnds = new Set<RemoteFrontEnd>();

  constructor(
    private readonly sink: ApprovalSink,
    private readonly maxPerChat = 20_000,
  ) {}

  /** A chat event from core: numbered, kept, and handed to every attached front end. */
  record(chatId: string, event: ChatEvent, parentChatId?: string): SeqChatEvent {
    let c = this.chats.get(chatId);
    if (!c) {
      c = { events: [], lastSeq: 0, status: 'idle', pending: new Map(), seen: new Set(), ...(parentChatId !== undefined ? { parentChatId } : {}) };
      this.chats.set(chatId, c);
    }
    const e: SeqChatEvent = { chatId, seq: ++c.lastSeq, event, ...(parentChatId !== undefined ? { parentChatId } : {}) };
    c.events.push(e);
    if (c.events.length > this.maxPerChat) c.events.splice(0, c.events.length - this.maxPerChat);
    track(c, chatId, event);
    for (const fe of [...this.frontEnds]) {
      try {
        fe.chatEvent(e);
      } catch (err) {
        log.warn(`a remote front end failed on an event: ${errorMessage(err)}`);
      }
    }
    return e;
  }

  /** The chat was deleted: nothing of it is kept. */
  forget(chatId: string): void {
    this.chats.delete(chatId);
  }

  attach(frontEnd: RemoteFrontEnd, from?: AttachFrom): () => void {
    if (from) {
      const c = this.chats.get(from.chatId);
      const events = c?.events ?? [];
      const oldest = events[0]?.seq;
      if (oldest !== undefined && from.afterSeq < oldest - 1) throw new ReplayUnavailable(from.chatId, oldest);
      // Synchronous: no event can be recorded between the replay and the live follow.
      for (const e of events) if (e.seq > from.afterSeq) frontEnd.chatEvent(e);
    }
    this.frontEnds.add(frontEnd);
    return () => this.frontEnds.delete(frontEnd);
  }

  chat(chatId: string): RemoteChatInfo | undefined {
    const c = this.chats.get(chatId);
    if (!c) return undefined;
    return { id: chatId, status: c.status, lastSeq: c.lastSeq, ...(c.title !== undefined ? { title: c.title } : {}), ...(c.parentChatId !== undefined ? { parentChatId: c.parentChatId } : {}) };
  }

  chatIds(): string[] {
    return [...this.chats.keys()];
  }

  pending(chatId: string): PendingApproval[] {
    return [...(this.chats.get(chatId)?.pending.values() ?? [])];
  }

  answer(chatId: string, toolCallId: string, approve: boolean): AnswerOutcome {
    const c = this.chats.get(chatId);
    if (!c || !c.seen.has(toolCallId)) return 'unknown';
    if (!c.pending.delete(toolCallId)) return 'alreadyAnswered';
    if (approve) this.sink.approve(chatId, toolCallId);
    else this.sink.reject(chatId, toolCallId);
    return 'answered';
  }
}

/** What an event says of its chat: status, title, and which approvals are open. */
function track(c: ChatLog, chatId: string, e: ChatEvent): void {
  if (e.type === 'status') c.status = e.status;
  else if (e.type === 'turnEnded') c.status = 'idle';
  else if (e.type === 'title' && e.title !== undefined) c.title = e.title;
  else if (e.type === 'toolCall' && !e.replayed) {
    c.seen.add(e.id);
    if (e.state === 'announced' && e.needsApproval) c.pending.set(e.id, { ...e, chatId, kind: 'approval' });
    else if (e.state !== 'preparing' && e.state !== 'announced') c.pending.delete(e.id);
  }
  // A turn that ended settled every approval it had open.
  if (e.type === 'turnEnded') c.pending.clear();
}

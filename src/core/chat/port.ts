/**
 * The chat-event half of the front-end port (the runtime's `FrontEndPort`, runtime/front-end-port.ts,
 * adds the workspace notices): every front end (the ECA and ACP façades, a remote viewer) attaches
 * here at run time instead of being the one sink fixed when the workspace is made.
 *
 * - Every chat event gets the chat's next sequence number (1, 2, 3, … per chat) and is written to
 *   the event log off the hot path: queued, then written in one batch every FLUSH_MS, at turn end,
 *   before any replay and on close. A replay therefore sees every event delivered so far.
 * - `attach(frontEnd, { chatId, afterSeq })` replays that chat's logged events after `afterSeq`
 *   and then follows it live. Delivery is synchronous, so nothing can slip between the replay and
 *   the first live event: no gap, no duplicate; after a restart the numbers go on from the log.
 * - `pending(chatId)` lists the open approvals (seen in the tool-call events) and questions
 *   (`ask`); `answer` from any front end settles one once: the first wins and every other
 *   attached front end gets an `answered` notice, so it can withdraw what it shows.
 */
import { randomUUID } from 'node:crypto';
import type { AskAnswer, AskQuestion, AskUser } from '../../shapes/ask.js';
import type { ChatEvent, ChatEvents, ToolCallEvent } from '../events.js';
import { errorMessage, logger } from '../../util/log.js';

const log = logger('port');

/** How long events wait to be written together (a SIGKILL loses at most this much of the log). */
export const FLUSH_MS = 50;
/** Turns kept per chat in the log: older turns are dropped when a turn ends. */
export const KEEP_TURNS = 20;

/** What a front end can do for the runtime. */
export interface FrontEndCapabilities {
  /** It shows images (a tool's or the user's). */
  images: boolean;
  /** It can approve tool calls and answer `ask_user` questions. */
  ask: boolean;
  /** It can show a form for an MCP server's elicitation. */
  elicitation: boolean;
  /** It reads and writes files through the editor's buffers. */
  files: boolean;
  /** It runs shell commands in a terminal it shows. */
  terminal: boolean;
}

export const NO_CAPABILITIES: FrontEndCapabilities = { images: false, ask: false, elicitation: false, files: false, terminal: false };

/** What a front end sees change in a chat's view besides core's chat events (ChatEvents `opened`/`cleared`/`deleted`). */
export type ViewEvent =
  /** The chat was opened (its stored history follows as events). */
  | { type: 'chatOpened'; title?: string }
  /** The view starts over: the chat was cleared, or is redrawn (its history follows). */
  | { type: 'chatCleared' }
  /** The chat is gone; its log too. */
  | { type: 'chatDeleted' };

export type PortEvent = ChatEvent | ViewEvent;

/** One event as front ends receive it. */
export interface SeqEvent {
  chatId: string;
  /** The chat's sequence number of this event: 1, 2, 3, … */
  seq: number;
  event: PortEvent;
  /** The chat is a subagent's, run for a tool call of this chat. */
  parentChatId?: string;
  /** Read back from the log at attach, not happening now. */
  replay?: true;
  /** Whose chat it is: the `source` given to `chatEvents` (the runtime's Workspace). Not logged. */
  source?: unknown;
}

/** What the port itself tells front ends. */
export type PortNotice =
  /** Something to tell the user outside any chat (ChatEvents `showMessage`). */
  | { type: 'message'; level: 'error' | 'warning' | 'info'; text: string; source?: unknown }
  /** Another front end answered this approval or question first: withdraw what you show of it. */
  | { type: 'answered'; kind: 'approval' | 'question'; chatId: string; id: string; by: string };

/** A front end as the port sees it. `N`: the notices of the layer above (the workspace's). */
export interface PortFrontEnd<N = never> {
  /** For logs and `answered.by`. */
  name: string;
  capabilities: FrontEndCapabilities;
  /** A chat event, in seq order per chat. Must not throw (a throw is logged and the others still get it). */
  chatEvent(e: SeqEvent): void;
  notice?(n: N | PortNotice): void;
  /** Puts a question to its user (capability `ask`); the port asks every front end that has one. */
  ask?: AskUser;
  /** Runs `fn`, sending what it delivers in one write (ChatEvents `together`). */
  together?(fn: () => void): void;
}

/** Where a front end starts: without `chatId`, every chat's events from now on, with none replayed. */
export interface AttachOptions {
  chatId?: string;
  /** Replay the logged events with a greater number (0: the whole log). Default: none, live only. */
  afterSeq?: number;
}

/** What a replay sent. */
export interface ReplayInfo {
  /** How many logged events were sent. */
  replayed: number;
  /** The chat's last number now (what a later `afterSeq` would name). */
  lastSeq: number;
  /** Events after `afterSeq` were pruned from the log (old turns): the replay starts later than asked. */
  gap: boolean;
}

export interface Attachment {
  readonly id: string;
  readonly frontEnd: PortFrontEnd<unknown>;
  /** What the attach replayed (zeros when it followed every chat). */
  readonly replay: ReplayInfo;
  /** Also follow `chatId` (its subagents' chats too), replaying after `afterSeq` first. */
  follow(chatId: string, afterSeq?: number): ReplayInfo;
  detach(): void;
}

/** A tool call waiting for approval, or a question waiting for an answer. */
export type PendingItem =
  | {
      kind: 'approval';
      /** The tool call's id. */
      id: string;
      chatId: string;
      parentChatId?: string;
      call: Pick<ToolCallEvent, 'name' | 'server' | 'origin' | 'arguments' | 'summary' | 'details'>;
      /** The seq of its `announced` event. */
      seq: number;
    }
  | { kind: 'question'; id: string; chatId: string; question: AskQuestion };

export type PendingAnswer = { kind: 'approval'; approved: boolean; forSession?: boolean } | { kind: 'question'; answer: AskAnswer };

/** Who answers an approval in core (ChatService `approve`/`reject`): false when no call with that id waits. */
export interface ApprovalResponder {
  approve(chatId: string, toolCallId: string, forSession: boolean): boolean;
  reject(chatId: string, toolCallId: string, forSession: boolean): boolean;
}

/** One logged event (the store's `chat_events` row). */
export interface LoggedEvent {
  chatId: string;
  seq: number;
  event: PortEvent;
  parentChatId?: string;
}

/** The event log (store/chat-events.ts; MemoryEventLog below when the port has no store). */
export interface ChatEventLog {
  /** Writes a batch in one transaction, with the retention rules: see store/chat-events.ts. */
  write(batch: readonly LoggedEvent[]): void;
  /** The chat's events with a number greater than `afterSeq`, in order. */
  after(chatId: string, afterSeq: number): LoggedEvent[];
  /** The greatest number logged for the chat (0: none). */
  lastSeq(chatId: string): number;
  /** The smallest number still logged (0: none). */
  firstSeq(chatId: string): number;
}

interface Attached {
  id: string;
  fe: PortFrontEnd<unknown>;
  /** undefined: every chat. */
  chats: Set<string> | undefined;
}

interface OpenQuestion {
  chatId: string;
  question: AskQuestion;
  settle: (a: AskAnswer, by: string | undefined) => boolean;
}

export interface ChatPortOptions {
  log?: ChatEventLog;
}

export class ChatPort<N = never> {
  private readonly attached = new Map<string, Attached>();
  /** The front ends in attach order (a copy per change: delivery iterates it while one may detach). */
  private list: Attached[] = [];
  private readonly lastSeq = new Map<string, number>();
  private queue: LoggedEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private store: ChatEventLog;
  private readonly approvals = new Map<string, { item: Extract<PendingItem, { kind: 'approval' }>; responder: ApprovalResponder | undefined }>();
  private readonly questions = new Map<string, OpenQuestion>();
  /** A subagent's chat → its parent's, from the events (for following a chat with its subagents). */
  private readonly parents = new Map<string, string>();

  /** Whether a log was given (else the port logs in memory until `useLog`). */
  private given: boolean;

  constructor(opts: ChatPortOptions = {}) {
    this.store = opts.log ?? new MemoryEventLog();
    this.given = opts.log !== undefined;
  }

  /** Logs to `log` from now on (the workspace's store when the port was made before it). Queued events go to the old log first. */
  useLog(log: ChatEventLog): void {
    this.flush();
    this.store = log;
    this.given = true;
    this.lastSeq.clear();
  }

  /** Whether the port logs to a log it was given (a store), not in memory. */
  get logged(): boolean {
    return this.given;
  }

  get eventLog(): ChatEventLog {
    return this.store;
  }

  // ── front ends ──────────────────────────────────────────────────────────────

  attach(frontEnd: PortFrontEnd<N>, opts: AttachOptions = {}): Attachment {
    const a: Attached = { id: randomUUID(), fe: frontEnd as PortFrontEnd<unknown>, chats: opts.chatId !== undefined ? new Set() : undefined };
    this.attached.set(a.id, a);
    this.list = [...this.attached.values()];
    const none: ReplayInfo = { replayed: 0, lastSeq: 0, gap: false };
    const replay = opts.chatId !== undefined ? this.follow(a, opts.chatId, opts.afterSeq) : none;
    return {
      id: a.id,
      frontEnd: a.fe,
      replay,
      follow: (chatId, afterSeq) => this.follow(a, chatId, afterSeq),
      detach: () => this.detach(a.id),
    };
  }

  private detach(id: string): void {
    if (!this.attached.delete(id)) return;
    this.list = [...this.attached.values()];
  }

  /** The attached front ends, in attach order. */
  frontEnds(): PortFrontEnd<N>[] {
    return this.list.map((a) => a.fe as PortFrontEnd<N>);
  }

  private follow(a: Attached, chatId: string, afterSeq?: number): ReplayInfo {
    a.chats?.add(chatId);
    if (afterSeq === undefined) return { replayed: 0, lastSeq: this.seqOf(chatId), gap: false };
    // The queue first: a replay reads everything delivered so far from the log.
    this.flush();
    const rows = this.store.after(chatId, afterSeq);
    const first = this.store.firstSeq(chatId);
    for (const r of rows) this.deliverTo(a, { ...seqEventOf(r), replay: true });
    return { replayed: rows.length, lastSeq: this.seqOf(chatId), gap: first > afterSeq + 1 };
  }

  // ── events ──────────────────────────────────────────────────────────────────

  /**
   * The sink core's events go to (ChatDeps.events), for one workspace: `responder` answers the
   * approvals its chats wait on.
   */
  chatEvents(responder?: ApprovalResponder, source?: unknown): ChatEvents {
    return {
      event: (chatId, e, parentChatId) => this.emit(chatId, e, parentChatId, responder, source),
      opened: (chatId, title) => this.emit(chatId, { type: 'chatOpened', ...(title !== undefined ? { title } : {}) }, undefined, undefined, source),
      cleared: (chatId) => this.emit(chatId, { type: 'chatCleared' }, undefined, undefined, source),
      deleted: (chatId) => this.emit(chatId, { type: 'chatDeleted' }, undefined, undefined, source),
      showMessage: (level, text) => this.notify({ type: 'message', level, text, ...(source !== undefined ? { source } : {}) }),
      together: (fn) => this.together(fn),
    };
  }

  /** Numbers, logs and delivers one event of a chat. */
  emit(chatId: string, event: PortEvent, parentChatId?: string, responder?: ApprovalResponder, source?: unknown): void {
    const seq = this.seqOf(chatId) + 1;
    this.lastSeq.set(chatId, seq);
    // One object is queued for the log and delivered (the log does not write `source`).
    const out: SeqEvent = parentChatId !== undefined ? { chatId, seq, event, parentChatId, source } : { chatId, seq, event, source };
    this.queue.push(out);
    if (parentChatId !== undefined && !this.parents.has(chatId)) this.parents.set(chatId, parentChatId);
    if (event.type === 'toolCall') this.track(chatId, seq, event, parentChatId, responder);
    else if (event.type === 'chatCleared' || event.type === 'chatDeleted') this.forgetChat(chatId, event.type === 'chatDeleted');
    const list = this.list;
    for (let i = 0; i < list.length; i++) this.deliverTo(list[i]!, out);
    // At turn end (and on a delete) the log is written now; else with the others of the next FLUSH_MS.
    if (event.type === 'turnEnded' || event.type === 'chatDeleted') this.flush();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref?.();
    }
  }

  private deliverTo(a: Attached, e: SeqEvent): void {
    if (a.chats !== undefined && !this.follows(a.chats, e.chatId, e.parentChatId)) return;
    try {
      a.fe.chatEvent(e);
    } catch (err) {
      log.warn(`front end ${a.fe.name}: ${errorMessage(err)}`);
    }
  }

  /** Whether a front end following `chats` gets this chat's events: its own, or a subagent's of one of them. */
  private follows(chats: Set<string>, chatId: string, parentChatId: string | undefined): boolean {
    let id: string | undefined = chatId;
    let parent = parentChatId;
    for (let depth = 0; id !== undefined && depth < 16; depth++) {
      if (chats.has(id)) return true;
      id = parent ?? this.parents.get(id);
      parent = undefined;
    }
    return false;
  }

  /** A notice to every attached front end (but `except`). */
  notify(n: N | PortNotice, except?: string): void {
    for (const a of this.list) {
      if (a.id === except || !a.fe.notice) continue;
      try {
        a.fe.notice(n);
      } catch (err) {
        log.warn(`front end ${a.fe.name}: ${errorMessage(err)}`);
      }
    }
  }

  /** Runs `fn` inside every front end's `together` (one write per front end for a burst). */
  together(fn: () => void): void {
    let run = fn;
    for (const a of this.list) {
      const t = a.fe.together;
      if (!t) continue;
      const inner = run;
      run = () => t.call(a.fe, inner);
    }
    run();
  }

  /** The chat's last number: from memory, else from the log (so a restart goes on from it). */
  private seqOf(chatId: string): number {
    let n = this.lastSeq.get(chatId);
    if (n === undefined) {
      n = safe(() => this.store.lastSeq(chatId), 0);
      this.lastSeq.set(chatId, n);
    }
    return n;
  }

  /** Writes the queued events now (also before a replay and on close). */
  flush(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (!this.queue.length) return;
    const batch = this.queue;
    this.queue = [];
    try {
      this.store.write(batch);
    } catch (err) {
      // A full disk, a busy or closed store must not take a turn or the server down: these events are not logged.
      log.error(`could not log chat events: ${errorMessage(err)}`);
    }
  }

  /** Writes what is queued and stops the timer; the port stays usable. */
  close(): void {
    this.flush();
  }

  // ── approvals and questions ────────────────────────────────────────────────

  private track(chatId: string, seq: number, e: ToolCallEvent, parentChatId: string | undefined, responder: ApprovalResponder | undefined): void {
    const key = `${chatId}\u0000${e.id}`;
    if (e.state === 'announced') {
      if (!e.needsApproval || e.replayed) return;
      const call = {
        name: e.name,
        server: e.server,
        origin: e.origin,
        ...(e.arguments ? { arguments: e.arguments } : {}),
        ...(e.summary !== undefined ? { summary: e.summary } : {}),
        ...(e.details ? { details: e.details } : {}),
      };
      this.approvals.set(key, { item: { kind: 'approval', id: e.id, chatId, ...(parentChatId !== undefined ? { parentChatId } : {}), call, seq }, responder });
    } else if (e.state !== 'preparing' && this.approvals.size) this.approvals.delete(key);
  }

  private forgetChat(chatId: string, deleted: boolean): void {
    for (const [key, p] of this.approvals) if (p.item.chatId === chatId) this.approvals.delete(key);
    if (deleted) {
      this.lastSeq.delete(chatId);
      this.parents.delete(chatId);
    }
  }

  /** The open approvals and questions of a chat (every chat's when none is named), oldest first. */
  pending(chatId?: string): PendingItem[] {
    const approvals = [...this.approvals.values()].map((p) => p.item).filter((p) => chatId === undefined || p.chatId === chatId);
    const questions = [...this.questions].flatMap(([id, q]): PendingItem[] => (chatId === undefined || q.chatId === chatId ? [{ kind: 'question', id, chatId: q.chatId, question: q.question }] : []));
    return [...approvals, ...questions];
  }

  /**
   * Answers an open approval or question. True when this answer won; false when it was answered
   * already (or never asked). Every other attached front end is told (`answered`).
   */
  answer(chatId: string, id: string, a: PendingAnswer, from?: Attachment | string): boolean {
    const by = typeof from === 'string' ? from : from?.frontEnd.name;
    const fromId = typeof from === 'string' ? undefined : from?.id;
    if (a.kind === 'question') {
      const q = this.questions.get(id);
      if (!q || q.chatId !== chatId) return false;
      return q.settle(a.answer, fromId ?? by);
    }
    const key = `${chatId}\u0000${id}`;
    const p = this.approvals.get(key);
    if (!p?.responder) return false;
    this.approvals.delete(key);
    const forSession = a.forSession ?? false;
    const took = a.approved ? p.responder.approve(chatId, id, forSession) : p.responder.reject(chatId, id, forSession);
    if (took) this.notify({ type: 'answered', kind: 'approval', chatId, id, by: by ?? 'unknown' }, fromId);
    return took;
  }

  /**
   * `ask_user` through the port (an `AskUser`): the question is pending until the first answer,
   * from any front end that can ask (each is asked) or from `answer`. The others' asks are
   * withdrawn (their signal aborts) and they are told. Rejects when the turn stops, or when every
   * front end that asked failed and none is left to answer.
   */
  ask(chatId: string, question: AskQuestion, signal: AbortSignal): Promise<AskAnswer> {
    if (signal.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('the turn stopped'));
    const id = question.toolCallId ?? randomUUID();
    return new Promise<AskAnswer>((resolve, reject) => {
      const asks = new Map<string, AbortController>();
      let failure: unknown;
      const finish = () => {
        this.questions.delete(id);
        signal.removeEventListener('abort', onAbort);
      };
      const settle = (answer: AskAnswer, by: string | undefined): boolean => {
        if (this.questions.get(id) !== open) return false;
        finish();
        const byName = (by !== undefined && this.attached.get(by)?.fe.name) || by || 'unknown';
        for (const [aid, c] of asks) if (aid !== by) c.abort();
        this.notify({ type: 'answered', kind: 'question', chatId, id, by: byName }, by);
        resolve(answer);
        return true;
      };
      const onAbort = () => {
        if (this.questions.get(id) !== open) return;
        finish();
        for (const c of asks.values()) c.abort();
        reject(signal.reason instanceof Error ? signal.reason : new Error('the turn stopped'));
      };
      const open: OpenQuestion = { chatId, question, settle };
      this.questions.set(id, open);
      signal.addEventListener('abort', onAbort, { once: true });
      for (const a of this.list) {
        const ask = a.fe.ask;
        if (!ask || !a.fe.capabilities.ask) continue;
        const c = new AbortController();
        asks.set(a.id, c);
        ask(chatId, question, AbortSignal.any([signal, c.signal])).then(
          (answer) => void settle(answer, a.id),
          (e: unknown) => {
            asks.delete(a.id);
            if (c.signal.aborted || signal.aborted) return;
            failure ??= e;
            // Nobody else asked: the question fails as it did with one front end.
            if (asks.size === 0 && this.questions.get(id) === open) {
              finish();
              reject(failure);
            }
          },
        );
      }
    });
  }

  /** `ask` as an AskUser, bound to this port. */
  readonly askUser: AskUser = (chatId, question, signal) => this.ask(chatId, question, signal);
}

function seqEventOf(r: LoggedEvent): SeqEvent {
  return r.parentChatId !== undefined ? { chatId: r.chatId, seq: r.seq, event: r.event, parentChatId: r.parentChatId } : { chatId: r.chatId, seq: r.seq, event: r.event };
}

function safe<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (e) {
    log.warn(`chat event log: ${errorMessage(e)}`);
    return fallback;
  }
}

/**
 * The log of a port without a store: the same retention rules as store/chat-events.ts, in memory.
 * Events are kept as given (a store would round-trip them through JSON).
 */
export class MemoryEventLog implements ChatEventLog {
  private readonly chats = new Map<string, LoggedEvent[]>();

  write(batch: readonly LoggedEvent[]): void {
    for (const r of batch) {
      if (r.event.type === 'chatDeleted') {
        this.deleteTree(r.chatId);
        continue;
      }
      let rows = this.chats.get(r.chatId);
      if (!rows) this.chats.set(r.chatId, (rows = []));
      // A view reset replaces what came before it; the reset itself stays (it carries the last number).
      if (r.event.type === 'chatCleared') rows.length = 0;
      rows.push(r);
      if (r.event.type === 'turnEnded') {
        const ends = rows.flatMap((x, i) => (x.event.type === 'turnEnded' ? [i] : []));
        if (ends.length > KEEP_TURNS) rows.splice(0, ends[ends.length - KEEP_TURNS - 1]! + 1);
      }
    }
  }

  private deleteTree(chatId: string): void {
    this.chats.delete(chatId);
    for (const [id, rows] of [...this.chats]) if (rows.some((r) => r.parentChatId === chatId)) this.deleteTree(id);
  }

  after(chatId: string, afterSeq: number): LoggedEvent[] {
    return (this.chats.get(chatId) ?? []).filter((r) => r.seq > afterSeq);
  }

  lastSeq(chatId: string): number {
    return this.chats.get(chatId)?.at(-1)?.seq ?? 0;
  }

  firstSeq(chatId: string): number {
    return this.chats.get(chatId)?.[0]?.seq ?? 0;
  }
}

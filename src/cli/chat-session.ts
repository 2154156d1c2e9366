/**
 * One chat of `patchbay chat`: sends prompts under a client-minted chat id, shows the turn's
 * contents, answers tool-call approvals, and knows when the turn is over (the system
 * `progress: finished` that follows the prompt; its `stopReason`, a patchbay extension, says how).
 *
 * The server also speaks in the chat when we did not prompt: a gateway provider's `surface`
 * push is a system text while idle, and its `inject` starts a whole turn of its own. Those are
 * shown through `IdleHooks` (above the REPL's input line) and the turn is run like ours, with
 * approvals, so it never waits on a question no one sees.
 */
import { randomUUID } from 'node:crypto';
import type { Agent } from '../shapes/agent.js';
import type { ChatContext } from '../protocol/eca/context.js';
import { chatPromptResultSchema } from '../protocol/eca/chat.js';
import { contentReceivedSchema, type ContentReceived } from '../protocol/eca/content.js';
import { ECA } from '../protocol/eca/methods.js';
import type { ServerProcess } from './chat-client.js';
import type { ChatContent, Role } from '../protocol/eca/content.js';
import type { ToolCallRun, Usage } from './chat-render.js';

/** Exit code: a tool call needed approval and no one could be asked. */
export const EXIT_UNASKED = 3;

export function unaskedMessage(tool: string): string {
  return (
    `Rejected ${tool}: it needs approval and no one could be asked (stdin is not a terminal). ` +
    `Pass --yes to approve every tool call, or allow it in the config: {"toolCall": {"approval": {"allow": {"${tool}": {}}}}}.`
  );
}

/** 'unasked': rejected because no one could be asked (stdin is not a terminal, no --yes). */
export type ApprovalAnswer = 'yes' | 'no' | 'always' | 'unasked';
/** Decides a tool call that needs approval (the block with its arguments is already shown). */
export type Approver = (call: ToolCallRun, signal: AbortSignal) => Promise<ApprovalAnswer>;

/** Where a turn's contents are shown: the terminal (chat-render.ts) or JSON lines (chat-json.ts). */
export interface TurnView {
  /** Shows one content of our chat; returns the failure text when it reports a failed turn. */
  content(role: Role, c: ChatContent, stopping?: boolean): string | undefined;
  /** A content of a subagent's chat (`chatId`), run for a `spawn_agent` call of ours. */
  subagentContent(chatId: string, role: Role, c: ChatContent): void;
  /** The turn ended with this `stopReason` (absent from an older server). */
  stopNote(stopReason: string | undefined): void;
  /** The call is about to be rejected because no one could be asked. */
  unasked(id: string): void;
  /** A new turn starts. */
  reset(): void;
}

export type TurnOutcome =
  /** The turn ran; `errors` holds failure texts it produced. */
  | { kind: 'done'; errors: string[]; stopped: boolean; usage?: Usage; unasked: string[] }
  /** No model: the server answered `status: 'login'` (its `$/showMessage` says what to do). */
  | { kind: 'login' }
  /** The prompt request itself failed, or the server went away. */
  | { kind: 'failed'; message: string };

interface Turn {
  errors: string[];
  /** Tools rejected because no one could be asked. */
  unasked: string[];
  stopped: boolean;
  usage?: Usage;
  finished: () => void;
  abort: AbortController;
}

export interface ChatSessionOptions {
  agent?: Agent;
  verbose?: boolean;
  log?: (line: string) => void;
  /** Every usage content of this chat's turns, as it arrives (the exit summary adds them up). */
  onUsage?: (usage: Usage, chatId: string) => void;
}

/** What the chat shows while no prompt of ours runs (see the header). */
export interface IdleHooks {
  /** Runs `show` (which writes to the terminal) so it lands above the input line. */
  above(show: () => void): void;
  /** The server started a turn by itself (a provider's `inject`). */
  turnStarted(): void;
  turnEnded(outcome: TurnOutcome): void;
}

/** One-shot mode: print as it comes; the REPL installs its own. */
export const plainIdle: IdleHooks = { above: (show) => show(), turnStarted: () => {}, turnEnded: () => {} };

export class ChatSession {
  chatId: string = randomUUID();
  /** Whether `chatId` names a chat the server has (a prompt was accepted, or it was resumed or forked). */
  stored = false;
  /** The last stored chat before `/new`: what the exit summary names when the new one was never prompted. */
  private previous: string | undefined;
  /** The model id sent with each prompt (undefined: the server's default). */
  model: string | undefined;
  /** The agent sent with each prompt (undefined: the server's default); `/agent` changes it. */
  agent: Agent | undefined;
  /** How contents outside our prompts are shown. */
  idle: IdleHooks = plainIdle;
  private turn: Turn | undefined;
  /** Contents of a prompt answered `login` still to come (up to its `finished`): not shown again. */
  private muted = false;
  /** Settles when the turn the server started by itself is over. */
  private serverTurn: Promise<void> | undefined;
  private approvals: Promise<void> = Promise.resolve();
  /** While set, contents are gathered here instead of shown (a replay: `chat/open`, `chat/rollback`). */
  private gathered: ContentReceived[] | undefined;

  constructor(
    private readonly server: ServerProcess,
    private readonly renderer: TurnView,
    private readonly approver: Approver,
    private readonly opts: ChatSessionOptions = {},
  ) {
    this.agent = opts.agent;
    server.conn.onNotification(ECA.chatContentReceived.method, (raw: unknown) => this.onContent(raw));
  }

  get busy(): boolean {
    return !!this.turn;
  }

  /** Forget the chat: the next prompt starts a new one. */
  reset(): void {
    if (this.stored) this.previous = this.chatId;
    this.chatId = randomUUID();
    this.stored = false;
    this.muted = false;
  }

  /** The chat to name in "resume: …": this one once stored, else the last stored one. */
  get resumable(): string | undefined {
    return this.stored ? this.chatId : this.previous;
  }

  /** Go on in a stored chat (resumed or forked): the next prompt continues it. */
  adopt(chatId: string): void {
    this.chatId = chatId;
    this.stored = true;
    this.muted = false;
  }

  /**
   * Runs `request` (one whose replay the server sends before answering) with the contents that
   * arrive meanwhile gathered, not shown; resolves with its answer and those contents.
   */
  async gather<T>(request: () => Promise<T>): Promise<{ result: T; contents: ContentReceived[] }> {
    const contents: ContentReceived[] = [];
    this.gathered = contents;
    try {
      return { result: await request(), contents };
    } finally {
      this.gathered = undefined;
    }
  }

  private onContent(raw: unknown): void {
    const parsed = contentReceivedSchema.safeParse(raw);
    if (!parsed.success) {
      if (this.opts.verbose) this.opts.log?.(`ignored malformed chat/contentReceived: ${parsed.error.issues[0]?.message ?? ''}`);
      return;
    }
    if (this.gathered) return void this.gathered.push(parsed.data);
    const { chatId, role, content, parentChatId } = parsed.data;
    if (chatId !== this.chatId) {
      if (parentChatId !== this.chatId || !this.turn) return;
      // A subagent of this chat: shown under its spawn_agent call.
      this.renderer.subagentContent(chatId, role, content);
      // It asks in its own chat (ECA agent.clj): answered there, or the turn would wait forever.
      if (content.type === 'toolCallRun' && content.manualApproval) this.ask(this.turn, content, chatId);
      return;
    }
    if (this.muted) {
      this.muted = !(content.type === 'progress' && content.state === 'finished');
      return;
    }
    let turn = this.turn;
    if (!turn) {
      // A surfaced event: shown as it arrives. Anything else opening a turn: an inject's turn.
      const opens = (role === 'user' && content.type === 'text') || (content.type === 'progress' && content.state === 'running');
      if (role === 'system' && content.type === 'text') return this.idle.above(() => this.renderer.content(role, content));
      if (!opens) return;
      turn = this.startServerTurn();
    }
    const failure = this.renderer.content(role, content, turn.stopped);
    if (failure) turn.errors.push(failure);
    if (content.type === 'usage') {
      turn.usage = content;
      this.opts.onUsage?.(content, chatId);
    }
    if (content.type === 'toolCallRun' && content.manualApproval) this.ask(turn, content);
    if (content.type === 'progress' && content.state === 'finished' && role === 'system') {
      // Absent (an older server): the turn simply ended.
      if (content.stopReason === 'cancelled') turn.stopped = true;
      // A failed turn whose reason no marked text gave (e.g. an older server): it failed all the same.
      if (content.stopReason === 'error' && !turn.errors.length) turn.errors.push('the turn failed');
      this.renderer.stopNote(content.stopReason);
      turn.finished();
    }
  }

  /** Approvals are asked one at a time, in the order the server sends them. */
  private ask(turn: Turn, call: ToolCallRun, chatId = this.chatId): void {
    this.approvals = this.approvals.then(async () => {
      if (turn.abort.signal.aborted || this.turn !== turn) return;
      let answer: ApprovalAnswer;
      try {
        answer = await this.approver(call, turn.abort.signal);
      } catch {
        answer = 'no';
      }
      if (turn.abort.signal.aborted) return; // promptStop settles it server-side
      if (answer === 'unasked') {
        turn.unasked.push(call.name);
        this.renderer.unasked(call.id);
      }
      if (answer === 'no' || answer === 'unasked') this.server.notify(ECA.chatToolCallReject, { chatId, toolCallId: call.id });
      else this.server.notify(ECA.chatToolCallApprove, { chatId, toolCallId: call.id, ...(answer === 'always' ? { save: 'session' } : {}) });
    });
  }

  /** Sends a prompt and resolves when its turn is over. */
  async send(message: string, contexts: ChatContext[]): Promise<TurnOutcome> {
    // A turn an inject started goes first; ours follows it, as the server would queue it.
    while (this.serverTurn) await this.serverTurn;
    if (this.turn) return { kind: 'failed', message: 'a prompt is already running' };
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    const turn: Turn = { errors: [], unasked: [], stopped: false, finished, abort: new AbortController() };
    this.turn = turn;
    this.renderer.reset();
    try {
      let raw: unknown;
      try {
        raw = await this.server.request(ECA.chatPrompt, {
          chatId: this.chatId,
          message,
          ...(this.model ? { model: this.model } : {}),
          ...(this.agent ? { agent: this.agent } : {}),
          // The variant shown (config/updated's, or /variant's), as the ECA plugins send it.
          ...(this.server.config.selectVariant ? { variant: this.server.config.selectVariant } : {}),
          ...(contexts.length ? { contexts } : {}),
        });
      } catch (e) {
        return { kind: 'failed', message: e instanceof Error ? e.message : String(e) };
      }
      const res = chatPromptResultSchema.safeParse(raw);
      if (!res.success) return { kind: 'failed', message: `unexpected chat/prompt result: ${JSON.stringify(raw)}` };
      if (res.data.status === 'login') {
        // The server also says it in the chat, after this answer; $/showMessage already showed it.
        this.muted = true;
        return { kind: 'login' };
      }
      if (res.data.status === 'error') return { kind: 'failed', message: 'the server could not start the prompt' };
      this.chatId = res.data.chatId;
      this.stored = true;
      const gone = await Promise.race([done.then(() => false), this.server.exited.then(() => true)]);
      if (gone) return { kind: 'failed', message: 'patchbay server exited during the turn' };
      return { kind: 'done', errors: turn.errors, stopped: turn.stopped, usage: turn.usage, unasked: turn.unasked };
    } finally {
      turn.abort.abort();
      this.turn = undefined;
      this.renderer.content('system', { type: 'progress', state: 'finished', text: '' });
    }
  }

  /** A turn the server started in our chat (a provider's inject): shown and approved like ours. */
  private startServerTurn(): Turn {
    let finished!: () => void;
    const done = new Promise<void>((r) => (finished = r));
    const turn: Turn = { errors: [], unasked: [], stopped: false, finished, abort: new AbortController() };
    this.turn = turn;
    this.renderer.reset();
    const idle = this.idle;
    idle.turnStarted();
    this.serverTurn = Promise.race([done.then(() => false), this.server.exited.then(() => true)]).then((gone) => {
      turn.abort.abort();
      this.turn = undefined;
      this.serverTurn = undefined;
      this.renderer.content('system', { type: 'progress', state: 'finished', text: '' });
      idle.turnEnded(
        gone ? { kind: 'failed', message: 'patchbay server exited during the turn' } : { kind: 'done', errors: turn.errors, stopped: turn.stopped, usage: turn.usage, unasked: turn.unasked },
      );
    });
    return turn;
  }

  /** Ctrl-C during a turn: `chat/promptStop`; pending approval questions are dropped. */
  stop(): boolean {
    const turn = this.turn;
    if (!turn) return false;
    turn.stopped = true;
    turn.abort.abort();
    this.server.notify(ECA.chatPromptStop, { chatId: this.chatId });
    return true;
  }
}

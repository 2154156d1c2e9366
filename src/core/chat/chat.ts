/** A chat held in memory while the server runs; its messages are mirrored in the store. */
import type { Context as ChatContext } from '../../shapes/context.js';
import { Approvals } from '../tool-calls/approvals.js';
import type { ChatStatus } from '../events.js';
import type { StoredMessage } from './messages.js';
import type { Agent } from '../../shapes/agent.js';
import type { SubagentDef } from '../subagents/definitions.js';
import type { ChatKind } from '../persistence.js';

/** What makes a chat a subagent's: its definition, and whom to tell of each model step. */
export interface SubagentRun {
  def: SubagentDef;
  onStep(step: number): void;
  /** Stopped before its turn began (the parent's stop came while it was queued): it never starts. */
  stopped?: boolean;
}

export interface Usage {
  /** Every input token, cache reads and writes included. */
  inputTokens: number;
  outputTokens: number;
  cost: number;
  /** Of the input, read from / written to the provider's prompt cache (set once there were any). */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export class LiveChat {
  title: string | undefined;
  model: string | undefined;
  agent: Agent;
  /** The model variant its turns use (as ECA: the one the last prompt named, or the editor selected). */
  variant: string | undefined;
  /** Trust mode: calls that would ask run without asking; deny, outside-workspace and protected paths still apply. */
  trust: boolean;
  status: ChatStatus = 'idle';
  usage: Usage;
  /** The running turn, if any. */
  turn: { abort: AbortController } | undefined;
  /** Moves on when the chat is deleted or cleared; a turn from an older generation stops writing. */
  generation = 0;
  /** Prompts wait their turn: one turn per chat at a time. */
  queue: Promise<void> = Promise.resolve();
  /** Prompts accepted but whose turn has not started yet. */
  queued = 0;
  /** Tool calls of the running turn waiting for the user's answer. */
  readonly approvals = new Approvals();
  /**
   * Tools (LLM names) the user allowed, or rejected (ACP `reject_always`), for the rest of the
   * session: asked no more. A subagent's chat shares its parent's, so an answer given in one
   * subagent's call holds for the user's whole conversation.
   */
  readonly sessionApproved: Set<string>;
  readonly sessionRejected: Set<string>;
  /** Contexts whose content can change (MCP resources) that this chat referenced. */
  readonly referenced: ChatContext[] = [];
  /**
   * What the user typed while the turn ran (`chat/promptSteer`), not yet read by the model: one
   * message, later ones joined to it by a newline as ECA does. The next model step takes it; the
   * user can take it back until then; the turn's end drops it (the client sends it again as a prompt).
   */
  steer: string | undefined;
  /** Gateway `inject` events for the LLM, for the running turn's next model step (or the next turn). */
  readonly injected: string[] = [];
  /**
   * Ends of this chat's background jobs the model has not read (ECA's `pending-job-notifications`):
   * taken at the next model step only, so they never start a turn, and a stop does not drop them.
   */
  readonly jobNotices: string[] = [];
  /** The chat whose `spawn_agent` call runs this one (a subagent's chat). */
  parentId: string | undefined;
  /** ECA's chat kind (`inline`: made by `chat/inlinePrompt`, ./inline-chat.ts); unset for a regular chat. */
  readonly kind: ChatKind | undefined;
  /** Set while this chat runs as a subagent (not for a stored child chat loaded again). */
  subagent: SubagentRun | undefined;
  /** The runtime's problems (bad rule, skill, hook… files) this chat was already told of. */
  readonly shownProblems = new Set<string>();
  /** The chat's own folders, working folder first (./chat-roots.ts); unset: it uses the workspace's. */
  roots: string[] | undefined;

  /**
   * A turn runs or is about to: what rewrites the history (fork, rollback, a flag's insertion)
   * waits for idle, as a queued prompt would otherwise run on a history cut under it.
   */
  busy(): boolean {
    return this.turn !== undefined || this.queued > 0 || this.status !== 'idle';
  }

  constructor(
    readonly id: string,
    readonly stored: StoredMessage[],
    init: { title?: string; model?: string; agent: Agent; usage?: Usage; trust?: boolean; variant?: string; parentId?: string; sessionOf?: LiveChat; kind?: ChatKind; roots?: string[] },
  ) {
    this.parentId = init.parentId;
    this.kind = init.kind;
    this.roots = init.roots;
    this.sessionApproved = init.sessionOf?.sessionApproved ?? new Set();
    this.sessionRejected = init.sessionOf?.sessionRejected ?? new Set();
    this.title = init.title;
    this.model = init.model;
    this.agent = init.agent;
    this.variant = init.variant;
    this.trust = init.trust ?? false;
    this.usage = init.usage ?? { inputTokens: 0, outputTokens: 0, cost: 0 };
  }
}

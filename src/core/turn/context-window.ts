/**
 * One turn's care for the context window (ECA docs/config/context-management.md): auto-compaction
 * when a step reaches `autoCompactPercentage` of the model's window, and recovery when the
 * provider still says the request is too long: prune old tool results and retry, then compact and
 * retry once, then give up with a clear error. Every stage is used at most once a turn, so a
 * provider that keeps overflowing cannot make the turn loop.
 */
import type { LlmMessage, LlmToolSpec, ModelEntry } from '../../shapes/llm.js';
import { LlmError } from '../../shapes/llm.js';
import type { Config } from '../../config/schema.js';
import type { LiveChat } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';
import type { ChatEvent } from '../events.js';
import { toLlmMessages } from '../chat/messages.js';
import { compactChat, windowState } from './compaction.js';
import type { HookStop } from '../hooks/effects.js';
import type { PromptSection } from './prompt-sections.js';
import { contextBreakdown, estimateTokens, KEEP_STEPS, pruneCut, pruneToolResults, reachedThreshold, textTokens, type ContextBreakdown } from './context-size.js';

/** What ECA tells the user when recovery is out of options (chat.clj, `:context-overflow`). */
export const OVERFLOW_FAILED =
  "Context window exceeded: this request is larger than the model's context window (system prompt, MCP server instructions and messages combined). Try a model with a larger context window, or reduce enabled MCP servers/context.";

export interface SentRequest {
  system: string;
  systemStableLength: number;
  /** The system prompt's sections, for the breakdown's Rules, Skills and AGENTS.md. */
  sections?: readonly PromptSection[];
  tools: LlmToolSpec[];
  messages: LlmMessage[];
}

export interface StepContext {
  autoCompactPercentage?: number;
  context: ContextBreakdown;
}

/** `autoCompactPercentage` of `agent` (ECA lifecycle.clj: the agent's own wins over the global one); null when off. */
export function autoCompactPercentage(config: Config, agent: string): number | null {
  const agents = (config as { agent?: unknown }).agent;
  const own = agents && typeof agents === 'object' ? (agents as Record<string, { autoCompactPercentage?: unknown } | undefined>)[agent]?.autoCompactPercentage : undefined;
  if (typeof own === 'number' && own > 0 && own <= 100) return own;
  return config.autoCompactPercentage ?? null;
}

export class ContextWindow {
  private autoCompacted = false;
  private recovery: 'none' | 'pruned' | 'compacted' = 'none';
  private last?: SentRequest;

  constructor(
    private readonly chat: LiveChat,
    private readonly entry: ModelEntry,
    private readonly deps: ChatDeps,
    private readonly signal: AbortSignal,
    private readonly emit: (e: ChatEvent) => void,
  ) {}

  /** Before each request: compacts when the last step made it due (once a turn). A compact hook's `continue: false` is returned: the turn ends. */
  async beforeRequest(): Promise<HookStop | undefined> {
    const state = windowState(this.chat);
    if (!state.due || this.autoCompacted) return undefined;
    state.due = false;
    this.autoCompacted = true;
    // A stop during the summary leaves the chat as big as it was: the compaction is still owed.
    if (!(await this.compact(false)) && this.signal.aborted) state.due = true;
    return this.hookStop;
  }

  /** A preCompact or postCompact hook stopped the turn (ECA docs/config/hooks.md "Stopping"). */
  hookStop: HookStop | undefined;

  /** The messages of the next request: old tool results pruned once the provider overflowed. */
  messages(images: boolean): LlmMessage[] {
    return prunedAsBefore(this.chat, toLlmMessages(this.chat.stored, { images }));
  }

  /** Remembers what the request carried, for the estimate and the breakdown. */
  sent(req: SentRequest): void {
    this.last = req;
    windowState(this.chat).head = { system: req.system, systemStableLength: req.systemStableLength, tools: req.tools };
  }

  /**
   * After a step: whether the next request must be compacted first, and how the window is
   * filled. `usage` is the provider's count; without one, an estimate of what was sent and said.
   */
  afterStep(usage: { inputTokens: number; outputTokens: number; contextWindow?: number } | undefined, outputChars: number): StepContext {
    // A subagent's chat goes by its agent's name (ECA: `agent.<name>.autoCompactPercentage` of a subagent).
    const pct = autoCompactPercentage(this.deps.config(), this.chat.subagent?.def.name ?? this.chat.agent);
    // The window the request really had (a local model's context, sized per chat), else the model's.
    const limit = usage?.contextWindow ?? this.entry.limit?.context;
    const req = this.last ?? { system: '', systemStableLength: 0, tools: [], messages: [] };
    const used = usage ? usage.inputTokens + usage.outputTokens : textTokens(req.system) + textTokens(JSON.stringify(req.tools)) + estimateTokens(req.messages) + Math.ceil(outputChars / 4);
    if (reachedThreshold(used, limit, pct)) windowState(this.chat).due = true;
    return { ...(pct !== null && limit ? { autoCompactPercentage: pct } : {}), context: contextBreakdown(req, used, limit) };
  }

  /**
   * A request failed. For a context overflow: true when the request should be sent again (old
   * tool results pruned, or the chat compacted); an error text when nothing is left to try.
   * Anything else is not for this class (undefined).
   */
  async recover(err: unknown, images: boolean): Promise<true | string | undefined> {
    if (!(err instanceof LlmError && err.kind === 'contextOverflow')) return undefined;
    const state = windowState(this.chat);
    if (this.recovery === 'none') {
      this.recovery = 'pruned';
      const all = toLlmMessages(this.chat.stored, { images });
      const cut = pruneCut(all);
      // Pruning that frees nothing more than what was just refused would only send it again.
      if (cut > (state.pruneBefore ?? -1) && estimateTokens(pruneToolResults(all, KEEP_STEPS, cut)) < estimateTokens(prunedAsBefore(this.chat, all))) {
        state.pruneBefore = cut;
        this.emit({ type: 'notice', text: 'Context window exceeded. Pruning old tool outputs and retrying...' });
        return true;
      }
    }
    if (this.recovery === 'pruned') {
      this.recovery = 'compacted';
      this.emit({ type: 'notice', text: 'Context window exceeded. Auto-compacting conversation...' });
      if (await this.compact(true)) return true;
    }
    return `${OVERFLOW_FAILED} (${err.message})`;
  }

  private async compact(prune: boolean): Promise<boolean> {
    this.emit({ type: 'progress', text: 'Compacting...' });
    let r;
    try {
      const like = windowState(this.chat).head;
      r = await compactChat(this.chat, this.deps, { trigger: 'auto', signal: this.signal, entry: this.entry, prune, ...(like ? { like } : {}) });
    } catch {
      // Only a stop gets here; the turn sees its signal and ends as cancelled.
      return false;
    }
    this.hookStop = r.stop;
    // A stop's text is the turn's to tell (turn.ts), once.
    if (!r.stop || r.ok) this.emit({ type: 'notice', text: r.ok ? 'Auto-compacted chat' : `Auto-compaction skipped: ${r.reason}` });
    return r.ok && !r.stop;
  }
}

/**
 * `all` with the tool results pruned that the chat prunes since its provider overflowed. A
 * rollback to before the cut took the overflowing part away: the chat is sent whole again.
 */
function prunedAsBefore(chat: LiveChat, all: LlmMessage[]): LlmMessage[] {
  const state = windowState(chat);
  if (state.pruneBefore === undefined) return all;
  if (all.length <= state.pruneBefore) {
    state.pruneBefore = undefined;
    return all;
  }
  return pruneToolResults(all, KEEP_STEPS, state.pruneBefore);
}

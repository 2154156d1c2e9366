/**
 * Compaction: the chat's model summarises the older part of the conversation, and the summary
 * (a `system`/`summary` stored message) stands in for it in what is sent from then on. The store
 * keeps every message, so the editor still pages the whole chat and rollback and fork still work
 * (../chat/messages.ts `sentMessages` decides what the model reads). `/compact` and auto-compaction
 * (context-window.ts) both come here, through `compactChat`.
 */
import { randomUUID } from 'node:crypto';
import type { LlmMessage, LlmToolSpec, ModelEntry } from '../../shapes/llm.js';
import { LlmError } from '../../shapes/llm.js';
import type { LiveChat } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';
import { SUMMARY_HEAD, sentMessages, toLlmMessages, type StoredMessage } from '../chat/messages.js';
import { estimateTokens, pruneToolResults } from './context-size.js';
import { errorMessage } from '../../util/log.js';
import { chargeUsage, type StepUsage } from './usage.js';
import { afterCompact, beforeCompact } from '../hooks/compact-hooks.js';
import type { HookStop } from '../hooks/effects.js';

export type CompactTrigger = 'manual' | 'auto';

/** What a chat remembers between requests about its context window (in memory: a restart starts afresh). */
export interface WindowState {
  /** The last step reached the auto-compaction threshold: compact before the next request. */
  due: boolean;
  /**
   * The provider overflowed: the tool results before this index of the model's messages go pruned
   * in every request from now on. The index stays put as the chat grows (a rolling cut would
   * change an already-sent message at every step and miss the prompt cache each time); a later
   * overflow moves it on. Undefined: nothing is pruned.
   */
  pruneBefore?: number;
  /** How the chat's last request began, for the summary request to begin alike. */
  head?: ChatRequestHead;
}

const windows = new WeakMap<LiveChat, WindowState>();

/** The chat's messages were cleared or rolled back: what the old ones made due (compaction, pruning) goes. */
export function resetWindow(chat: LiveChat): void {
  windows.delete(chat);
}

export function windowState(chat: LiveChat): WindowState {
  let s = windows.get(chat);
  if (!s) windows.set(chat, (s = { due: false }));
  return s;
}

export interface CompactOptions {
  /** `/compact` (summarise everything) or auto-compaction (keep the latest turn verbatim when it is small). */
  trigger: CompactTrigger;
  /** The user's extra instructions for the summary (`/compact <instructions>`). */
  instructions?: string;
  signal: AbortSignal;
  /** The model that writes the summary; default the chat's. */
  entry?: ModelEntry;
  /** Send old tool results pruned (after the provider said the context overflowed). */
  prune?: boolean;
  /**
   * The system prompt and tools of the chat's last request. The summary request repeats them, as
   * ECA sends its compaction as a prompt of the chat, so the provider's prompt cache of the chat
   * is read back instead of the whole history being paid for again; without them, a bare request.
   */
  like?: ChatRequestHead;
}

/** What a chat's requests start with (the provider's cached prefix runs tools, system, messages). */
export interface ChatRequestHead {
  system: string;
  systemStableLength: number;
  tools: LlmToolSpec[];
}

/** `stop`: a compact hook said `continue: false` (the turn, if any, ends). */
export type CompactResult = { ok: true; summary: string; kept: number; stop?: HookStop } | { ok: false; reason: string; stop?: HookStop };

/**
 * The latest turn stays verbatim only when it takes at most this share of the context window
 * (or, the window unknown, of what is sent now): a turn that is itself most of the window has to
 * be summarised too, or compacting would free nothing.
 */
const KEEP_TAIL_SHARE = 0.3;

const SYSTEM = 'You summarize coding conversations so they can continue with less context. Answer with the summary only.';

/**
 * The one entry point of compaction (hooks wrap it: preCompact before, postCompact after). Asks
 * `entry` for a summary of what the model reads now, stores it, and says how it went; it never
 * throws for a model failure (the caller tells the user `reason`), only for an abort.
 */
export async function compactChat(chat: LiveChat, deps: ChatDeps, opts: CompactOptions): Promise<CompactResult> {
  const entry = opts.entry ?? deps.models().find((m) => m.id === chat.model) ?? deps.defaultModel();
  if (!entry) return { ok: false, reason: 'No model is configured, so the chat cannot be summarized.' };
  const kept = opts.trigger === 'auto' ? keptTail(chat.stored, entry) : 0;
  const older = chat.stored.slice(0, chat.stored.length - kept);
  const history = toLlmMessages(older);
  if (!history.some((m) => m.role !== 'user' || !m.content.startsWith(SUMMARY_HEAD))) return { ok: false, reason: 'Nothing to compact yet.' };
  const veto = await beforeCompact(deps, chat, opts.trigger, opts.instructions ?? '', opts.signal);
  if (veto) return { ok: false, reason: veto.text, ...(veto.stop ? { stop: veto.stop } : {}) };
  let summary: string;
  // The summary request is paid for like any other (ECA runs it as a prompt of the chat).
  let charged: { usage: StepUsage; cost?: number } | undefined;
  const charge = (u: StepUsage) => {
    const cost = chargeUsage(chat, entry, u, deps);
    charged = { usage: u, ...(cost !== undefined ? { cost } : {}) };
  };
  // Façades that show a compaction as it runs (ACP `compaction_update`) follow it by this id.
  const progress = compactionProgress(chat.id, deps, opts.trigger);
  try {
    summary = await summarize(chat.id, entry, history, opts, deps, charge);
  } catch (e) {
    if (opts.signal.aborted) {
      progress('cancelled');
      throw e;
    }
    const reason = `Compacting failed: ${errorMessage(e)}`;
    progress('failed', { error: reason });
    return { ok: false, reason };
  }
  if (!summary) {
    const reason = 'The model returned an empty summary; the chat was left as it was.';
    progress('failed', { error: reason });
    return { ok: false, reason };
  }
  // Summarised mid-turn with nothing kept: the request in progress must survive in the summary.
  const request = kept === 0 && opts.trigger === 'auto' ? lastUserText(older) : undefined;
  const text = request ? `${summary}\n\nThe user's latest request, still in progress:\n${request}` : summary;
  const msg: StoredMessage = { role: 'system', kind: 'summary', text, ...(kept ? { kept } : {}), ...(opts.trigger === 'auto' ? { auto: true } : {}) };
  chat.stored.push(msg);
  const seq = deps.store.appendMessage(chat.id, msg);
  // What made the chat due or pruned is in the summary now.
  windows.delete(chat);
  // postCompact's additionalContext stays with the summary (ECA appends it after the compact marker).
  const after = await afterCompact(deps, chat, opts.trigger, text, opts.signal);
  if (after.append) {
    msg.text += after.append;
    deps.store.replaceMessage(chat.id, seq, msg);
  }
  progress('completed', { summary: msg.text });
  // ECA shared.clj `compact-side-effect!`: the chat's usage starts afresh, and the editor is told
  // (its context bar empties instead of showing the window as full until the next request).
  deps.events.event(chat.id, {
    type: 'usage',
    contextTokens: 0,
    stepInputTokens: charged?.usage.inputTokens ?? 0,
    stepOutputTokens: charged?.usage.outputTokens ?? 0,
    ...(charged?.cost !== undefined ? { stepCost: charged.cost, chatCost: chat.usage.cost } : {}),
    ...(entry.limit ? { limit: entry.limit } : {}),
  });
  return { ok: true, summary: msg.text, kept, ...(after.stop ? { stop: after.stop } : {}) };
}

/** Emits `started` at once; the function returned tells how the compaction ended. */
function compactionProgress(chatId: string, deps: ChatDeps, trigger: CompactTrigger) {
  const id = randomUUID();
  deps.events.event(chatId, { type: 'compaction', id, status: 'started', trigger });
  return (status: 'completed' | 'failed' | 'cancelled', more: { summary?: string; error?: string } = {}) => deps.events.event(chatId, { type: 'compaction', id, status, trigger, ...more });
}

/** What the summary must keep: ECA's compact prompt asks for the same points. */
function summaryPrompt(instructions: string | undefined, tools: boolean): string {
  return [
    'Summarize this conversation so that it can continue from the summary alone.',
    tools ? 'Do not call any tool now: answer with the summary text only.' : '',
    'For a coding session keep: the goal and the progress made, decisions and why, the files touched and their state, technical details that must not be lost, and the unfinished tasks and next steps.',
    'For a general conversation, summarize it so that any model can continue it.',
    instructions?.trim() ?? '',
  ]
    .filter(Boolean)
    .join('\n');
}

async function summarize(chatId: string, entry: ModelEntry, history: LlmMessage[], opts: CompactOptions, deps: ChatDeps, charge: (u: StepUsage) => void): Promise<string> {
  const client = await deps.clientFor(entry, opts.signal);
  const config = deps.config();
  const ask = async (messages: LlmMessage[], like: ChatRequestHead | undefined): Promise<string> => {
    let text = '';
    const stream = deps.stream(
      client,
      {
        model: entry.modelName,
        system: like?.system ?? SYSTEM,
        ...(like ? { systemStableLength: like.systemStableLength } : {}),
        messages: [...messages, { role: 'user', content: summaryPrompt(opts.instructions, !!like?.tools.length) }],
        tools: like?.tools ?? [],
        signal: opts.signal,
        chatId,
        ...(entry.cacheRetention ? { cacheRetention: entry.cacheRetention } : {}),
      },
      { maxRetries: config.chat.maxRetries, stallMs: config.chat.stallTimeoutSeconds * 1000, onRetry: () => {} },
    );
    let usage: StepUsage | undefined;
    try {
      for await (const ev of stream) {
        if (ev.type === 'text') text += ev.text;
        else if (ev.type === 'usage') usage = ev;
      }
    } finally {
      // Stopped or failed after the provider counted it: still paid for.
      if (usage) charge(usage);
    }
    return text.trim();
  };
  // Already too long for the model: the bare request, with old tool results pruned, fits best
  // (the cache would not match a pruned history anyway).
  if (opts.prune) return ask(pruneToolResults(history), undefined);
  try {
    return await ask(history, opts.like);
  } catch (e) {
    // The history alone is too long for the model: once more, bare and with old tool results pruned.
    const pruned = pruneToolResults(history);
    if (!(e instanceof LlmError && e.kind === 'contextOverflow') || (pruned === history && !opts.like)) throw e;
    return ask(pruned, undefined);
  }
}

/**
 * How many of the last stored messages auto-compaction keeps verbatim: the latest turn (from the
 * last user message on, so no tool call is cut from its result), unless it is too big, or it is
 * all the model reads (nothing older to summarise).
 */
export function keptTail(stored: StoredMessage[], entry: ModelEntry): number {
  const sent = sentMessages(stored);
  let start = -1;
  for (let i = stored.length - 1; i >= 0; i--) {
    const m = stored[i];
    if (m.role === 'system' && m.kind === 'summary') break;
    if (m.role === 'user') {
      start = i;
      break;
    }
  }
  if (start < 0) return 0;
  const tail = stored.slice(start);
  // The tail is everything the model reads: summarising it away is the only way to free room.
  if (tail.length >= sent.length) return 0;
  const budget = (entry.limit?.context ?? estimateTokens(toLlmMessages(stored))) * KEEP_TAIL_SHARE;
  return estimateTokens(toLlmMessages(tail)) <= budget ? tail.length : 0;
}

function lastUserText(stored: StoredMessage[]): string | undefined {
  const m = stored.findLast((x) => x.role === 'user');
  return m?.role === 'user' ? m.text : undefined;
}

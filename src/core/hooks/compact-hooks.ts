/**
 * preCompact / postCompact (ECA docs/config/hooks.md "Compaction hooks"; eca chat/lifecycle.clj
 * `run-pre-compact-hooks!`, `run-post-compact-hooks!`), for manual `/compact` and auto-compaction
 * alike: call `beforeCompact` before summarising and `afterCompact` once the summary is in the history.
 */
import type { LiveChat } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';
import { additionalContexts, stopOf, stoppedText, wrapContext, type HookStop } from './effects.js';
import { hookChat } from './hook-chat.js';

export interface CompactVeto {
  /** What the user is told: compaction blocked (exit 2), or the turn stopped (`continue: false`). */
  text: string;
  /** `continue: false`: the turn stops too (auto-compaction must end the turn). */
  stop?: HookStop;
}

/** Undefined: go on and compact. */
export async function beforeCompact(deps: ChatDeps, chat: LiveChat, trigger: 'manual' | 'auto', instructions: string, signal?: AbortSignal): Promise<CompactVeto | undefined> {
  if (!deps.hooks?.has('preCompact')) return undefined;
  const runs = await deps.hooks.trigger('preCompact', { chat: hookChat(chat, deps), data: { triggered: trigger, customInstructions: instructions }, match: { triggered: trigger }, signal });
  const stop = stopOf(runs);
  if (stop) return { text: stoppedText(stop), stop };
  const blocker = runs.find((r) => r.exit === 2);
  return blocker ? { text: `Compaction blocked by hook '${blocker.name}'.` } : undefined;
}

/** The text to append to the summary (each hook's additionalContext, wrapped), and a stop. */
export async function afterCompact(deps: ChatDeps, chat: LiveChat, trigger: 'manual' | 'auto', summary: string, signal?: AbortSignal): Promise<{ append: string; stop?: HookStop }> {
  if (!deps.hooks?.has('postCompact')) return { append: '' };
  const runs = await deps.hooks.trigger('postCompact', { chat: hookChat(chat, deps), data: { triggered: trigger, compactSummary: summary }, match: { triggered: trigger }, signal });
  const stop = stopOf(runs);
  return {
    append: additionalContexts(runs)
      .map((c) => `\n\n${wrapContext(c)}`)
      .join(''),
    ...(stop ? { stop } : {}),
  };
}

/** A chat's running totals: one model request's tokens and cost added, and stored (turns and compaction summaries alike). */
import type { ModelEntry } from '../../shapes/llm.js';
import type { LiveChat, Usage } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';

export type StepUsage = { inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number };

/** Adds `u` to the chat's totals and stores them; returns the request's cost when the model is priced. */
export function chargeUsage(chat: LiveChat, entry: ModelEntry, u: StepUsage, deps: Pick<ChatDeps, 'cost' | 'store'>): number | undefined {
  const cost = deps.cost(entry, u);
  const read = (chat.usage.cacheReadTokens ?? 0) + (u.cacheReadTokens ?? 0);
  const write = (chat.usage.cacheWriteTokens ?? 0) + (u.cacheWriteTokens ?? 0);
  const totals: Usage = {
    inputTokens: chat.usage.inputTokens + u.inputTokens,
    outputTokens: chat.usage.outputTokens + u.outputTokens,
    cost: chat.usage.cost + (cost ?? 0),
    // None until a request reports some.
    ...(read ? { cacheReadTokens: read } : {}),
    ...(write ? { cacheWriteTokens: write } : {}),
  };
  chat.usage = totals;
  deps.store.updateChat(chat.id, { usage: totals });
  return cost;
}

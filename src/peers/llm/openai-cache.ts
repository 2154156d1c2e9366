/**
 * OpenAI prompt caching: requests whose prompts share a prefix of 1024+ tokens re-use it, and
 * `prompt_cache_key` routes a chat's requests to the same cache (platform.openai.com
 * "Prompt caching"). The key is a hash of the chat id, so it is stable for the chat and says
 * nothing of the user or their data; `prompt_cache_retention: "24h"` is the extended cache,
 * which only OpenAI's own API knows.
 */
import { createHash } from 'node:crypto';
import type { LlmRequest } from '../../shapes/llm.js';

/** The prompt-cache key of a chat: `patchbay-` and 32 hex digits of sha256(chat id). */
export function promptCacheKey(chatId: string): string {
  return `patchbay-${createHash('sha256').update(chatId).digest('hex').slice(0, 32)}`;
}

/**
 * The cache fields of a request: none without a chat or with `cacheRetention: "none"`; for an
 * OpenAI-compatible server that is not OpenAI's (`openAi` false) only when the config asked for
 * caching by name, since strict servers refuse fields they do not know.
 */
export function promptCacheFields(req: Pick<LlmRequest, 'chatId' | 'cacheRetention'>, openAi: boolean): { prompt_cache_key?: string; prompt_cache_retention?: '24h' } {
  if (!req.chatId || req.cacheRetention === 'none') return {};
  if (!openAi && req.cacheRetention === undefined) return {};
  return { prompt_cache_key: promptCacheKey(req.chatId), ...(openAi && req.cacheRetention === 'long' ? { prompt_cache_retention: '24h' as const } : {}) };
}

/** Whether `url` is OpenAI's own API. */
export function isOpenAiUrl(url: string): boolean {
  try {
    return /(^|\.)openai\.com$/.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

/**
 * A chat's title, asked of the chat's own model after its first prompt (`chat.generateTitles`):
 * a few words, cleaned of quotes, a trailing period and a reasoning model's `<think>` block.
 */
import type { ModelEntry } from '../../shapes/llm.js';
import type { ChatDeps } from '../deps.js';

/** The longest wait for a title: the chat does not wait for it, but a hung stream is let go. */
const TITLE_TIMEOUT_MS = 30_000;

/** The title for a chat that starts with `firstMessage` ('' when the model gave none); throws when the model fails. */
export async function generateTitle(deps: Pick<ChatDeps, 'clientFor' | 'stream'>, entry: ModelEntry, firstMessage: string): Promise<string> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TITLE_TIMEOUT_MS);
  try {
    const client = await deps.clientFor(entry, abort.signal);
    let title = '';
    for await (const ev of deps.stream(
      client,
      {
        model: entry.modelName,
        system: 'You write short titles for coding chats. Answer with the title only: at most 6 words, no quotes, no trailing period.',
        messages: [{ role: 'user', content: `Title for a chat that starts with:\n${firstMessage.slice(0, 2000)}` }],
        tools: [],
        maxOutputTokens: 30,
        signal: abort.signal,
      },
      { maxRetries: 1, stallMs: 15_000, onRetry: () => {} },
    )) {
      if (ev.type === 'text') title += ev.text;
    }
    return title
      .replace(/<think>[\s\S]*?<\/think>/g, '')
      .trim()
      .replace(/^["'`]+|["'`.]+$/g, '')
      .split('\n')[0]
      .slice(0, 80);
  } finally {
    clearTimeout(timer);
  }
}

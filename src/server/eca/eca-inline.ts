/**
 * `chat/inlinePrompt` on the wire (ECA `src/eca/features/chat.clj` `inline-prompt` and
 * `validate-client-chat-id`). The checks ECA makes before a prompt is taken are made here, and a
 * prompt they refuse is answered as ECA answers it: `{chatId, model: "error", status: "error"}`,
 * which eca-emacs (`eca-chat-inline--send`), eca-intellij and eca-vscode read from a successful
 * response. The reason is logged and said to the user ($/showMessage), since the answer has no
 * room for it. The rest is core's (`ChatService.inlinePrompt`, core/chat/inline-chat.ts).
 */
import type { ChatInlinePromptParams } from '../../protocol/eca/inline.js';
import type { ChatPromptResult } from '../../protocol/eca/chat.js';
import { logger } from '../../util/log.js';

const log = logger('server');

/** ECA's `max-client-chat-id-length`. */
const MAX_CHAT_ID = 256;

/** Why ECA refuses a client's chat id (chat.clj `validate-client-chat-id`); undefined when it does not. */
export function chatIdProblem(id: string | undefined): string | undefined {
  if (id === undefined || !id.trim()) return 'chatId must be a non-blank string';
  // Subagents' chats are named `subagent-<tool call id>` by the server (core/subagents/child-ids.ts).
  if (id.startsWith('subagent-')) return "chatId prefix 'subagent-' is reserved for server-managed subagent chats";
  if (/[\s\x00-\x1f\x7f]/.test(id)) return 'chatId must not contain whitespace or control characters';
  if (id.length > MAX_CHAT_ID) return `chatId must be ${MAX_CHAT_ID} characters or fewer`;
  return undefined;
}

/** Why an inline prompt is refused before it is taken, as ECA checks it; undefined when it is not. */
export function inlineRefusal(p: ChatInlinePromptParams): string | undefined {
  const id = chatIdProblem(p.chatId);
  if (id) return id;
  const source = p.sourceChatId !== undefined ? chatIdProblem(p.sourceChatId) : undefined;
  if (source) return `sourceChatId: ${source.replace(/^chatId /, '')}`;
  return p.message.trim() ? undefined : 'message is required';
}

/** ECA's answer to a refused inline prompt; `tell` says why to the user. */
export function refusedInline(p: ChatInlinePromptParams, why: string, tell: (message: string) => void): ChatPromptResult {
  log.warn(`chat/inlinePrompt refused (chat ${p.chatId ?? 'none'}): ${why}`);
  tell(`Inline prompt refused: ${why}`);
  return { chatId: p.chatId ?? '', model: 'error', status: 'error' };
}

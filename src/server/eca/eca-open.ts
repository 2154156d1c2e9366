/**
 * `chat/open` as ECA's server does it (eca `src/eca/features/chat.clj` `open-chat!`): core replays
 * the chat (`chat/cleared`, `chat/opened`, its contents, a `metadata` content with its title), then
 * two `config/updated` scoped by `chatId` realign that chat's model (with its variants) and trust, and only then is the
 * request answered, with the same values as one `selection`. The order matters: eca-emacs
 * (`eca-chat--handle-open-response`) looks up the chat's buffer, which `chat/opened` created, when
 * the answer arrives, and fails ("Resume: no buffer was registered") if the replay comes later.
 * Any of `limit`/`before`/`after` replays only that window (as `chat/history` pages it) and adds
 * `meta`, from which eca-emacs offers "Load older messages".
 */
import type { ChatService } from '../../core/chat/chats.js';
import type { HistoryWindow } from '../../core/chat/chat-history.js';
import type { ChatOpenResult } from '../../protocol/eca/chat.js';
import type { ConfigUpdated } from '../../protocol/eca/lifecycle.js';

export function openChat(chats: ChatService, chatId: string, sendConfig: (params: ConfigUpdated) => void, window?: HistoryWindow): ChatOpenResult {
  const chat = chats.open(chatId, window);
  // ECA answers `found: false` (not an error) for a chat it does not have.
  if (!chat) return { found: false };
  const page = chat.page;
  // ECA answers a stale cursor with `error` instead of a replay, and nothing else.
  if (page && !page.ok) return { found: true, chatId: chat.id, error: { code: 'cursor_expired', message: page.message } };
  // ECA's notify-selected-model-changed! sends nothing when the stored model is gone.
  // The chat's variant when its model still has it (config.clj `notify-selected-model-changed!`).
  if (chat.model) sendConfig({ chatId: chat.id, chat: { selectModel: chat.model, variants: chat.variants, selectVariant: chat.variant } });
  // ECA sends `(boolean nil)`, false, for a chat never trusted.
  const trust = chat.trust;
  sendConfig({ chatId: chat.id, chat: { selectTrust: trust } });
  return {
    found: true,
    chatId: chat.id,
    ...(chat.title ? { title: chat.title } : {}),
    // ECA: no model, no variants.
    selection: { model: chat.model ?? null, agent: chat.agent, variant: chat.model ? chat.variant : null, variants: chat.model ? chat.variants : [], trust },
    // With a window, `meta` lets the client page older through `chat/history`.
    ...(page ? { meta: { total: page.total, returned: page.returned, beforeCursor: page.beforeCursor, afterCursor: page.afterCursor, compactionCursor: page.compactionCursor } } : {}),
  };
}

/**
 * `chat/history` and `chat/fork` on the wire (ECA `src/eca/features/chat.clj` `fetch-history`,
 * `fork-chat`). History's contents are the `chat/contentReceived` params a replay would send,
 * translated by ./eca-events.ts like every other chat event, so the editor's renderer is reused.
 */
import { ResponseError } from 'vscode-jsonrpc';
import type { ChatService } from '../../core/chat/chats.js';
import type { HistoryWindow } from '../../core/chat/chat-history.js';
import type { ContentReceived } from '../../protocol/eca/content.js';
import type { ChatHistoryResult } from '../../protocol/eca/history.js';
import { ECA } from '../../protocol/eca/methods.js';
import { InvalidParams } from '../../rpc/errors.js';
import { toEcaNotifications } from './eca-events.js';

export function chatHistory(chats: ChatService, chatId: string, w: HistoryWindow): ChatHistoryResult {
  const page = chats.history(chatId, w);
  // ECA answers both failures in the result, and eca-emacs reads them there.
  if (!page.ok) return { error: { code: page.code, message: page.message } };
  const contents: ContentReceived[] = [];
  // A subagent's contents come inside the page, naming this chat (ECA `messages->contents`).
  for (const x of chats.withSubagents(chatId, page.events)) {
    for (const n of toEcaNotifications(x.chatId, x.event, x.parentChatId)) if (n.method === ECA.chatContentReceived.method) contents.push(n.params);
  }
  const { total, returned, beforeCursor, afterCursor, compactionCursor } = page;
  return { contents, meta: { total, returned, beforeCursor, afterCursor, compactionCursor } };
}

/**
 * Answered with the new chat's id (ECA 0.157 `fork-chat`). ECA answers `{}` and does nothing for
 * a fork it cannot make; patchbay says why instead, as a JSON-RPC error (eca-emacs
 * `eca-chat--fork-from-flag` makes a synchronous request, which shows the error's message to the user).
 */
export function forkChat(chats: ChatService, chatId: string, contentId: string | undefined): { chatId: string } {
  const r = chats.fork(chatId, contentId);
  if (!r.ok) throw new ResponseError(InvalidParams, r.message);
  return { chatId: r.chatId };
}

/**
 * `chat/rollback` on the wire (ECA `src/eca/features/chat.clj` `rollback-chat`): core rolls back
 * and emits `chat/cleared` and the kept contents (the same replay `chat/open` sends) before this
 * answers, as ECA does. ECA answers `{}` even when it could do nothing; patchbay refuses an unknown
 * chat or content id, or a rollback while the chat answers, with −32602 saying why (eca-emacs
 * `eca-chat--rollback` makes a synchronous request, which shows the error's message).
 */
import { ResponseError } from 'vscode-jsonrpc';
import type { ChatService } from '../../core/chat/chats.js';
import type { ChatRollbackParams, ChatRollbackResult } from '../../protocol/eca/rollback.js';
import { InvalidParams } from '../../rpc/errors.js';

export function rollbackChat(chats: ChatService, p: ChatRollbackParams): ChatRollbackResult {
  // ECA: an empty or missing include means both (its clients from before `include` send none).
  const all = !p.include?.length;
  const r = chats.rollback(p.chatId, p.contentId, { messages: all || p.include!.includes('messages'), tools: all || p.include!.includes('tools') });
  if (!r.ok) throw new ResponseError(InvalidParams, r.message);
  return r.notRestored.length ? { notRestored: r.notRestored } : {};
}

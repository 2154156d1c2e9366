/**
 * `chat/addFlag` and `chat/removeFlag` on the wire (ECA `src/eca/features/chat.clj` `add-flag`,
 * `remove-flag`). Adding clears and replays the chat (through core's events) before the answer,
 * as ECA does; removing sends nothing (the client drops the flag from its view). ECA answers `{}`
 * and does nothing for an unknown chat or content id; patchbay says why, as a JSON-RPC error
 * (eca-emacs sends both as synchronous requests, which show an error's message to the user).
 */
import { ResponseError } from 'vscode-jsonrpc';
import type { ChatService } from '../../core/chat/chats.js';
import { InvalidParams } from '../../rpc/errors.js';

export function addFlag(chats: ChatService, p: { chatId: string; contentId: string; text: string }): Record<string, never> {
  const r = chats.addFlag(p.chatId, p.contentId, p.text);
  if (!r.ok) throw new ResponseError(InvalidParams, r.message);
  return {};
}

export function removeFlag(chats: ChatService, p: { chatId: string; contentId: string }): Record<string, never> {
  const r = chats.removeFlag(p.chatId, p.contentId);
  if (!r.ok) throw new ResponseError(InvalidParams, r.message);
  return {};
}

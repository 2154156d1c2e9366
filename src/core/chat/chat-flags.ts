/**
 * Flags: named bookmarks the user puts after a message of a chat, as ECA's server keeps them
 * (eca `src/eca/features/chat.clj` `add-flag`, `remove-flag`, `find-last-message-idx`). A flag is
 * a stored message of its own (role `flag`): replayed where it sits, copied by a fork, a content
 * id a fork or rollback can go to, and never sent to the LLM (core/chat/messages.ts).
 */
import { randomUUID } from 'node:crypto';
import type { LiveChat } from './chat.js';
import { findContentIndex } from './chat-history.js';
import type { ChatEvents } from '../events.js';
import { replayEvents } from './messages.js';
import { ChatRunningElsewhereError, type ChatPersistence } from '../persistence.js';
import type { StoredMessage } from './stored-message.js';

export type FlagResult = { ok: true; contentId: string } | { ok: false; message: string };

/**
 * Inserts a flag after the last message `contentId` names, then redraws the chat (ECA: the chat
 * is cleared and replayed, so the flag shows at its place). Refused while a turn runs: the
 * redraw would wipe what is streaming, and the turn still writes messages by position.
 */
export function addFlag(chat: LiveChat, store: ChatPersistence, events: ChatEvents, contentId: string, text: string): FlagResult {
  if (chat.busy()) return { ok: false, message: `Chat ${chat.id} is answering a prompt: stop it or let it finish before adding a flag` };
  const rows = store.messageRows(chat.id);
  const idx = findContentIndex(rows, contentId);
  if (idx === undefined) return { ok: false, message: `Chat ${chat.id} has no message with content id ${contentId}` };
  const flag: StoredMessage = { role: 'flag', text, contentId: randomUUID() };
  try {
    store.insertMessageAfter(chat.id, rows[idx].seq, flag);
  } catch (e) {
    // Another server's turn writes this chat by position (checked in the insertion's transaction).
    if (e instanceof ChatRunningElsewhereError) return { ok: false, message: e.message };
    throw e;
  }
  // Read back rather than spliced in: the store is the truth, and no turn holds these messages now.
  chat.stored.splice(0, chat.stored.length, ...store.messages(chat.id));
  const replay = (): void => {
    events.cleared(chat.id);
    for (const e of replayEvents(chat.stored)) events.event(chat.id, e);
  };
  if (events.together) events.together(replay);
  else replay();
  return { ok: true, contentId: flag.contentId };
}

/**
 * Removes a flag. Nothing is sent: the client drops it from its view (ECA docs "Chat remove
 * flag"). Allowed while a turn runs: removing shifts no position a turn still writes to.
 */
export function removeFlag(chat: LiveChat, store: ChatPersistence, contentId: string): FlagResult {
  const rows = store.messageRows(chat.id);
  const row = rows.find((r) => r.message.role === 'flag' && r.message.contentId === contentId);
  if (!row) {
    const what = findContentIndex(rows, contentId) === undefined ? 'no flag with content id' : 'content that is not a flag:';
    return { ok: false, message: `Chat ${chat.id} has ${what} ${contentId}` };
  }
  store.deleteMessage(chat.id, row.seq);
  const at = chat.stored.findIndex((m) => m.role === 'flag' && m.contentId === contentId);
  if (at >= 0) chat.stored.splice(at, 1);
  return { ok: true, contentId };
}

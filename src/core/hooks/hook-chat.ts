/** The chat a hook event is about, as the hooks see it (no import of the turn: compaction uses it too). */
import type { LiveChat } from '../chat/chat.js';
import type { ChatDeps } from '../deps.js';
import type { HookChat } from './hooks.js';

export function hookChat(chat: LiveChat, deps: ChatDeps): HookChat {
  // A subagent's chat is its agent's, by name (ECA agent.clj prompts the child with `:agent agent-name`).
  // `deps` are the turn's: their roots are the chat's (core/chat/chat-roots.ts).
  return { chatId: chat.id, agent: chat.subagent?.def.name ?? chat.agent, model: chat.model, variant: chat.variant, emit: (e) => deps.events.event(chat.id, e), roots: deps.roots() };
}

/**
 * Inline chats (ECA `chat/inlinePrompt`: eca `src/eca/features/chat.clj` `inline-prompt`,
 * docs/config/chat-inline.md). An editor draws the answer beside the code, but the chat behind it
 * is a regular one: tools, approvals, stop and follow-ups work as usual. What differs is how it
 * starts: it is of kind `inline` (chat/list says so), titled from its first message (so no title
 * is generated), optionally with a copy of another chat's history that the model reads and the
 * editor is never sent again, and with the `chatInline` config's choices.
 */
import type { ChatInlineConfig } from '../../config/chat-inline.js';
import type { Agent } from '../../shapes/agent.js';
import type { LiveChat } from './chat.js';
import type { ChatKind, ChatPersistence, NewChatRecord } from '../persistence.js';
import type { StoredMessage } from './stored-message.js';

/** How a new chat starts when it is not a plain empty one. */
export interface NewChatSeed {
  kind: ChatKind;
  title: string;
  /** The chat whose stored messages it starts with. */
  copyFrom?: string;
}

/** What an inline prompt names; what it leaves out the config and the source chat fill in. */
export interface InlineAsk {
  message: string;
  model?: string;
  agent?: Agent;
  variant?: string | null;
  trust?: boolean;
}

/** ECA's `inline-title`: whitespace runs become one space, and past 40 characters it is cut with "...". */
const TITLE_CHARS = 40;
export function inlineTitle(message: string): string {
  const m = message.replace(/\s+/g, ' ').trim();
  return `inline: ${m.length > TITLE_CHARS ? `${m.slice(0, TITLE_CHARS)}...` : m}`;
}

/**
 * The choices of an inline prompt. `agent` on every prompt: the prompt's, else `chatInline.agent`.
 * A new chat's model and variant: the prompt's, else `chatInline`'s, else the source chat's, else
 * (left unset) what any new chat gets; afterwards they stay the chat's own. A new chat copying
 * another takes its trust mode unless the prompt says.
 */
export function inlineChoices(
  ask: InlineAsk,
  cfg: ChatInlineConfig | undefined,
  isNew: boolean,
  source: LiveChat | undefined,
): { agent?: Agent; model?: string; variant?: string | null; trust?: boolean; seed?: NewChatSeed } {
  const agent = ask.agent ?? agentNamed(cfg?.agent);
  const out = agent ? { agent } : {};
  if (!isNew) return out;
  const model = ask.model ?? cfg?.model ?? source?.model;
  const variant = ask.variant ?? cfg?.variant ?? source?.variant;
  const trust = ask.trust ?? (source?.trust ? true : undefined);
  const seed: NewChatSeed = { kind: 'inline', title: inlineTitle(ask.message), ...(source ? { copyFrom: source.id } : {}) };
  return { ...out, ...(model ? { model } : {}), ...(variant ? { variant } : {}), ...(trust !== undefined ? { trust } : {}), seed };
}

/** patchbay's agents by ECA's names (`agent` is the old name of `code`); another is the default agent. */
function agentNamed(name: string | undefined): Agent | undefined {
  return name === 'plan' ? 'plan' : name === 'code' || name === 'agent' ? 'code' : undefined;
}

/**
 * Stores a new seeded chat and returns the messages it starts with: a copy of everything its
 * source has committed (even while the source runs a turn: a step still streaming is not stored
 * yet, and a call left without its result is not sent to the model, core/chat/messages.ts).
 */
export function createSeededChat(store: ChatPersistence, rec: NewChatRecord, seed: NewChatSeed): StoredMessage[] {
  const full: NewChatRecord = { ...rec, kind: seed.kind, title: seed.title };
  const rows = seed.copyFrom ? store.messageRows(seed.copyFrom) : [];
  if (!seed.copyFrom || !rows.length) {
    store.createChat(full);
    return [];
  }
  store.forkChat(seed.copyFrom, full, rows[rows.length - 1].seq, { whileRunning: true });
  return store.messages(rec.id);
}

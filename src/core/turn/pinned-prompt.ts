/**
 * A chat's system prompt is pinned, as ECA pins it (chat.clj, `chat.autoSyncSystemPrompt`,
 * `/sync-system-prompt`; docs/features.md): the stable part built for the chat's first request is
 * reused for every later one, so an edit to AGENTS.md, a rule or the config's `systemPrompt` in the
 * middle of a chat does not re-bill the provider's whole cached prompt. The user is told once per
 * change; the change applies to new chats, to this one after `/sync-system-prompt`, or at once with
 * `chat.autoSyncSystemPrompt: true`. A change of agent or model builds it anew (the prompt depends
 * on them). Skill catalog changes never re-sync a chat: the catalog is only routing, and a skill's
 * body is read when it is loaded. The dynamic rest is built for every request.
 *
 * In memory: a restarted server builds each chat's prompt anew (ECA does not keep it either).
 */
import { createHash } from 'node:crypto';
import type { PromptSection } from './prompt-sections.js';
import type { SystemPrompt } from './system-prompt.js';

/** What the stable part was built from, by ECA's categories: a hash each. */
export type PromptSignature = Record<'prompt' | 'contexts' | 'rules' | 'skills' | 'tools', string>;

interface Pin {
  agent: string;
  model: string | undefined;
  stable: string;
  signature: PromptSignature;
  /** The signature the user was last told about, so a change is told once. */
  told?: string;
}

/** By chat (its LiveChat): gone with it. */
const pins = new WeakMap<object, Pin>();

export function promptSignature(opts: { agent: string; extra: string; roots: string[]; tools: string[]; sections: PromptSection[] }): PromptSignature {
  const parts: Record<keyof PromptSignature, string[]> = { prompt: [opts.agent, opts.extra], contexts: [...opts.roots], rules: [], skills: [], tools: [...opts.tools] };
  for (const s of opts.sections) {
    if (!s.stable) continue;
    parts[categoryOf(s.id)].push(s.id, s.text);
  }
  const hash = (xs: string[]): string => createHash('sha256').update(xs.join('\u0000')).digest('hex');
  return { prompt: hash(parts.prompt), contexts: hash(parts.contexts), rules: hash(parts.rules), skills: hash(parts.skills), tools: hash(parts.tools) };
}

/** ECA's names: AGENTS.md files are contexts there, MCP servers' instructions come with their tools. */
function categoryOf(id: string): keyof PromptSignature {
  if (id === 'skills') return 'skills';
  if (id === 'rules' || id.startsWith('rule')) return 'rules';
  if (id.startsWith('instructions:')) return 'contexts';
  if (id.startsWith('mcp:')) return 'tools';
  return 'prompt';
}

/**
 * The system prompt to send: `built` with its stable part replaced by the chat's pinned one,
 * unless nothing was pinned yet, the agent or model changed, or `autoSync` is on and something
 * other than the skill catalog changed. `notice` gets the text to show the user, once a change.
 */
export function pinnedPrompt(
  chat: object,
  at: { agent: string; model: string | undefined },
  built: SystemPrompt,
  signature: PromptSignature,
  opts: { autoSync: boolean; notice(text: string, internal?: boolean): void; peek?: boolean },
): SystemPrompt {
  const pin = pins.get(chat);
  const stable = built.text.slice(0, built.stableLength);
  if (pin && pin.agent === at.agent && pin.model === at.model) {
    const changed = changedCategories(pin.signature, signature);
    if (!changed.length) return { text: pin.stable + built.text.slice(built.stableLength), stableLength: pin.stable.length };
    if (!opts.autoSync || (changed.length === 1 && changed[0] === 'skills')) {
      const key = JSON.stringify(signature);
      if (pin.told !== key && !opts.peek) {
        pin.told = key;
        // Only tools changed: they already apply, so there is nothing for the user to do.
        opts.notice(keptText(changed), changed.length === 1 && changed[0] === 'tools');
      }
      return { text: pin.stable + built.text.slice(built.stableLength), stableLength: pin.stable.length };
    }
  }
  // `/prompt-show`: what the next request would send, pinning and telling nothing.
  if (opts.peek) return built;
  if (pin) {
    const changed = [...(pin.agent !== at.agent ? ['agent'] : []), ...(pin.model !== at.model ? ['model'] : []), ...changedCategories(pin.signature, signature)];
    // Internal: the change already applies; what it costs is the provider's cache.
    opts.notice(`System prompt changed${changed.length ? ` (${changed.join(', ')})` : ''}, prompt cache invalidated.`, true);
  }
  pins.set(chat, { agent: at.agent, model: at.model, stable, signature });
  return built;
}

/** Forgets a chat's pinned prompt: its next request builds it anew (`/sync-system-prompt`). */
export function unpin(chat: object): void {
  pins.delete(chat);
}

function changedCategories(before: PromptSignature, now: PromptSignature): string[] {
  return (Object.keys(now) as Array<keyof PromptSignature>).filter((k) => before[k] !== now[k]);
}

/** ECA chat.clj `pinned-system-prompt-changed-text`: tool lists are sent fresh each request anyway. */
function keptText(changed: string[]): string {
  if (changed.length === 1 && changed[0] === 'tools') return 'Tools changed and already apply to this chat, keeping current chat system prompt text.';
  const tools = changed.includes('tools') ? ' (tools already apply)' : '';
  return `System prompt changed (${changed.join(', ')}), keeping current chat system prompt, changes will apply to new chats${tools}. Use /sync-system-prompt to apply now.`;
}

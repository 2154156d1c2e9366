/**
 * The parts of the system prompt that come from outside core's own text: project instructions
 * (AGENTS.md), rules, the skills catalog, MCP servers' instructions, context injected by hooks.
 * Each source registers a function under its name; the prompt asks them all for every request.
 *
 * A section is `stable` when it stays the same from one request of a chat to the next (it goes in
 * the cached prefix, see system-prompt.ts); anything that may change between requests of the same
 * chat (path-scoped rules that depend on the files in play, hook context) is not.
 */
import type { Agent } from '../../shapes/agent.js';
import type { Tool } from '../../shapes/tool.js';
import type { ApprovalConfig } from '../../config/schema.js';
import type { StoredMessage } from '../chat/stored-message.js';

export interface PromptScope {
  chatId: string;
  agent: Agent;
  /** The full model id, `provider/model`; undefined when none is chosen yet. */
  model?: string;
  roots: string[];
  /** The chat's messages so far (to see which files are in play). */
  stored: readonly StoredMessage[];
  /** Set for a subagent's child chat: its agent's name. */
  subagent?: string;
  /**
   * The tools this request offers and the approval rules of this chat (a subagent's own over the
   * config's): a section that points the model at a tool says nothing when the tool is not offered,
   * and leaves out what a deny rule refuses (ECA chat.clj drops denied skills from the catalog).
   */
  tools?: readonly Tool[];
  approval?: ApprovalConfig;
}

export interface PromptSection {
  /** The source's name for it, e.g. `agents-md`, `rule:code-style`; for `/prompt-show` and doctor. */
  id: string;
  text: string;
  stable: boolean;
  /** Sections sort by order (lower first), then by source registration order. Default 50. */
  order?: number;
}

export type PromptSource = (scope: PromptScope) => PromptSection[];

export class PromptSources {
  private readonly bySource = new Map<string, PromptSource>();

  set(source: string, fn: PromptSource | undefined): void {
    if (fn) this.bySource.set(source, fn);
    else this.bySource.delete(source);
  }

  /** Every source's sections for this scope, empty ones dropped; a source that throws is skipped. */
  sections(scope: PromptScope, onError?: (source: string, e: unknown) => void): PromptSection[] {
    const out: { s: PromptSection; i: number }[] = [];
    let i = 0;
    for (const [name, fn] of this.bySource) {
      let got: PromptSection[];
      try {
        got = fn(scope);
      } catch (e) {
        onError?.(name, e);
        continue;
      }
      for (const s of got) if (s.text.trim()) out.push({ s, i: i++ });
    }
    return out.sort((a, b) => (a.s.order ?? 50) - (b.s.order ?? 50) || a.i - b.i).map((x) => x.s);
  }
}

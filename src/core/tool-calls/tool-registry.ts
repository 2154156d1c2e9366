/**
 * Every tool the LLM can call, from every peer, under its LLM-facing name `<server>__<tool>`.
 * Peers (native, MCP, gateway, LSP) add and remove their tools; chats read a snapshot per request.
 *
 * The registry is the one place every source's names are checked (shapes/tool-names.ts): a tool
 * whose full name the LLM APIs refuse, or that another source already offers, is refused here
 * and the source is told why; the earlier holder of a name keeps it.
 */
import type { ApprovalConfig } from '../../config/schema.js';
import type { Agent } from '../../shapes/agent.js';
import { isHiddenByDeny } from './approval.js';
import { SMALL_CONTEXT_TOKENS, type Tool } from '../../shapes/tool.js';
import { llmName, llmNameProblem } from '../../shapes/tool-names.js';

export type { ToolRefusal as Refusal } from '../../shapes/registry.js';
import type { ToolRefusal as Refusal, ToolSink } from '../../shapes/registry.js';

export { llmName };

export class ToolRegistry implements ToolSink {
  private readonly bySource = new Map<string, Tool[]>();
  /** Tools offered to one chat only (gateway providers bind to a chat). */
  private readonly byChat = new Map<string, Map<string, Tool[]>>();

  /**
   * Replace every tool of one source (e.g. `native`, `mcp:github`) atomically. Tools the registry
   * refuses (see `check`) are left out and returned.
   */
  set(source: string, tools: Tool[]): Refusal[] {
    const { kept, refused } = this.sort(source, tools);
    if (kept.length) this.bySource.set(source, kept);
    else this.bySource.delete(source);
    return refused;
  }

  /** Replace the tools one source offers to one chat (`[]` removes them); refused ones are left out and returned. */
  setForChat(chatId: string, source: string, tools: Tool[]): Refusal[] {
    const { kept, refused } = this.sort(source, tools, chatId);
    const sources = this.byChat.get(chatId) ?? new Map<string, Tool[]>();
    if (kept.length) sources.set(source, kept);
    else sources.delete(source);
    if (sources.size) this.byChat.set(chatId, sources);
    else this.byChat.delete(chatId);
    return refused;
  }

  /**
   * What `set`/`setForChat` would refuse: full names the LLM APIs do not accept, and names another
   * source already offers where these would be seen (globally: everywhere; in a chat: that chat
   * and the global tools). A name the source gives twice keeps its first tool.
   */
  check(source: string, tools: Tool[], chatId?: string): Refusal[] {
    return this.sort(source, tools, chatId).refused;
  }

  private sort(source: string, tools: Tool[], chatId?: string): { kept: Tool[]; refused: Refusal[] } {
    const taken = new Map<string, string>();
    const note = (from: Map<string, Tool[]>) => {
      for (const [src, ts] of from) if (src !== source) for (const t of ts) taken.set(llmName(t), src);
    };
    note(this.bySource);
    if (chatId === undefined) for (const m of this.byChat.values()) note(m);
    else note(this.byChat.get(chatId) ?? new Map());
    const kept: Tool[] = [];
    const refused: Refusal[] = [];
    const mine = new Set<string>();
    for (const t of tools) {
      const full = llmName(t);
      const bad = llmNameProblem(full);
      const holder = taken.get(full);
      if (bad) refused.push({ tool: full, reason: `${bad}; it is not offered to the model` });
      else if (holder) refused.push({ tool: full, reason: `"${full}" is already offered by ${holder}` });
      else if (mine.has(full)) refused.push({ tool: full, reason: `"${full}" is declared twice` });
      else kept.push(t);
      mine.add(full);
    }
    return { kept, refused };
  }

  /** Every tool everywhere (or, with a chat, the tools that chat can use). */
  all(chatId?: string): Tool[] {
    const global = [...this.bySource.values()].flat();
    if (chatId === undefined) return [...global, ...[...this.byChat.values()].flatMap((m) => [...m.values()].flat())];
    return [...global, ...[...(this.byChat.get(chatId)?.values() ?? [])].flat()];
  }

  get(name: string, chatId?: string): Tool | undefined {
    return this.all(chatId).find((t) => llmName(t) === name);
  }

  /**
   * What one request offers the LLM: no tools hidden by a deny rule, no mutating tools for `plan`,
   * and for a model whose context window (`contextWindow`, its `limit.context`) is under
   * SMALL_CONTEXT_TOKENS, each tool as `smallContext` says (left out or shortened).
   * In a stable order, since the tool list opens the provider's cached prompt prefix and any
   * reordering re-bills it all: sources in the order they came (a server that starts later comes
   * after what was sent before), each source's tools by name (a server may
   * list them in any order).
   */
  visible(opts: ToolOffer): Tool[] {
    return this.offer(opts).tools;
  }

  /**
   * What a request offers, and the names it holds back that the agent could otherwise use
   * (disabledTools, a small-context model's trimmed set): a call to one of those is refused.
   */
  offer(opts: ToolOffer): { tools: Tool[]; withheld: Set<string> } {
    const chat = this.byChat.get(opts.chatId ?? '');
    const usable = [...this.bySource.values(), ...(chat?.values() ?? [])].flatMap(byName).filter((t) => !(opts.agent === 'plan' && t.mutates) && !isHiddenByDeny(t, opts.approval));
    const enabled = usable.filter((t) => !opts.disabled.includes(t.name) && !opts.disabled.includes(llmName(t)));
    const tools = isSmallContext(opts.contextWindow) ? enabled.flatMap(forSmallContext) : enabled;
    const offered = new Set(tools.map(llmName));
    return { tools, withheld: new Set(usable.map(llmName).filter((n) => !offered.has(n))) };
  }
}

export interface ToolOffer {
  agent: Agent;
  approval: ApprovalConfig;
  disabled: string[];
  chatId?: string;
  contextWindow?: number;
}

/** Whether a model with this context window gets the small-context tool set (unknown: no). */
export function isSmallContext(contextWindow: number | undefined): boolean {
  return contextWindow !== undefined && contextWindow > 0 && contextWindow < SMALL_CONTEXT_TOKENS;
}

/** A tool as a small-context model is offered it: not at all, shortened, or as it is. */
function forSmallContext(t: Tool): Tool[] {
  if (t.smallContext === false) return [];
  if (!t.smallContext) return [t];
  return [{ ...t, description: t.smallContext.description, inputSchema: t.smallContext.inputSchema }];
}

function byName(tools: Tool[]): Tool[] {
  return [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Every tool the LLM can call, from every peer, under its LLM-facing name `<server>__<tool>`.
 * Peers (native, MCP, gateway, LSP) add and remove their tools; chats read a snapshot per request.
 */
import type { ApprovalConfig } from '../config/schema.js';
import type { LlmToolSpec } from '../peers/llm/types.js';
import { isHiddenByDeny } from './approval.js';
import type { Tool } from './tool.js';

export function llmName(tool: Pick<Tool, 'server' | 'name'>): string {
  return `${tool.server}__${tool.name}`;
}

export class ToolRegistry {
  private readonly bySource = new Map<string, Tool[]>();
  /** Tools offered to one chat only (gateway providers bind to a chat). */
  private readonly byChat = new Map<string, Map<string, Tool[]>>();

  /** Replace every tool of one source (e.g. `native`, `mcp:github`) atomically. */
  set(source: string, tools: Tool[]): void {
    if (tools.length) this.bySource.set(source, tools);
    else this.bySource.delete(source);
  }

  /** Replace the tools one source offers to one chat (`[]` removes them). */
  setForChat(chatId: string, source: string, tools: Tool[]): void {
    const sources = this.byChat.get(chatId) ?? new Map<string, Tool[]>();
    if (tools.length) sources.set(source, tools);
    else sources.delete(source);
    if (sources.size) this.byChat.set(chatId, sources);
    else this.byChat.delete(chatId);
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

  /** What one request offers the LLM: no tools hidden by a deny rule, no mutating tools for `plan`. */
  visible(opts: { agent: 'code' | 'plan'; approval: ApprovalConfig; disabled: string[]; chatId?: string }): Tool[] {
    return this.all(opts.chatId ?? '').filter(
      (t) =>
        !(opts.agent === 'plan' && t.mutates) &&
        !isHiddenByDeny(t, opts.approval) &&
        !opts.disabled.includes(t.name) &&
        !opts.disabled.includes(llmName(t)),
    );
  }

  static toSpecs(tools: Tool[]): LlmToolSpec[] {
    return tools.map((t) => ({ name: llmName(t), description: t.description, parameters: t.inputSchema }));
  }
}

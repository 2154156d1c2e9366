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

  /** Replace every tool of one source (e.g. `native`, `mcp:github`) atomically. */
  set(source: string, tools: Tool[]): void {
    if (tools.length) this.bySource.set(source, tools);
    else this.bySource.delete(source);
  }

  all(): Tool[] {
    return [...this.bySource.values()].flat();
  }

  get(name: string): Tool | undefined {
    return this.all().find((t) => llmName(t) === name);
  }

  /** What one request offers the LLM: no tools hidden by a deny rule, no mutating tools for `plan`. */
  visible(opts: { agent: 'code' | 'plan'; approval: ApprovalConfig; disabled: string[] }): Tool[] {
    return this.all().filter(
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

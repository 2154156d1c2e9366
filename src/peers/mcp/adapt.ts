/**
 * MCP wire shapes → patchbay's internal shapes (Tool, ToolResult, Command, McpResourceContext).
 * Pure functions: no I/O, no client. The call paths live in session.ts.
 * Content types: https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result
 */
import type { CallToolResult, ContentBlock, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { Command, CommandContext, CommandOutcome } from '../../shapes/command.js';
import type { JsonSchema, Tool, ToolContext, ToolOutput, ToolResult } from '../../shapes/tool.js';
import type { ResourceContext as McpResourceContext } from '../../shapes/context.js';
import type { McpServerInfo } from './types.js';

/** `tools/call` goes through whichever session is live when the call happens (see server.ts). */
export type CallTool = (tool: string, args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>;

export function toTool(server: string, t: McpTool, call: CallTool): Tool {
  return {
    name: t.name,
    server,
    origin: 'mcp',
    description: t.description ?? t.annotations?.title ?? t.title ?? '',
    inputSchema: t.inputSchema as JsonSchema,
    // MCP tools ask by default, as in ECA; the hint only hides them from the `plan` agent.
    readOnly: false,
    mutates: !t.annotations?.readOnlyHint,
    call: (args, ctx) => call(t.name, args, ctx),
  };
}

/** What `tool/serverUpdated` lists for a server. */
export function toServerTool(t: McpTool): { name: string; description: string; parameters: unknown } {
  return { name: t.name, description: t.description ?? '', parameters: t.inputSchema };
}

/** What `tool/serverUpdated` lists of a server's prompts: every field filled, as ECA's `ServerPrompt`. */
export function toServerPrompt(p: Prompt): McpServerInfo['prompts'][number] {
  return {
    name: p.name,
    description: p.description ?? p.title ?? '',
    arguments: (p.arguments ?? []).map((a) => ({ name: a.name, description: a.description ?? '', required: a.required ?? false })),
  };
}

/** What `tool/serverUpdated` lists of a server's resources (templates are not listed, as in ECA). */
export function toServerResource(r: Resource): McpServerInfo['resources'][number] {
  return { uri: r.uri, name: r.name, description: r.description ?? '', mimeType: r.mimeType ?? '' };
}

function byteLength(base64: string): number {
  return Buffer.from(base64, 'base64').length;
}

/** Text for a content block that the model cannot take as is (audio, blobs, links). */
export function describeContent(c: ContentBlock): string {
  switch (c.type) {
    case 'text':
      return c.text;
    case 'image':
      return `[image ${c.mimeType}, ${byteLength(c.data)} bytes]`;
    case 'audio':
      return `[audio ${c.mimeType}, ${byteLength(c.data)} bytes]`;
    case 'resource': {
      const r = c.resource;
      return 'text' in r ? r.text : `[resource ${r.uri}, ${r.mimeType ?? 'unknown type'}, ${byteLength(r.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link ${c.uri}${c.name ? ` (${c.name})` : ''}${c.mimeType ? `, ${c.mimeType}` : ''}]`;
    default:
      return `[unsupported content ${(c as { type?: string }).type ?? 'unknown'}]`;
  }
}

export function toToolResult(r: CallToolResult): ToolResult {
  const outputs: ToolOutput[] = (r.content ?? []).map((c) => (c.type === 'image' ? { type: 'image', data: c.data, mimeType: c.mimeType } : { type: 'text', text: describeContent(c) }));
  // A tool with an output schema may return only structuredContent (spec: "Structured Content").
  if (r.structuredContent !== undefined && !outputs.some((o) => o.type === 'text')) {
    outputs.push({ type: 'text', text: JSON.stringify(r.structuredContent, null, 2) });
  }
  if (!outputs.length) outputs.push({ type: 'text', text: r.isError ? 'The tool failed without a message.' : '(no output)' });
  return { error: r.isError === true, outputs };
}

export function toResourceContext(server: string, r: Resource | ResourceTemplate): McpResourceContext {
  return {
    type: 'resource',
    uri: 'uriTemplate' in r ? r.uriTemplate : r.uri,
    name: r.name,
    description: r.description ?? '',
    mimeType: r.mimeType ?? '',
    server,
  };
}

/** `resources/read` → one text for the LLM; blobs are described, not inlined. */
export function renderResource(r: ReadResourceResult): string {
  return r.contents
    .map((c) => ('text' in c && typeof c.text === 'string' ? c.text : `[blob ${c.mimeType ?? 'unknown type'}, ${byteLength(String((c as { blob?: string }).blob ?? ''))} bytes]`))
    .join('\n\n');
}

export function renderPromptMessages(r: GetPromptResult): string {
  return r.messages.map((m) => `${m.role}: ${describeContent(m.content)}`).join('\n\n');
}

export type GetPrompt = (prompt: string, args: Record<string, string>, signal: AbortSignal) => Promise<GetPromptResult>;

/** An MCP prompt as the `/<server>:<prompt>` command; positional arguments fill the prompt's arguments in order. */
export function toCommand(server: string, p: Prompt, get: GetPrompt): Command {
  const params = (p.arguments ?? []).map((a) => ({ name: a.name, ...(a.description ? { description: a.description } : {}), required: a.required ?? false }));
  const name = `${server}:${p.name}`;
  return {
    name,
    description: p.description ?? p.title ?? '',
    type: 'mcp-prompt',
    arguments: params,
    async run(args: string[], ctx: CommandContext): Promise<CommandOutcome> {
      const missing = params.filter((a, i) => a.required && args[i] === undefined).map((a) => a.name);
      const usage = `/${name} ${params.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ')}`.trim();
      if (missing.length) return { kind: 'show', text: `Missing argument(s): ${missing.join(', ')}. Usage: ${usage}` };
      const named: Record<string, string> = {};
      params.forEach((a, i) => {
        if (args[i] !== undefined) named[a.name] = args[i];
      });
      try {
        const result = await get(p.name, named, ctx.signal);
        return { kind: 'prompt', userText: [`/${name}`, ...args].join(' '), contextText: renderPromptMessages(result) };
      } catch (e) {
        return { kind: 'show', text: `MCP prompt ${name} failed: ${e instanceof Error ? e.message : String(e)}` };
      }
    },
  };
}

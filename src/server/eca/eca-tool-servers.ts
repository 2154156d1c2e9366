/**
 * The runtime's tool servers and commands as ECA's plugins read them (specs/eca-protocol.md
 * "Tool updated", "Chat query commands"). The plugins recognise the built-in server by name and
 * type: eca-emacs' `eca-mcp-servers` drops the entry named "ECA" and counts (and offers to stop)
 * every other one as an MCP server; eca-webview's `ChatSubHeader` counts `type === 'mcp'`. So the
 * native tools go out as ECA's own server does (`src/eca/features/tools.clj` `init-servers!`).
 */
import type { ChatCommand } from '../../protocol/eca/chat.js';
import type { ToolServerUpdated } from '../../protocol/eca/lifecycle.js';
import type { CommandInfo } from '../../shapes/command.js';
import type { ToolServerStatus } from '../../shapes/peer.js';
import type { Tool } from '../../shapes/tool.js';

/** The name the plugins reserve for the built-in server; no MCP server may take it (tool-names.ts reserves "eca*"). */
export const NATIVE_SERVER_NAME = 'ECA';

/**
 * The native tools' entry: bare tool names as in ECA (the chat's tool calls carry the same bare
 * names); `disabled` marks what the default agent may not use (`plan` hides the tools that change things).
 */
export function nativeToolServer(tools: Tool[], defaultAgent: string): ToolServerUpdated {
  return {
    type: 'native',
    name: NATIVE_SERVER_NAME,
    status: 'running',
    tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema, disabled: defaultAgent === 'plan' && t.mutates })),
  };
}

/**
 * A peer's server with the fields ECA's `MCPServerUpdatedParams` always has (`disabled`, `hasAuth`),
 * for language servers and providers too: the plugins treat every non-native entry as an MCP one.
 */
export function toEcaToolServer(s: ToolServerStatus): ToolServerUpdated {
  const { authorized, disabled, prompts, resources, ...rest } = s;
  return {
    ...rest,
    disabled: disabled ?? false,
    hasAuth: authorized ?? false,
    ...(prompts ? { prompts } : {}),
    ...(resources ? { resources } : {}),
  };
}

/** Core's command kinds in ECA's words: an MCP prompt is `mcpPrompt` (eca-webview `ChatCommands`). */
export function toEcaCommand(c: CommandInfo): ChatCommand {
  // ECA's own spelling (commands.clj `:custom-prompt`, `:skill`, sent as keyword names; eca-emacs
  // eca-chat-context.el `eca-chat--kind->symbol` matches "custom-prompt").
  return { name: c.name, description: c.description, type: c.type === 'mcp-prompt' ? 'mcpPrompt' : c.type, arguments: c.arguments };
}

/**
 * MCP servers a front end brings for one chat (ACP `session/new` and `session/load` `mcpServers`):
 * started beside the configured ones, their tools offered to that chat only, never written to
 * any config file. Protocol-free: a façade turns its own wire shapes into these.
 */

/** A local server the runtime spawns and speaks MCP to over stdio. */
export interface ChatStdioServer {
  name: string;
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** A remote server: Streamable HTTP (`http`, falling back to SSE) or SSE only (`sse`). */
export interface ChatRemoteServer {
  name: string;
  transport: 'http' | 'sse';
  url: string;
  headers: Record<string, string>;
}

export type ChatMcpServer = ChatStdioServer | ChatRemoteServer;

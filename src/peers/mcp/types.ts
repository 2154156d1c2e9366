/**
 * The MCP peer's surface towards the rest of patchbay. MCP servers become internal Tools
 * (ToolRegistry source `mcp:<name>`), Commands (`<server>:<prompt>`, CommandRegistry source
 * `mcp:<name>`) and Contexts (`resource`); nothing outside src/peers/mcp knows MCP.
 */
import type { ResourceContext as McpResourceContext } from '../../shapes/context.js';

export type McpStatus = 'starting' | 'running' | 'stopped' | 'failed' | 'disabled' | 'requires-auth';

/** What `tool/serverUpdated` and `patchbay doctor` show for one server. */
export interface McpServerInfo {
  name: string;
  /** For stdio servers the command; for remote ones the URL. */
  command: string;
  args: string[];
  /** A remote server's URL (Streamable HTTP or SSE). */
  url?: string;
  status: McpStatus;
  tools: Array<{ name: string; description: string; parameters: unknown }>;
  /** The live session's prompts and resources (empty when not running). */
  prompts: Array<{ name: string; description: string; arguments: Array<{ name: string; description: string; required: boolean }> }>;
  resources: Array<{ uri: string; name: string; description: string; mimeType: string }>;
  /** `disabled: true` in its config entry. */
  disabled: boolean;
  /** An OAuth access token is held for it. */
  hasAuth: boolean;
  lastError?: string;
  /** Restarts after failures since the last manual start. */
  restarts: number;
}

export interface McpHostEvents {
  /** Every status or tool-list change of a server. */
  serverUpdated(info: McpServerInfo): void;
  /** A server is no longer configured (its entry was removed) and has stopped. */
  serverRemoved?(name: string): void;
}

export interface McpHost {
  /** Starts every enabled server in parallel; returns at once. */
  startAll(): void;
  /**
   * The configured servers changed (a file was edited, a workspace trusted): new ones start,
   * changed ones restart, removed ones stop. Returns the names of each.
   */
  reconcile(servers: Record<string, unknown>): { added: string[]; changed: string[]; removed: string[] };
  /** `mcp/startServer`: (re)start a stopped, failed or disabled server. */
  start(name: string): Promise<void>;
  /** `mcp/stopServer`: stop it and keep it stopped. */
  stop(name: string): Promise<void>;
  /** `mcp/connectServer`: sign in to a remote server through the browser, then connect. */
  signIn(name: string): Promise<void>;
  /** `mcp/logoutServer`: forget its OAuth credentials and restart it. */
  logout(name: string): Promise<void>;
  /** Deletes the server's stored OAuth credentials (the server is being removed). */
  forgetServerCredentials(name: string): Promise<void>;
  servers(): McpServerInfo[];
  /** Servers configured to start whose first attempt is not over yet (not running, not failed). */
  starting(): string[];
  /** Settles once every server's first start is over (see starting()). */
  firstStarts(): Promise<void>;
  /** Resources (and resource templates) of running servers, as ECA contexts. */
  resources(): McpResourceContext[];
  /** `resources/read` → text for the LLM (blobs described); subscribes when the server can. */
  readResource(ctx: Pick<McpResourceContext, 'server' | 'uri'>, signal: AbortSignal): Promise<string>;
  /** Of these resources, the ones updated (notifications/resources/updated) since last read. */
  updatedSince(resources: Array<Pick<McpResourceContext, 'server' | 'uri'>>): McpResourceContext[];
  /** Servers' `instructions`, for the system prompt. */
  instructions(): string[];
  /** Stop every server and child process. */
  dispose(): Promise<void>;
}

/** The MCP peer: MCP servers as patchbay Tools, Commands and Contexts. */
export { McpHostImpl, type McpHostOptions } from './host.js';
export type { McpHost, McpHostEvents, McpServerInfo, McpStatus } from './types.js';
export { parseServerEntry, type ServerConfig, type StdioServerConfig, type RemoteServerConfig, type ParsedEntry } from './config.js';
export type { RestartPolicy } from './server.js';
export { SKIP as ELICIT_SKIP } from './elicit-form.js';

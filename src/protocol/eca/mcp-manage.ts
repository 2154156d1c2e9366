/**
 * MCP servers managed from the editor's MCP panel (ECA docs/protocol.md "Add MCP Server",
 * "Update MCP Server", "Remove MCP Server", "Disable/Enable MCP server", "Tool server removed").
 * What the plugins send: eca-webview `src/protocol.ts` `McpAddServerRequest`, eca-desktop
 * `src/main/router.ts` (forwards only the fields given), eca-emacs `eca-mcp.el`
 * `eca-mcp--submit-add-server`. A refusal is a result with `error` (ECA `handlers.clj`
 * `mcp-add-server`: code "invalid_request"), which the panels show; a malformed request is −32602.
 */
import { z } from 'zod';
import { toolServerUpdatedSchema } from './lifecycle.js';

const stringMap = z.record(z.string(), z.string());

export const mcpAddServerParamsSchema = z.object({
  /** Checked by the server so a bad name gets ECA's error result, not a protocol error. */
  name: z.string(),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
  url: z.string().optional(),
  headers: stringMap.optional(),
  /** Pre-registered OAuth client (HTTP servers); kept in the entry for MCP OAuth. */
  clientId: z.string().optional(),
  clientSecret: z.string().optional(),
  oauthPort: z.number().int().min(0).max(65535).optional(),
  authScope: z.string().optional(),
  disabled: z.boolean().optional(),
  /** "global" (default): the user config file; "workspace": `<workspaceUri>/.patchbay/config.json`. */
  scope: z.enum(['global', 'workspace']).optional(),
  workspaceUri: z.string().optional(),
});
export type McpAddServerParams = z.infer<typeof mcpAddServerParamsSchema>;

/** ECA's error result: `{code, message, data?}`. */
const manageErrorSchema = z.object({ code: z.string(), message: z.string(), data: z.unknown().optional() });

export const mcpAddServerResultSchema = z.object({ server: toolServerUpdatedSchema.optional(), error: manageErrorSchema.optional() });

export const mcpUpdateServerParamsSchema = z.object({
  name: z.string().min(1),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  url: z.string().optional(),
  env: stringMap.optional(),
  headers: stringMap.optional(),
});
/** ECA answers `{}`; patchbay adds `error` when it changed nothing (clients ignore what they do not know). */
export const mcpUpdateServerResultSchema = z.object({ error: manageErrorSchema.optional() });

export const mcpRemoveServerParamsSchema = z.object({ name: z.string() });
export const mcpRemoveServerResultSchema = z.object({ name: z.string().optional(), removed: z.boolean().optional(), error: manageErrorSchema.optional() });

/** `tool/serverRemoved` (server → client). */
export const toolServerRemovedSchema = z.object({ name: z.string() });

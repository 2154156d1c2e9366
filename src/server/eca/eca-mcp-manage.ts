/**
 * The MCP panel's management methods as ECA answers them (docs/protocol.md "Add MCP Server" …;
 * `src/eca/handlers.clj` `mcp-add-server`, `mcp-update-server`, `mcp-remove-server`): the
 * runtime's McpManager does the work; this turns ECA's params into its terms and its answers
 * into ECA's results (`{server}` / `{name, removed}` / `{}`, or `{error: {code, message}}`).
 */
import type { z } from 'zod';
import type { ECA } from '../../protocol/eca/methods.js';
import type { McpAddServerParams } from '../../protocol/eca/mcp-manage.js';
import type { Workspace } from '../../runtime/workspace.js';
import type { Managed } from '../../runtime/mcp-manage.js';
import { toEcaToolServer } from './eca-tool-servers.js';

type Result<K extends keyof typeof ECA> = (typeof ECA)[K] extends { result: z.ZodType } ? z.input<(typeof ECA)[K]['result']> : never;

/** The fields ECA writes into the new entry, in its order (handlers.clj `mcp-add-server`). */
const ENTRY_KEYS = ['command', 'args', 'env', 'url', 'headers', 'clientId', 'clientSecret', 'oauthPort', 'authScope', 'disabled'] as const;

export async function addServer(s: Workspace, p: McpAddServerParams): Promise<Result<'mcpAddServer'>> {
  const entry: Record<string, unknown> = {};
  for (const k of ENTRY_KEYS) if (p[k] !== undefined) entry[k] = p[k];
  const r = await s.mcpServers.add({ name: p.name, entry, scope: p.scope ?? 'global', ...(p.workspaceUri ? { workspaceUri: p.workspaceUri } : {}) });
  return r.ok ? { server: toEcaToolServer(r.value) } : { error: r.error };
}

export async function updateServer(s: Workspace, p: z.output<(typeof ECA)['mcpUpdateServer']['params']>): Promise<Result<'mcpUpdateServer'>> {
  const { name, ...fields } = p;
  return answer(await s.mcpServers.update(name, fields), () => ({}));
}

export async function removeServer(s: Workspace, name: string): Promise<Result<'mcpRemoveServer'>> {
  return answer(await s.mcpServers.remove(name), (v) => v);
}

/** `mcp/enableServer` / `mcp/disableServer` are notifications: a refusal can only be told (the caller shows it). */
export async function setServerDisabled(s: Workspace, name: string, disabled: boolean): Promise<string | undefined> {
  const r = await s.mcpServers.setDisabled(name, disabled);
  return r.ok ? undefined : `Could not ${disabled ? 'disable' : 'enable'} MCP server "${name}": ${r.error.message}`;
}

function answer<T, R>(r: Managed<T>, ok: (v: T) => R): R | { error: { code: string; message: string } } {
  return r.ok ? ok(r.value) : { error: r.error };
}

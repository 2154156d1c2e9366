/**
 * Which processes a workspace's own config starts run in the OS sandbox (issue 31, "What runs in
 * it"): its hooks and its MCP stdio servers, with the same policy as the chat's commands
 * (./sandbox.ts: the folders writable, the rest read-only, secrets hidden, no network unless
 * `sandbox.network`). The user's own (their config file, `--config-file`, PATCHBAY_CONFIG,
 * initializationOptions) run as they always did: config/origin.ts tells the two apart.
 *
 * Under `auto` where bubblewrap cannot run the plan is `off` and they run as before; with
 * `enabled: true` it is `refuse` and they are not started (core/hooks, peers/mcp say why).
 */
import type { WorkspaceOrigins } from '../config/origin.js';
import type { SandboxPlan } from '../util/sandbox.js';
import type { WorkspaceSandbox } from './sandbox.js';

export interface SpawnSandbox {
  /** A hook's plan, for a chat with these folders; undefined: the user's own hook. */
  hook(name: string, roots: string[]): Promise<SandboxPlan | undefined>;
  /** An MCP server's plan, for the workspace's folders; undefined: the user's own server. */
  mcpServer(name: string): Promise<SandboxPlan | undefined>;
}

export function spawnSandbox(opts: { sandbox: WorkspaceSandbox; origins: () => WorkspaceOrigins | undefined; roots: () => string[] }): SpawnSandbox {
  return {
    hook: async (name, roots) => (opts.origins()?.hooks.includes(name) ? opts.sandbox.plan(roots) : undefined),
    mcpServer: async (name) => (opts.origins()?.mcpServers.includes(name) ? opts.sandbox.plan(opts.roots()) : undefined),
  };
}

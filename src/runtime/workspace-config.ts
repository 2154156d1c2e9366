/**
 * What `initialize` needs before it can answer: the workspace roots and the merged config.
 * Kept apart from workspace.ts so answering `initialize` does not load the store, tools and
 * LLM layers; those load right after the answer (start-up time counts).
 */
import { loadConfig, type LoadConfigResult } from '../config/load.js';
import { serverNameProblem } from '../shapes/tool-names.js';

export interface WorkspaceConfig extends LoadConfigResult {
  roots: string[];
}

export interface WorkspaceConfigOptions {
  /** Absolute workspace folders; none means the current directory. */
  roots: string[];
  env: NodeJS.ProcessEnv;
  /** The front end's own config layer (ECA `initializationOptions`). */
  initializationOptions?: unknown;
  configFile?: string;
}

export function loadWorkspaceConfig(o: WorkspaceConfigOptions): WorkspaceConfig {
  const roots = o.roots.length ? o.roots : [process.cwd()];
  const loaded = loadConfig({ initializationOptions: o.initializationOptions ?? undefined, roots, env: o.env, configFile: o.configFile });
  // An MCP server whose name would make tool names or approval rules ambiguous is not started
  // (peers/mcp/config.ts); the editor hears why with the other config problems.
  for (const name of Object.keys(loaded.config.mcpServers)) {
    const bad = serverNameProblem(name);
    if (bad) loaded.errors.push({ source: 'the merged config', key: `mcpServers.${name}`, message: `the server name ${bad}; the server is not started, rename it` });
  }
  return { roots, ...loaded };
}

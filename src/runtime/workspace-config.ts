/**
 * What `initialize` needs before it can answer: the workspace roots and the merged config.
 * Kept apart from session.ts so answering `initialize` does not load the store, tools and
 * LLM layers; those load right after the answer (start-up time counts).
 */
import { fileURLToPath } from 'node:url';
import { loadConfig, type LoadConfigResult } from '../config/load.js';
import type { InitializeParams } from '../protocol/eca/lifecycle.js';
import { serverNameProblem } from '../shapes/tool-names.js';

export interface SessionConfig extends LoadConfigResult {
  roots: string[];
}

export function loadSessionConfig(params: InitializeParams, env: NodeJS.ProcessEnv, configFile?: string): SessionConfig {
  const roots = rootsOf(params);
  const loaded = loadConfig({ initializationOptions: params.initializationOptions ?? undefined, roots, env, configFile });
  // An MCP server whose name would make tool names or approval rules ambiguous is not started
  // (peers/mcp/config.ts); the editor hears why with the other config problems.
  for (const name of Object.keys(loaded.config.mcpServers)) {
    const bad = serverNameProblem(name);
    if (bad) loaded.errors.push({ source: 'the merged config', key: `mcpServers.${name}`, message: `the server name ${bad}; the server is not started, rename it` });
  }
  return { roots, ...loaded };
}

function rootsOf(params: InitializeParams): string[] {
  const roots = (params.workspaceFolders ?? []).map((f) => (f.uri.startsWith('file:') ? fileURLToPath(f.uri) : f.uri));
  return roots.length ? roots : [process.cwd()];
}

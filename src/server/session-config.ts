/**
 * What `initialize` needs before it can answer: the workspace roots and the merged config.
 * Kept apart from session.ts so answering `initialize` does not load the store, tools and
 * LLM layers; those load right after the answer (start-up time counts).
 */
import { fileURLToPath } from 'node:url';
import { loadConfig, type LoadConfigResult } from '../config/load.js';
import type { InitializeParams } from '../protocol/eca/lifecycle.js';

export interface SessionConfig extends LoadConfigResult {
  roots: string[];
}

export function loadSessionConfig(params: InitializeParams, env: NodeJS.ProcessEnv, configFile?: string): SessionConfig {
  const roots = rootsOf(params);
  return { roots, ...loadConfig({ initializationOptions: params.initializationOptions ?? undefined, roots, env, configFile }) };
}

function rootsOf(params: InitializeParams): string[] {
  const roots = (params.workspaceFolders ?? []).map((f) => (f.uri.startsWith('file:') ? fileURLToPath(f.uri) : f.uri));
  return roots.length ? roots : [process.cwd()];
}

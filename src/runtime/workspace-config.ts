/**
 * What `initialize` needs before it can answer: the workspace roots and the merged config.
 * Kept apart from workspace.ts so answering `initialize` does not load the store, tools and
 * LLM layers; those load right after the answer (start-up time counts).
 */
import { resolve } from 'node:path';
import { loadConfig, userConfigPath, workspaceConfigPath, type LoadConfigResult } from '../config/load.js';
import { PEERS } from '../peers/index.js';
import { readConfigText } from '../config/config-file.js';

export interface WorkspaceConfig extends LoadConfigResult {
  roots: string[];
  /** The config files' contents read just before loading (configFingerprint): what a reload compares with. */
  fingerprint?: string;
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
  // Read before the load: a save in between is then seen as a change by the next reload.
  const fingerprint = configFingerprint(configFiles({ ...o, roots }));
  const loaded = loadConfig({ initializationOptions: o.initializationOptions ?? undefined, roots, env: o.env, configFile: o.configFile });
  // Problems a peer finds in its merged settings (e.g. an MCP server name that would make tool
  // names ambiguous): the front end hears them with the other config problems.
  const config = loaded.config as Record<string, unknown>;
  for (const peer of PEERS) {
    for (const p of peer.checkConfig?.(config) ?? []) loaded.errors.push({ source: 'the merged config', key: p.key, message: p.message });
  }
  return { roots, fingerprint, ...loaded };
}

/** Every config file a workspace reads: the user file (or `--config-file`), then each root's. */
export function configFiles(o: Pick<WorkspaceConfigOptions, 'roots' | 'env' | 'configFile'>): string[] {
  return [o.configFile ? resolve(o.configFile) : userConfigPath(o.env), ...o.roots.map(workspaceConfigPath)];
}

/**
 * The files' contents now (null: absent), as a reload compares them; a file that is refused (no
 * regular file, over the size cap: config/config-file.ts) has no text and says why.
 */
export function configFingerprint(files: string[]): string {
  return JSON.stringify(
    files.map((file) => {
      const r = readConfigText(file);
      return r.kind === 'text' ? { file, text: r.text } : r.kind === 'refused' ? { file, text: null, refused: r.message } : { file, text: null };
    }),
  );
}

/** What the file-based agent features (skills, custom commands) use of the workspace. */
import type { AgentFileKind, AgentFileSource } from '../config/agent-files.js';
import { agentFileSources } from '../config/agent-files.js';
import type { Config } from '../config/schema.js';
import type { CommandRegistry } from '../core/commands.js';
import type { PromptSources } from '../core/prompt-sections.js';
import type { RuntimeBoard } from '../core/runtime-board.js';
import type { ToolRegistry } from '../core/tool-registry.js';

export interface AgentFilesHost {
  /** Read at each use: workspace folders change at run time. */
  roots(): string[];
  /** Read at each use: a config reload replaces it (the `skills` and `commands` keys). */
  config(): Config;
  /** `pureConfig: true` from the editor: the user's own folders are not read (ECA skips its global ones). */
  pureConfig(): boolean;
  env: NodeJS.ProcessEnv;
  homeDir: string;
  board: RuntimeBoard;
  tools: ToolRegistry;
  commands: CommandRegistry;
  prompt: PromptSources;
}

/** Where files of `kind` are read now: the folders of now, the config key of now. */
export function sourcesOf(host: AgentFilesHost, kind: Extract<AgentFileKind, 'skills' | 'commands'>): AgentFileSource[] {
  const sources = agentFileSources(kind, { roots: host.roots(), env: host.env, homeDir: host.homeDir, configPaths: host.config()[kind] ?? [] });
  return host.pureConfig() ? sources.filter((s) => s.scope === 'project' || s.origin.startsWith('config ')) : sources;
}

/** What the file-based agent features (skills, custom commands) use of the workspace. */
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
  env: NodeJS.ProcessEnv;
  homeDir: string;
  board: RuntimeBoard;
  tools: ToolRegistry;
  commands: CommandRegistry;
  prompt: PromptSources;
}

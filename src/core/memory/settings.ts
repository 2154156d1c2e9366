/** The memory settings in effect (config key `memory`, src/config/memory.ts). */
import type { Config } from '../../config/schema.js';

export type WriteMode = 'agent' | 'explicit';

export interface MemorySettings {
  enabled: boolean;
  writeMode: WriteMode;
  maxEntries: number;
  maxTokens: number;
}

/**
 * `writeMode` unset is `agent`; any value but `agent` or `explicit` is `explicit`: a typo must
 * never grant the model more than the user meant (ECA memory.clj `write-mode`).
 */
export function memorySettings(config: Config): MemorySettings {
  const m = config.memory;
  const mode = m?.writeMode ?? 'agent';
  return {
    enabled: m?.enabled === true,
    writeMode: mode === 'agent' || mode === 'explicit' ? mode : 'explicit',
    maxEntries: m?.index?.maxEntries ?? 100,
    maxTokens: m?.index?.maxTokens ?? 2000,
  };
}

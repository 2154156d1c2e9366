/** The lsp peer's settings: the top-level config keys it owns, with their schemas. */
import { z } from 'zod';

/** The top-level config keys this peer owns. */
export const lspConfig = {
  /** `languageServers.<name>`: {command, args?, extensions | languageIds, …}; each entry is validated on its own (config.ts). */
  languageServers: z.record(z.string(), z.unknown()).default({}),
};

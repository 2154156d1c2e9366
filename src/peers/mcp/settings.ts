/** The mcp peer's settings: the top-level config keys it owns, with their schemas. */
import { z } from 'zod';

/** The top-level config keys this peer owns. */
export const mcpConfig = {
  /** `mcpServers.<name>`: each entry is validated on its own (config.ts), so one bad entry stops only that server. */
  mcpServers: z.record(z.string(), z.unknown()).default({}),
  mcpTimeoutSeconds: z.number().positive().default(60),
  /** How long a prompt waits for MCP servers still in their first start, so their tools are offered (0: no wait). */
  mcpStartWaitSeconds: z.number().min(0).default(30),
};

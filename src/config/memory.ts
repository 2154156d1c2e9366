/**
 * The `memory` config key: durable memory, opt-in, as ECA's (docs/config/memory.md). The settings
 * in effect (defaults, a bad `writeMode`) are core/memory/settings.ts.
 */
import { z } from 'zod';

export const memoryConfigSchema = z.object({
  /** Off by default: nothing is read, written, indexed or offered until it is on. */
  enabled: z.boolean().optional(),
  /**
   * `agent`: the model may save technical findings on its own, and writes in the memory folders
   * count as inside the workspace. `explicit`: only when asked, and writes there ask as outside.
   * Any other value is taken as `explicit` (a string, so a typo is not dropped back to `agent`).
   */
  writeMode: z.string().optional(),
  index: z
    .object({
      maxEntries: z.number().int().min(0).optional(),
      maxTokens: z.number().int().min(0).optional(),
    })
    .optional(),
});

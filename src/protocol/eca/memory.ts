/**
 * Durable memory's methods (ECA docs/protocol.md "Durable Memory"): `memory/list` for a memory
 * panel, and `memory/indexLoaded` when the index a chat's turn got changed. Timestamps are Unix
 * epoch milliseconds.
 */
import { z } from 'zod';

/** `memory/list` takes none; whatever a client sends is ignored. */
export const memoryListParamsSchema = z.unknown();

const memoryTierSchema = z.enum(['personal', 'global']);

export const memoryEntrySchema = z.object({
  /** Absolute path: the memory's identity. */
  path: z.string(),
  tier: memoryTierSchema,
  name: z.string(),
  description: z.string(),
  /** `note` when the file names none. */
  type: z.string(),
  tags: z.array(z.string()),
  /** The project folder's name for personal, `global` for global. */
  label: z.string(),
  mtimeMs: z.number(),
});

export const skippedMemoryFileSchema = z.object({ path: z.string(), tier: memoryTierSchema, label: z.string(), reason: z.string() });

/** Grouped by folder (each root's personal one, then global), newest file first in each. */
export const memoryListResultSchema = z.object({ memories: z.array(memoryEntrySchema), skipped: z.array(skippedMemoryFileSchema) });

export const memoryIndexLoadedSchema = z.object({
  chatId: z.string(),
  /** Entries in the index the turn got (within `memory.index` limits). */
  count: z.number().int(),
  /** Valid entries found before the limits. */
  totalCount: z.number().int(),
  items: z.array(z.object({ name: z.string(), type: z.string(), source: z.string(), path: z.string() })),
});

/** The `data.code` of the error `memory/list` answers while memory is off (ECA's code, a string). */
export const MEMORY_DISABLED_CODE = 'memory-disabled';

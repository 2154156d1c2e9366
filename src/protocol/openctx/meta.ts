/**
 * `meta` (specs/openctx-protocol-0.1.md "Meta"), plus the newer fields of `@openctx/protocol`
 * 0.0.19 that current clients rely on: `name` and the `mentions`/`items`/`annotations`
 * capability objects. Loose objects: providers and clients in the wild add keys.
 */
import { z } from 'zod';
import { messageSelectorSchema, selectorSchema } from './selectors.js';

/** Empty for now; unknown keys are tolerated so newer clients keep working. */
export const metaParamsSchema = z.looseObject({});
export type MetaParams = z.infer<typeof metaParamsSchema>;

export const metaResultSchema = z.looseObject({
  /** Human-readable provider name; optional on the wire (patchbay's host always fills it in). */
  name: z.string().optional(),
  /** Spec 0.1: selectors for the whole provider (kept for older clients; used for annotations). */
  selector: z.array(selectorSchema).optional(),
  mentions: z.looseObject({ selectors: z.array(selectorSchema).optional(), label: z.string().optional(), autoInclude: z.boolean().optional() }).optional(),
  items: z.looseObject({ messageSelectors: z.array(messageSelectorSchema).optional() }).optional(),
  annotations: z.looseObject({ selectors: z.array(selectorSchema).optional() }).optional(),
});
export type MetaResult = z.infer<typeof metaResultSchema>;

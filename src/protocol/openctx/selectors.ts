/**
 * OpenCtx selectors (specs/openctx-protocol-0.1.md "Meta": `Selector`; `@openctx/protocol`'s
 * `AnnotationSelector` and `MessageSelector`).
 */
import { z } from 'zod';

export const selectorSchema = z.object({
  path: z.string().optional(),
  contentContains: z.string().optional(),
});
export type Selector = z.infer<typeof selectorSchema>;

/** `items.messageSelectors`: a regular expression matched against the user's message. */
export const messageSelectorSchema = z.object({ pattern: z.string() });
export type MessageSelector = z.infer<typeof messageSelectorSchema>;

/** `annotations` (specs/openctx-protocol-0.1.md "Annotations"). */
import { z } from 'zod';
import { itemSchema } from './items.js';

/** Zero-based, as in LSP. */
export const positionSchema = z.object({ line: z.number().int().nonnegative(), character: z.number().int().nonnegative() });
export type Position = z.infer<typeof positionSchema>;
export const rangeSchema = z.object({ start: positionSchema, end: positionSchema });
export type Range = z.infer<typeof rangeSchema>;

export const annotationSchema = z.looseObject({
  uri: z.string(),
  range: rangeSchema.optional(),
  item: itemSchema,
});
export type Annotation = z.infer<typeof annotationSchema>;

export const annotationsParamsSchema = z.looseObject({
  uri: z.string(),
  content: z.string(),
});
export type AnnotationsParams = z.infer<typeof annotationsParamsSchema>;

export type AnnotationsResult = Annotation[];

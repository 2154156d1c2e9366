/**
 * OpenCtx wire types as zod schemas (spec: specs/openctx-protocol-0.1.md, plus the newer fields of
 * `@openctx/protocol` 0.0.19: `name`, `mentions`/`items`/`annotations` capability objects).
 * Parsing is lenient where providers in the wild are (extra keys pass through), strict where we
 * depend on a field.
 */
import { z } from 'zod';

/** Spec "Selector" / protocol `AnnotationSelector`. */
export const selectorSchema = z.object({
  path: z.string().optional(),
  contentContains: z.string().optional(),
});
export type Selector = z.infer<typeof selectorSchema>;

export const metaResultSchema = z.looseObject({
  name: z.string().optional(),
  /** Spec 0.1: selectors for the whole provider (used for annotations). */
  selector: z.array(selectorSchema).optional(),
  mentions: z.looseObject({ selectors: z.array(selectorSchema).optional(), label: z.string().optional(), autoInclude: z.boolean().optional() }).optional(),
  items: z.looseObject({ messageSelectors: z.array(z.object({ pattern: z.string() })).optional() }).optional(),
  annotations: z.looseObject({ selectors: z.array(selectorSchema).optional() }).optional(),
});
export type MetaResult = z.infer<typeof metaResultSchema>;

export const mentionSchema = z.looseObject({
  title: z.string(),
  description: z.string().optional(),
  uri: z.string().min(1),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type Mention = z.infer<typeof mentionSchema>;

export const itemSchema = z.looseObject({
  title: z.string(),
  url: z.string().optional(),
  ui: z.looseObject({ hover: z.looseObject({ markdown: z.string().optional(), text: z.string().optional() }).optional() }).optional(),
  ai: z.looseObject({ content: z.string().optional() }).optional(),
});
export type Item = z.infer<typeof itemSchema>;

const positionSchema = z.object({ line: z.number().int().nonnegative(), character: z.number().int().nonnegative() });
export type Position = z.infer<typeof positionSchema>;
export const rangeSchema = z.object({ start: positionSchema, end: positionSchema });
export type Range = z.infer<typeof rangeSchema>;

export const annotationSchema = z.looseObject({
  uri: z.string(),
  range: rangeSchema.optional(),
  item: itemSchema,
});
export type Annotation = z.infer<typeof annotationSchema>;

/** HTTP response body (spec "ResponseMessage"). */
export const responseMessageSchema = z.union([
  z.object({ error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }) }),
  z.object({ result: z.unknown() }),
]);

/**
 * Parses a list result element by element: a provider's one bad element is dropped (and
 * reported), never the whole answer.
 */
export function parseList<T>(schema: z.ZodType<T>, raw: unknown, what: string): { values: T[]; dropped: string[] } {
  if (!Array.isArray(raw)) {
    if (raw === null || raw === undefined) return { values: [], dropped: [] };
    throw new Error(`${what}: expected an array, got ${typeof raw}`);
  }
  const values: T[] = [];
  const dropped: string[] = [];
  raw.forEach((el, i) => {
    const r = schema.safeParse(el);
    if (r.success) values.push(r.data);
    else dropped.push(`${what}[${i}]: ${r.error.issues.map((x) => `${x.path.join('.') || 'value'}: ${x.message}`).join('; ')}`);
  });
  return { values, dropped };
}

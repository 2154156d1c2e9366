/**
 * What the OpenCtx client reads from providers: the wire schemas of src/protocol/openctx, plus the
 * client's own rules on top (a mention must carry a URI, since items are asked for by it) and
 * the element-by-element list parsing.
 */
import { z } from 'zod';
import { mentionSchema as wireMentionSchema } from '../../../protocol/openctx/index.js';

export {
  selectorSchema,
  metaResultSchema,
  itemSchema,
  rangeSchema,
  annotationSchema,
  responseMessageSchema,
  type Selector,
  type MetaResult,
  type Item,
  type Position,
  type Range,
  type Annotation,
} from '../../../protocol/openctx/index.js';

/** A mention without a URI cannot be resolved to items later, so the client drops it. */
export const mentionSchema = wireMentionSchema.extend({ uri: z.string().min(1) });
export type Mention = z.infer<typeof mentionSchema>;

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

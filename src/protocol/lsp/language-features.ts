/** Results of the LSP language features patchbay asks for (specs/lsp-3.0.md, sections named per schema). */
import { z } from 'zod';
import { locationLinkSchema, locationSchema, rangeSchema, type Location } from './basic.js';

/** "Goto Definition" result: Location | Location[] | LocationLink[] | null. */
export const definitionResultSchema = z.union([z.null(), locationSchema, z.array(z.union([locationSchema, locationLinkSchema]))]);
export type DefinitionResult = z.infer<typeof definitionResultSchema>;

/** A definition result as plain Locations (a LocationLink points at its selection range). */
export function toLocations(result: DefinitionResult): Location[] {
  if (!result) return [];
  const list = Array.isArray(result) ? result : [result];
  return list.map((l) => ('targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange } : l));
}

/** "Find References" result. */
export const referencesResultSchema = z.union([z.null(), z.array(locationSchema)]);

/** "Hover": MarkedString | MarkedString[] | MarkupContent. */
const markedStringSchema = z.union([z.string(), z.object({ language: z.string(), value: z.string() })]);
export const hoverResultSchema = z.union([
  z.null(),
  z.object({
    contents: z.union([markedStringSchema, z.array(markedStringSchema), z.object({ kind: z.string(), value: z.string() })]),
    range: rangeSchema.optional(),
  }),
]);

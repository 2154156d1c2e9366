/** "Document Symbols" and "Workspace Symbols" (specs/lsp-3.0.md). */
import { z } from 'zod';
import { locationSchema, rangeSchema, type Range } from './basic.js';

/** Written out because the schema is recursive (zod needs the type to type `z.lazy`). */
export interface DocumentSymbol {
  name: string;
  detail?: string;
  kind: number;
  range: Range;
  selectionRange: Range;
  children?: DocumentSymbol[];
}
export const documentSymbolSchema: z.ZodType<DocumentSymbol> = z.lazy(() =>
  z.object({
    name: z.string(),
    detail: z.string().optional().catch(undefined),
    kind: z.number(),
    range: rangeSchema,
    selectionRange: rangeSchema,
    children: z.array(documentSymbolSchema).optional(),
  }),
);

/** "SymbolInformation" (flat, also the workspace/symbol result); 3.17 WorkspaceSymbol may omit the range. */
export const symbolInformationSchema = z.object({
  name: z.string(),
  kind: z.number(),
  containerName: z.string().optional().catch(undefined),
  location: z.union([locationSchema, z.object({ uri: z.string() })]),
});
export type SymbolInformation = z.infer<typeof symbolInformationSchema>;
export const documentSymbolResultSchema = z.union([z.null(), z.array(documentSymbolSchema), z.array(symbolInformationSchema)]);
export const workspaceSymbolResultSchema = z.union([z.null(), z.array(symbolInformationSchema)]);

/** "SymbolKind", indexed by its number. */
export const SYMBOL_KINDS = [
  '',
  'File',
  'Module',
  'Namespace',
  'Package',
  'Class',
  'Method',
  'Property',
  'Field',
  'Constructor',
  'Enum',
  'Interface',
  'Function',
  'Variable',
  'Constant',
  'String',
  'Number',
  'Boolean',
  'Array',
  'Object',
  'Key',
  'Null',
  'EnumMember',
  'Struct',
  'Event',
  'Operator',
  'TypeParameter',
];

export function symbolKindName(kind: number): string {
  return SYMBOL_KINDS[kind] || 'Symbol';
}

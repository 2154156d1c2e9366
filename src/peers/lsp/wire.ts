/**
 * The parts of LSP messages patchbay reads from a language server, as zod schemas, so a server's
 * bad output is a clear error and never a crash (DESIGN "Rules of the house"). Only the fields
 * we use are checked; unknown fields pass. specs/lsp-3.0.md sections named per schema.
 */
import { z } from 'zod';

/** "Position" / "Range": 0-based line, UTF-16 character. */
export const PositionSchema = z.object({ line: z.number().int().min(0), character: z.number().int().min(0) });
export const RangeSchema = z.object({ start: PositionSchema, end: PositionSchema });
export type Range = z.infer<typeof RangeSchema>;

/** "Location" and 3.14 "LocationLink". */
export const LocationSchema = z.object({ uri: z.string(), range: RangeSchema });
export const LocationLinkSchema = z.object({ targetUri: z.string(), targetRange: RangeSchema, targetSelectionRange: RangeSchema });
export type Location = z.infer<typeof LocationSchema>;

/** "Goto Definition" result: Location | Location[] | LocationLink[] | null. */
export const DefinitionResultSchema = z.union([z.null(), LocationSchema, z.array(z.union([LocationSchema, LocationLinkSchema]))]);

export function toLocations(result: z.infer<typeof DefinitionResultSchema>): Location[] {
  if (!result) return [];
  const list = Array.isArray(result) ? result : [result];
  return list.map((l) => ('targetUri' in l ? { uri: l.targetUri, range: l.targetSelectionRange } : l));
}

export const ReferencesResultSchema = z.union([z.null(), z.array(LocationSchema)]);

/** "Hover": MarkedString | MarkedString[] | MarkupContent. */
const MarkedStringSchema = z.union([z.string(), z.object({ language: z.string(), value: z.string() })]);
export const HoverResultSchema = z.union([
  z.null(),
  z.object({
    contents: z.union([MarkedStringSchema, z.array(MarkedStringSchema), z.object({ kind: z.string(), value: z.string() })]),
    range: RangeSchema.optional(),
  }),
]);

export interface DocumentSymbol {
  name: string;
  detail?: string;
  kind: number;
  range: Range;
  selectionRange: Range;
  children?: DocumentSymbol[];
}
export const DocumentSymbolSchema: z.ZodType<DocumentSymbol> = z.lazy(() =>
  z.object({
    name: z.string(),
    detail: z.string().optional().catch(undefined),
    kind: z.number(),
    range: RangeSchema,
    selectionRange: RangeSchema,
    children: z.array(DocumentSymbolSchema).optional(),
  }),
);
/** "SymbolInformation" (flat, also the workspace/symbol result); 3.17 WorkspaceSymbol may omit the range. */
export const SymbolInformationSchema = z.object({
  name: z.string(),
  kind: z.number(),
  containerName: z.string().optional().catch(undefined),
  location: z.union([LocationSchema, z.object({ uri: z.string() })]),
});
export type SymbolInformation = z.infer<typeof SymbolInformationSchema>;
export const DocumentSymbolResultSchema = z.union([z.null(), z.array(DocumentSymbolSchema), z.array(SymbolInformationSchema)]);
export const WorkspaceSymbolResultSchema = z.union([z.null(), z.array(SymbolInformationSchema)]);

/** "PublishDiagnostics Notification". */
export const DiagnosticSchema = z.object({
  range: RangeSchema,
  severity: z.number().int().min(1).max(4).optional(),
  code: z.union([z.string(), z.number()]).optional().catch(undefined),
  source: z.string().optional().catch(undefined),
  message: z.string(),
});
export type Diagnostic = z.infer<typeof DiagnosticSchema>;
export const PublishDiagnosticsSchema = z.object({
  uri: z.string(),
  version: z.number().int().nullable().optional(),
  diagnostics: z.array(DiagnosticSchema),
});
export type PublishDiagnostics = z.infer<typeof PublishDiagnosticsSchema>;

/** 3.17 "Document Diagnostics" (pull) result; we send no previousResultId, so "unchanged" is rare. */
export const DocumentDiagnosticReportSchema = z.union([
  z.object({ kind: z.literal('full'), items: z.array(DiagnosticSchema) }),
  z.object({ kind: z.literal('unchanged') }),
]);

/** The subset of "ServerCapabilities" we act on. */
export const InitializeResultSchema = z.object({
  capabilities: z
    .object({
      textDocumentSync: z
        .union([
          z.number(),
          z.object({ openClose: z.boolean().optional(), change: z.number().optional(), save: z.union([z.boolean(), z.object({ includeText: z.boolean().optional() })]).optional() }),
        ])
        .optional()
        .catch(undefined),
      /** 3.17 pull diagnostics: present when the server answers `textDocument/diagnostic`. */
      diagnosticProvider: z.object({}).loose().optional().catch(undefined),
    })
    .loose(),
});
export type ServerCapabilities = z.infer<typeof InitializeResultSchema>['capabilities'];

export const SYMBOL_KINDS = [
  '', 'File', 'Module', 'Namespace', 'Package', 'Class', 'Method', 'Property', 'Field', 'Constructor', 'Enum',
  'Interface', 'Function', 'Variable', 'Constant', 'String', 'Number', 'Boolean', 'Array', 'Object', 'Key',
  'Null', 'EnumMember', 'Struct', 'Event', 'Operator', 'TypeParameter',
];

export function symbolKindName(kind: number): string {
  return SYMBOL_KINDS[kind] || 'Symbol';
}

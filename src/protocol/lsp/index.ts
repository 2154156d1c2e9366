/** LSP 3.x and Sourcegraph-extension wire types patchbay uses: zod schemas, types inferred. */
export {
  positionSchema,
  rangeSchema,
  locationSchema,
  locationLinkSchema,
  textDocumentIdentifierSchema,
  textDocumentItemSchema,
  textDocumentPositionParamsSchema,
  type Position,
  type Range,
  type Location,
  type LocationLink,
  type TextDocumentIdentifier,
  type TextDocumentItem,
  type TextDocumentPositionParams,
} from './basic.js';
export { definitionResultSchema, referencesResultSchema, hoverResultSchema, toLocations, type DefinitionResult } from './language-features.js';
export {
  documentSymbolSchema,
  symbolInformationSchema,
  documentSymbolResultSchema,
  workspaceSymbolResultSchema,
  SYMBOL_KINDS,
  symbolKindName,
  type DocumentSymbol,
  type SymbolInformation,
} from './symbols.js';
export { diagnosticSchema, publishDiagnosticsSchema, documentDiagnosticReportSchema, type Diagnostic, type PublishDiagnostics, type DocumentDiagnosticReport } from './diagnostics.js';
export { serverCapabilitiesSchema, initializeResultSchema, type ServerCapabilities, type InitializeResult } from './initialize.js';
export {
  symbolDescriptorSchema,
  filesParamsSchema,
  contentParamsSchema,
  cacheGetParamsSchema,
  cacheSetParamsSchema,
  symbolLocationInformationSchema,
  referenceInformationSchema,
  type SymbolDescriptor,
  type FilesParams,
  type ContentParams,
  type CacheGetParams,
  type CacheSetParams,
  type SymbolLocationInformation,
  type ReferenceInformation,
} from './sourcegraph.js';

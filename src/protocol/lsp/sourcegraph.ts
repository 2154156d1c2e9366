/**
 * Sourcegraph's LSP extensions (specs/lsp-sourcegraph-extensions.md): the files, content and
 * cache extensions a server calls on the client, and the SymbolDescriptor requests it may serve.
 */
import { z } from 'zod';
import { locationSchema, textDocumentIdentifierSchema } from './basic.js';

/** Metadata identifying a symbol; the schema is up to each language server. */
export const symbolDescriptorSchema = z.record(z.string(), z.unknown());
export type SymbolDescriptor = z.infer<typeof symbolDescriptorSchema>;

/** `workspace/xfiles` params; the result is `TextDocumentIdentifier[]`. */
export const filesParamsSchema = z.object({ base: z.string().nullish() });
export type FilesParams = z.infer<typeof filesParamsSchema>;

/** `textDocument/xcontent` params; the result is a `TextDocumentItem`. */
export const contentParamsSchema = z.object({ textDocument: textDocumentIdentifierSchema });
export type ContentParams = z.infer<typeof contentParamsSchema>;

/** `xcache/get` (request, result: the value or null) and `xcache/set` (notification). */
export const cacheGetParamsSchema = z.object({ key: z.string() });
export type CacheGetParams = z.infer<typeof cacheGetParamsSchema>;
export const cacheSetParamsSchema = z.object({ key: z.string(), value: z.unknown() });
export type CacheSetParams = z.infer<typeof cacheSetParamsSchema>;

/** Result item of `textDocument/xdefinition`. */
export const symbolLocationInformationSchema = z.object({ symbol: symbolDescriptorSchema, location: locationSchema.optional() });
export type SymbolLocationInformation = z.infer<typeof symbolLocationInformationSchema>;

/** Result item of `workspace/xreferences`. */
export const referenceInformationSchema = z.object({ reference: locationSchema, symbol: symbolDescriptorSchema });
export type ReferenceInformation = z.infer<typeof referenceInformationSchema>;

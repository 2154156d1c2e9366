/**
 * LSP 3.x basic structures (specs/lsp-3.0.md "Basic JSON Structures"). Only the fields patchbay
 * reads are checked; unknown fields pass.
 */
import { z } from 'zod';

/** "Position" / "Range": 0-based line, UTF-16 character. */
export const positionSchema = z.object({ line: z.number().int().min(0), character: z.number().int().min(0) });
export type Position = z.infer<typeof positionSchema>;
export const rangeSchema = z.object({ start: positionSchema, end: positionSchema });
export type Range = z.infer<typeof rangeSchema>;

/** "Location" and 3.14 "LocationLink". */
export const locationSchema = z.object({ uri: z.string(), range: rangeSchema });
export type Location = z.infer<typeof locationSchema>;
export const locationLinkSchema = z.object({ targetUri: z.string(), targetRange: rangeSchema, targetSelectionRange: rangeSchema });
export type LocationLink = z.infer<typeof locationLinkSchema>;

/** "TextDocumentIdentifier", "TextDocumentItem", "TextDocumentPositionParams". */
export const textDocumentIdentifierSchema = z.object({ uri: z.string() });
export type TextDocumentIdentifier = z.infer<typeof textDocumentIdentifierSchema>;
export const textDocumentItemSchema = z.object({ uri: z.string(), languageId: z.string(), version: z.number().int(), text: z.string() });
export type TextDocumentItem = z.infer<typeof textDocumentItemSchema>;
export const textDocumentPositionParamsSchema = z.object({ textDocument: textDocumentIdentifierSchema, position: positionSchema });
export type TextDocumentPositionParams = z.infer<typeof textDocumentPositionParamsSchema>;

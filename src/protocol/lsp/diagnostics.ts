/** "PublishDiagnostics Notification" and 3.17 "Document Diagnostics" (specs/lsp-3.0.md). */
import { z } from 'zod';
import { rangeSchema } from './basic.js';

/** "DiagnosticSeverity": 1 error, 2 warning, 3 information, 4 hint. */
export const diagnosticSchema = z.object({
  range: rangeSchema,
  severity: z.number().int().min(1).max(4).optional(),
  code: z.union([z.string(), z.number()]).optional().catch(undefined),
  source: z.string().optional().catch(undefined),
  message: z.string(),
});
export type Diagnostic = z.infer<typeof diagnosticSchema>;

export const publishDiagnosticsSchema = z.object({
  uri: z.string(),
  version: z.number().int().nullable().optional(),
  diagnostics: z.array(diagnosticSchema),
});
export type PublishDiagnostics = z.infer<typeof publishDiagnosticsSchema>;

/** The pull result; we send no previousResultId, so "unchanged" is rare. */
export const documentDiagnosticReportSchema = z.union([z.object({ kind: z.literal('full'), items: z.array(diagnosticSchema) }), z.object({ kind: z.literal('unchanged') })]);
export type DocumentDiagnosticReport = z.infer<typeof documentDiagnosticReportSchema>;

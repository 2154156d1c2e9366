/**
 * The `initialize` result: the subset of "ServerCapabilities" patchbay acts on, plus the
 * Sourcegraph extension capabilities (specs/lsp-sourcegraph-extensions.md). A capability in a
 * shape we do not understand counts as absent rather than failing the whole handshake.
 */
import { z } from 'zod';

export const serverCapabilitiesSchema = z
  .object({
    textDocumentSync: z
      .union([z.number(), z.object({ openClose: z.boolean().optional(), change: z.number().optional(), save: z.union([z.boolean(), z.object({ includeText: z.boolean().optional() })]).optional() })])
      .optional()
      .catch(undefined),
    /** 3.17 pull diagnostics: present when the server answers `textDocument/diagnostic`. */
    diagnosticProvider: z.object({}).loose().optional().catch(undefined),
    /** Sourcegraph: `textDocument/xdefinition`, `workspace/xreferences`, `workspace/symbol` by descriptor. */
    xdefinitionProvider: z.boolean().optional().catch(undefined),
    xworkspaceReferencesProvider: z.boolean().optional().catch(undefined),
    xworkspaceSymbolByProperties: z.boolean().optional().catch(undefined),
  })
  .loose();
export type ServerCapabilities = z.infer<typeof serverCapabilitiesSchema>;

export const initializeResultSchema = z.object({ capabilities: serverCapabilitiesSchema });
export type InitializeResult = z.infer<typeof initializeResultSchema>;

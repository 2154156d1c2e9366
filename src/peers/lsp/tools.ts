/**
 * The LSP-backed tools. Positions are a 1-based `line` plus a `symbol` on it (models are poor at
 * counting columns), with a 1-based `character` as a fallback. A failing call is a result the
 * model reads, never a throw.
 */
import { workspaceSymbolByDescriptor, xdefinition, xreferences } from './sourcegraph.js';
import { z } from 'zod';
import { textResult, type Tool, type ToolContext, type ToolResult } from '../../shapes/tool.js';
import { errorMessage } from '../../util/log.js';
import { columnToUtf16, lineAt, symbolCharacter } from './documents.js';
import { extensionOf } from './language-ids.js';
import { formatDiagnostic, formatDocumentSymbols, formatLocations, formatWorkspaceSymbols, hoverText, SourceCache } from './format.js';
import type { LspHostImpl } from './host.js';
import { definitionResultSchema, documentSymbolResultSchema, hoverResultSchema, referencesResultSchema, toLocations, workspaceSymbolResultSchema } from '../../protocol/lsp/index.js';

const MAX_RESULTS = 100;

const PositionArgs = z.object({
  path: z.string().min(1).describe('File path, absolute or relative to the workspace root'),
  line: z.number().int().min(1).describe('1-based line number'),
  symbol: z.string().min(1).optional().describe('The identifier on that line to ask about (its first occurrence is used); preferred over character'),
  character: z.number().int().min(1).optional().describe('1-based column, used only when symbol is not given'),
});
type PositionArgs = z.infer<typeof PositionArgs>;

function tool<S extends z.ZodObject>(name: string, description: string, schema: S, run: (args: z.infer<S>, ctx: ToolContext) => Promise<string>, summary: (args: z.infer<S>) => string): Tool {
  return {
    name,
    server: 'patchbay',
    origin: 'native',
    description,
    inputSchema: z.toJSONSchema(schema) as Record<string, unknown>,
    readOnly: true,
    mutates: false,
    // Language-server tools are left out for a small-context model (Tool.smallContext).
    smallContext: false,
    summary: (args) => {
      const parsed = schema.safeParse(args);
      return parsed.success ? summary(parsed.data) : undefined;
    },
    paths: (args) => (typeof args.path === 'string' ? [args.path] : []),
    async call(args, ctx): Promise<ToolResult> {
      const parsed = schema.safeParse(args);
      if (!parsed.success) return textResult(`Invalid arguments: ${z.prettifyError(parsed.error)}`, true);
      try {
        return textResult(await run(parsed.data, ctx));
      } catch (e) {
        return textResult(`${name} failed: ${errorMessage(e)}`, true);
      }
    },
  };
}

export function lspTools(host: LspHostImpl): Tool[] {
  /** Opens the file in its server and turns line + symbol/character into an LSP position. */
  async function at(args: PositionArgs) {
    const abs = host.absolute(args.path);
    const synced = await host.sync(abs, false);
    if (!synced) throw new Error(noServer(abs));
    const lineText = lineAt(synced.text, args.line - 1);
    let character: number;
    if (args.symbol !== undefined) {
      const found = symbolCharacter(lineText, args.symbol);
      if (found === undefined) throw new Error(`"${args.symbol}" does not occur on line ${args.line}: ${JSON.stringify(lineText.trim().slice(0, 200))}`);
      character = found;
    } else if (args.character !== undefined) character = columnToUtf16(lineText, args.character);
    else character = lineText.length - lineText.trimStart().length;
    const params = { textDocument: { uri: synced.uri }, position: { line: args.line - 1, character } };
    return { ...synced, params, cache: new SourceCache((p) => host.display(p)) };
  }

  function noServer(abs: string): string {
    const name = [...host.configured().keys()];
    return `No language server handles ${host.display(abs)} (.${extensionOf(abs)})${name.length ? `; configured: ${name.join(', ')}` : ''}`;
  }

  const where = (a: PositionArgs) => `${a.path}:${a.line}${a.symbol ? ` (${a.symbol})` : ''}`;

  return [
    tool(
      'lsp_diagnostics',
      'Errors and warnings the language servers report, for one file or every file they have seen.',
      z.object({ path: z.string().min(1).optional().describe('File path; omit for all files') }),
      async ({ path }, ctx) => {
        const why = path === undefined ? '' : await host.awaitDiagnostics(path, ctx.signal);
        if (why === false) return noServer(host.absolute(path!));
        if (why) return `Diagnostics for ${path}: not available — ${why}.`;
        const list = host.diagnostics(path);
        // Every file's: a server that could not run has none to give, which is not the same as none found.
        const failed =
          path === undefined
            ? host
                .servers()
                .filter((s) => s.status === 'failed')
                .map((s) => `${s.name} failed: ${s.lastError ?? 'unknown error'}${s.needs ? ` (needs ${s.needs})` : ''}`)
            : [];
        if (!list.length) return [path ? `No diagnostics for ${path}.` : 'No diagnostics.', ...failed].join('\n');
        const cache = new SourceCache((p) => host.display(p));
        const lines = await Promise.all(list.slice(0, MAX_RESULTS).map(async (d) => formatDiagnostic(cache.path(d.uri), d, await cache.text(d.uri))));
        if (list.length > MAX_RESULTS) lines.push(`… and ${list.length - MAX_RESULTS} more`);
        return [...lines, ...failed].join('\n');
      },
      (a) => `Diagnostics${a.path ? ` of ${a.path}` : ''}`,
    ),

    tool(
      'lsp_definition',
      'Where a symbol is defined (go to definition). Give the line and the symbol name on it.',
      PositionArgs,
      async (a, ctx) => {
        const { proc, params, cache } = await at(a);
        const result = definitionResultSchema.parse(await proc.request('textDocument/definition', params, ctx.signal));
        const locations = toLocations(result);
        const found = locations.length ? await formatLocations(cache, locations, MAX_RESULTS) : `No definition found for ${where(a)}.`;
        // A server with the Sourcegraph extension also names the symbol across packages.
        const conn = proc.supports('xdefinition') ? proc.connection() : undefined;
        if (!conn) return found;
        const symbols = await xdefinition(conn, params, ctx.signal, proc.requestTimeoutMs).catch(() => []);
        const described = symbols.map((s) => `Symbol: ${JSON.stringify(s.symbol)}`);
        // A symbol defined elsewhere (another package) is found by its descriptor when the server can.
        if (proc.supports('xworkspaceSymbolByProperties')) {
          for (const s of symbols.filter((x) => !x.location).slice(0, 3)) {
            const hits = await workspaceSymbolByDescriptor(conn, { symbol: s.symbol }, ctx.signal, proc.requestTimeoutMs).catch(() => []);
            const locations = hits.flatMap((h) => (h.location && 'range' in h.location ? [h.location] : []));
            if (locations.length) described.push(`Defined (workspace/symbol by descriptor):\n${await formatLocations(cache, locations, MAX_RESULTS)}`);
          }
        }
        return [found, ...described].join('\n');
      },
      (a) => `Definition of ${where(a)}`,
    ),

    tool(
      'lsp_references',
      'Every reference to a symbol across the project, including its declaration.',
      PositionArgs,
      async (a, ctx) => {
        const { proc, params, cache } = await at(a);
        const result = referencesResultSchema.parse(await proc.request('textDocument/references', { ...params, context: { includeDeclaration: true } }, ctx.signal));
        const found = result?.length ? await formatLocations(cache, result, MAX_RESULTS) : `No references found for ${where(a)}.`;
        // With the Sourcegraph extensions, also ask by SymbolDescriptor (workspace/xreferences).
        const conn = proc.supports('xdefinition') && proc.supports('xreferences') ? proc.connection() : undefined;
        if (!conn) return found;
        const [symbol] = await xdefinition(conn, params, ctx.signal, proc.requestTimeoutMs).catch(() => []);
        if (!symbol) return found;
        // The server matches `package` against node_modules paths only: leave it out for workspace symbols.
        const { package: _pkg, ...query } = symbol.symbol;
        const refs = await xreferences(conn, { query, limit: MAX_RESULTS }, ctx.signal, proc.requestTimeoutMs).catch(() => []);
        if (!refs.length) return found;
        return `${found}\nBy symbol ${JSON.stringify(symbol.symbol)} (workspace/xreferences):\n${await formatLocations(
          cache,
          refs.map((r) => r.reference),
          MAX_RESULTS,
        )}`;
      },
      (a) => `References to ${where(a)}`,
    ),

    tool(
      'lsp_hover',
      'Type information and documentation for a symbol.',
      PositionArgs,
      async (a, ctx) => {
        const { proc, params } = await at(a);
        const result = hoverResultSchema.parse(await proc.request('textDocument/hover', params, ctx.signal));
        const text = result ? hoverText(result.contents).trim() : '';
        return text || `No hover information for ${where(a)}.`;
      },
      (a) => `Hover ${where(a)}`,
    ),

    tool(
      'lsp_document_symbols',
      'Outline of a file: its classes, functions, variables… with their lines.',
      z.object({ path: z.string().min(1).describe('File path, absolute or relative to the workspace root') }),
      async ({ path }, ctx) => {
        const abs = host.absolute(path);
        const synced = await host.sync(abs, false);
        if (!synced) return noServer(abs);
        const result = documentSymbolResultSchema.parse(await synced.proc.request('textDocument/documentSymbol', { textDocument: { uri: synced.uri } }, ctx.signal));
        return result?.length ? formatDocumentSymbols(new SourceCache((p) => host.display(p)), synced.uri, result) : `No symbols in ${path}.`;
      },
      (a) => `Symbols of ${a.path}`,
    ),

    tool(
      'lsp_workspace_symbols',
      'Find classes, functions, types… by name across the whole project.',
      z.object({ query: z.string().describe('Name or part of a name') }),
      async ({ query }, ctx) => {
        if (!host.running().length) await warmUp(host, ctx.signal);
        const procs = host.running();
        if (!procs.length) return 'No language server is running for this workspace.';
        const results = await Promise.allSettled(procs.map((p) => p.request('workspace/symbol', { query }, ctx.signal)));
        const symbols = results.flatMap((r) => (r.status === 'fulfilled' ? (workspaceSymbolResultSchema.parse(r.value) ?? []) : []));
        if (!symbols.length) {
          const failed = results.find((r) => r.status === 'rejected');
          if (failed) throw (failed as PromiseRejectedResult).reason;
          return `No symbols match "${query}".`;
        }
        return formatWorkspaceSymbols(new SourceCache((p) => host.display(p)), symbols, MAX_RESULTS);
      },
      (a) => `Workspace symbols "${a.query}"`,
    ),
  ];
}

/** Workspace queries need a started server that knows the project: open one file of each language found. */
async function warmUp(host: LspHostImpl, signal: AbortSignal): Promise<void> {
  const files = await host.sampleFiles(signal);
  await Promise.all(files.map((f) => host.sync(f, false).catch(() => undefined)));
}

/** `editor_diagnostics`: the editor's diagnostics (LSP and others) for a file or the whole workspace. */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { EditorDiagnostic, Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { displayPath, notice } from '../../../util/fs-util.js';

export const MAX_DIAGNOSTICS = 500;
const severityOrder: Record<EditorDiagnostic['severity'], number> = { error: 0, warning: 1, info: 2, hint: 3 };

export const editorDiagnosticsSchema = z.object({
  path: z.string().min(1).optional().describe('File to get diagnostics for. Default: every file in the workspace.'),
});

export function editorDiagnosticsTool(): Tool {
  return defineNativeTool({
    name: 'editor_diagnostics',
    description: `Return the editor's diagnostics (including those of its language servers) for a file, or for all workspaces when \`path\` is omitted.
Useful to check for errors and warnings after a batch of edits.
Each line is \`path:line:column severity [source] message\`, with 1-based lines and columns.`,
    schema: editorDiagnosticsSchema,
    readOnly: true,
    mutates: false,
    pathArgs: ['path'],
    summary: (a) => (a.path ? `Getting diagnostics for "${a.path}"` : 'Getting diagnostics'),
    async run(args, ctx) {
      const get = ctx.editor.getDiagnostics;
      if (!get) return textResult('The editor provides no diagnostics (it did not declare the capability).', true);
      const abs = args.path ? resolvePath(args.path, ctx.roots) : undefined;
      const uri = abs ? pathToFileURL(abs).href : undefined;
      let diags: EditorDiagnostic[];
      try {
        diags = await abortable(get(uri), ctx.signal);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return textResult(`The editor failed to return diagnostics: ${err instanceof Error ? err.message : String(err)}`, true);
      }
      if (!diags.length) return textResult(abs ? `No diagnostics for ${abs}.` : 'No diagnostics.');
      const sorted = [...diags].sort((a, b) => severityOrder[a.severity] - severityOrder[b.severity]);
      const lines = sorted.slice(0, MAX_DIAGNOSTICS).map((d) => formatDiagnostic(d, ctx.roots));
      if (sorted.length > MAX_DIAGNOSTICS) {
        lines.push(notice(`showing ${MAX_DIAGNOSTICS} of ${sorted.length} diagnostics, most severe first; pass a path to narrow them.`));
      }
      return textResult(lines.join('\n'));
    },
  });
}

/** `path:line:col severity [source] message`, 1-based, as compilers print them. */
export function formatDiagnostic(d: EditorDiagnostic, roots: string[]): string {
  let where = d.uri;
  if (d.uri.startsWith('file:')) {
    try {
      where = displayPath(fileURLToPath(d.uri), roots);
    } catch {
      // Not a local file URI: keep it as it is.
    }
  }
  const source = d.source ? ` [${d.source}${d.code ? ` ${d.code}` : ''}]` : d.code ? ` [${d.code}]` : '';
  const message = d.message.replace(/\r?\n/g, '\n    ');
  return `${where}:${d.range.start.line + 1}:${d.range.start.character + 1} ${d.severity}${source} ${message}`;
}

function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

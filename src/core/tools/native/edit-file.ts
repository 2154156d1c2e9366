/** `edit_file`: replace an exact piece of a file's content. */
import { constants } from 'node:fs';
import { z } from 'zod';
import type { Tool, ToolResult } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { type ContainedFile, openContained, OutsideWorkspaceError, outsideText, recheckPath, writeChecked } from '../../../util/contained.js';
import { checkpointOf } from '../checkpoint.js';
import { fileChange } from '../diff.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { errnoCode, fsErrorText } from '../../../util/fs-util.js';
import { EditorFileError, editorWrites, previewText, readThroughEditor, writeThroughEditor } from './editor-text.js';

export const editFileSchema = z.object({
  path: z.string().min(1).describe('Absolute path of the file to edit (relative paths are taken from the first workspace root).'),
  original_content: z.string().min(1).describe('The exact text to replace, copied verbatim from the file, including whitespace.'),
  new_content: z.string().describe('The replacement text; an empty string deletes original_content.'),
  all_occurrences: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one. Default false.'),
});

type EditArgs = z.infer<typeof editFileSchema>;

export function editFileTool(): Tool {
  return defineNativeTool({
    name: 'edit_file',
    description: `Replace an exact piece of a file's content.

Usage:
- \`path\` should be an absolute path; \`original_content\` and \`new_content\` are required.
- Read the file with read_file first: \`original_content\` must be copied verbatim from it, including whitespace and indentation.
- Exactly one match is required unless \`all_occurrences\` is true; include enough surrounding lines to make the match unique.
- If the edit fails, re-read the file before trying again.
- To delete text, set \`new_content\` to an empty string; to insert, include the original text in \`new_content\`.`,
    schema: editFileSchema,
    readOnly: false,
    mutates: true,
    pathArgs: ['path'],
    summary: (a) => (a.path ? `Editing file "${a.path}"` : 'Editing file'),
    async preview(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      const plan = planEdit(await previewText(ctx, abs), args, abs);
      return 'after' in plan ? fileChange(abs, plan.before, plan.after) : undefined;
    },
    async run(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      const contain = { roots: ctx.roots, confined: ctx.confined, guard: ctx.guardProtected };
      let file: ContainedFile;
      try {
        // Checked on disk first, also when the editor reads and writes it: it is asked only about a
        // file this call could have opened itself.
        file = await openContained(abs, constants.O_RDWR, contain);
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, abs, 'nothing was read or written'), true);
        if (errnoCode(err) === 'EISDIR') return textResult(`${abs} is a directory, not a file.`, true);
        const hint = errnoCode(err) === 'ENOENT' ? ' To create a new file, use write_file.' : '';
        return textResult(`Cannot edit file: ${fsErrorText(err, abs)}.${hint}`, true);
      }
      // A FIFO or a device opened for reading and writing never ends its read (it is its own writer).
      if (!(await file.fh.stat()).isFile()) {
        await file.fh.close().catch(() => undefined);
        return textResult(`Cannot edit file: ${abs} is not a regular file.`, true);
      }
      let before: string;
      let beforeBytes: Buffer;
      let plan: ReturnType<typeof planEdit>;
      try {
        try {
          // Bytes, not text: a rollback restores the file byte for byte (../checkpoint.ts). With
          // the editor's buffer, they are its text: what the edit was made on.
          beforeBytes = await readThroughEditor(ctx, abs, () => file.fh.readFile({ signal: ctx.signal }), contain);
          before = beforeBytes.toString('utf8');
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          if (err instanceof EditorFileError) return textResult(`Cannot edit file: ${err.message}`, true);
          return textResult(`Cannot edit file: ${fsErrorText(err, abs)}.`, true);
        }
        plan = planEdit(before, args, abs);
        if (!('after' in plan)) return plan;
        try {
          ctx.signal.throwIfAborted();
          if (editorWrites(ctx)) {
            // The editor opens the path itself: checked again at the last moment (writeThroughEditor).
            await writeThroughEditor(ctx, abs, plan.after, contain);
          } else {
            await writeChecked(file, plan.after, before);
          }
        } catch (err) {
          if (ctx.signal.aborted) throw err;
          if (err instanceof EditorFileError) return textResult(`Cannot write file: ${err.message}`, true);
          if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, abs, 'nothing was written'), true);
          return textResult(`Cannot write file: ${fsErrorText(err, abs)}`, true);
        }
      } finally {
        await file.fh.close();
      }
      ctx.recordChange?.(checkpointOf(abs, beforeBytes, Buffer.from(plan.after, 'utf8')));
      const details = fileChange(abs, before, plan.after);
      const what = plan.count === 1 ? '1 occurrence' : `${plan.count} occurrences`;
      return {
        error: false,
        outputs: [{ type: 'text', text: `Edited ${abs}: replaced ${what} (+${details.linesAdded} -${details.linesRemoved} lines).` }],
        details,
      };
    },
  });
}

/**
 * The file's content after the edit, or the error result explaining why it cannot be made.
 * When the file uses CRLF line endings and the model wrote plain LF (as it usually does),
 * the match is retried with CRLF.
 */
export function planEdit(before: string, args: EditArgs, abs: string): { before: string; after: string; count: number } | ToolResult {
  let from = args.original_content;
  let to = args.new_content;
  if (from === to) return textResult('original_content and new_content are identical; there is nothing to change.', true);
  let count = occurrences(before, from);
  if (count === 0 && before.includes('\r\n') && !from.includes('\r') && from.includes('\n')) {
    from = from.replace(/\n/g, '\r\n');
    to = to.replace(/\r?\n/g, '\r\n');
    count = occurrences(before, from);
  }
  if (count === 0) {
    return textResult(
      `original_content was not found in ${abs}. It must match the file exactly, including whitespace and indentation. ` +
        'The file may have changed since you read it: re-read it with read_file and try again.',
      true,
    );
  }
  if (count > 1 && !args.all_occurrences) {
    return textResult(`original_content was found ${count} times in ${abs}. Include more surrounding lines to make it unique, ` + 'or set all_occurrences to true to replace every occurrence.', true);
  }
  // split/join and slicing, never String.replace: `$&` and friends in new_content must stay literal.
  const after = args.all_occurrences ? before.split(from).join(to) : before.slice(0, before.indexOf(from)) + to + before.slice(before.indexOf(from) + from.length);
  return { before, after, count: args.all_occurrences ? count : 1 };
}

function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

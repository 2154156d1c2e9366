/** `write_file`: create a file or replace its whole content. */
import { constants } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool, ToolContext, ToolResult } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import {
  type ContainOptions,
  type ContainedFile,
  openContained,
  OutsideWorkspaceError,
  outsideText,
  readContainedBytes,
  recheckPath,
  resolveContained,
  writeChecked,
} from '../../../util/contained.js';
import { checkpointOf } from '../checkpoint.js';
import { fileChange } from '../diff.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { errnoCode, fsErrorText } from '../../../util/fs-util.js';
import { EditorFileError, editorWrites, previewText, readThroughEditor, writeThroughEditor } from './editor-text.js';

const { O_CREAT, O_EXCL, O_RDONLY, O_RDWR } = constants;

export const writeFileSchema = z.object({
  path: z.string().min(1).describe('Absolute path of the file to write (relative paths are taken from the first workspace root).'),
  content: z.string().describe('The full content of the file.'),
});

export function writeFileTool(): Tool {
  return defineNativeTool({
    name: 'write_file',
    description: `Create a new file or completely overwrite an existing one.

Usage:
- \`path\` should be an absolute path.
- \`content\` is the full file content to write.
- Parent directories are created when they do not exist.
- For partial changes to an existing file, prefer edit_file.`,
    schema: writeFileSchema,
    readOnly: false,
    mutates: true,
    pathArgs: ['path'],
    summary: (a) => (a.path ? `Writing file "${a.path}"` : 'Writing file'),
    async preview(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      const before = await currentContent(abs, ctx);
      return before === undefined ? undefined : fileChange(abs, before.text, args.content);
    },
    async run(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      if (editorWrites(ctx)) return writeViaEditor(abs, args.content, ctx);
      let before: { text: string; existed: boolean };
      let beforeBytes: Buffer | null;
      try {
        const file = await openForWrite(abs, { roots: ctx.roots, confined: ctx.confined, mkdirs: true, guard: ctx.guardProtected });
        try {
          const st = await file.fh.stat();
          if (st.isDirectory()) return textResult(`${abs} is a directory; cannot write a file there.`, true);
          // A FIFO or a device opened read-write is its own writer: reading what it held never ends.
          if (!st.isFile()) return textResult(`${abs} is not a regular file; cannot write a file there.`, true);
          // Bytes, not text: a rollback restores the file byte for byte (../checkpoint.ts).
          beforeBytes = file.existed ? await file.fh.readFile() : null;
          before = { text: beforeBytes?.toString('utf8') ?? '', existed: file.existed };
          ctx.signal.throwIfAborted();
          await writeChecked(file, args.content, before.text);
        } finally {
          await file.fh.close();
        }
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, abs, 'nothing was written'), true);
        return textResult(`Cannot write file: ${fsErrorText(err, abs)}`, true);
      }
      return written(abs, beforeBytes, args.content, ctx);
    },
  });
}

/** The result of a write that happened, with its checkpoint recorded. */
function written(abs: string, beforeBytes: Buffer | null, content: string, ctx: ToolContext): ToolResult {
  ctx.recordChange?.(checkpointOf(abs, beforeBytes, Buffer.from(content, 'utf8')));
  const details = fileChange(abs, beforeBytes?.toString('utf8') ?? '', content);
  const verb = beforeBytes !== null ? 'Wrote' : 'Created';
  return {
    error: false,
    outputs: [{ type: 'text', text: `${verb} ${abs} (+${details.linesAdded} -${details.linesRemoved} lines).` }],
    details,
  };
}

/**
 * write_file when the editor writes files: the path is checked on disk as an open would check it
 * (a new file by its folder's real path; missing folders are made here, each checked, as the
 * editor may not make them), the content before comes from the editor's buffer (for the diff and
 * the rollback checkpoint), and the file itself is written by the editor, never by us.
 */
async function writeViaEditor(abs: string, content: string, ctx: ToolContext): Promise<ToolResult> {
  const contain: ContainOptions = { roots: ctx.roots, confined: ctx.confined, guard: ctx.guardProtected };
  let beforeBytes: Buffer | null;
  try {
    const target = await resolveContained(abs, { ...contain, mkdirs: true });
    if (target.kind === 'directory') return textResult(`${abs} is a directory; cannot write a file there.`, true);
    if (target.kind === 'other') return textResult(`Cannot write file: ${abs} is not a regular file.`, true);
    beforeBytes = target.kind === 'missing' ? null : await readThroughEditor(ctx, abs, () => readContainedBytes(abs, contain, ctx.signal), contain);
    ctx.signal.throwIfAborted();
    // Reading through the editor took a round trip: checked again, at the last moment (writeThroughEditor).
    await writeThroughEditor(ctx, abs, content, contain);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (err instanceof EditorFileError) return textResult(`Cannot write file: ${err.message}`, true);
    if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, abs, 'nothing was written'), true);
    return textResult(`Cannot write file: ${fsErrorText(err, abs)}`, true);
  }
  return written(abs, beforeBytes, content, ctx);
}

/**
 * Opens the file for writing without truncating it (the content is replaced only once the open
 * file is proven inside): created when missing, and `existed` tells which.
 */
async function openForWrite(abs: string, opts: ContainOptions): Promise<ContainedFile & { existed: boolean }> {
  try {
    return { ...(await openContained(abs, O_RDWR | O_CREAT | O_EXCL, opts)), existed: false };
  } catch (err) {
    if (errnoCode(err) !== 'EEXIST') throw err;
  }
  // A directory cannot be opened for writing: open it read-only so the caller can say what it is.
  return openContained(abs, O_RDWR, opts)
    .catch((err: unknown) => (errnoCode(err) === 'EISDIR' ? openContained(abs, O_RDONLY, opts) : Promise.reject(err)))
    .then((f) => ({ ...f, existed: true }));
}

/** The file's current text ('' when it does not exist yet), or undefined when `abs` is a directory. */
async function currentContent(abs: string, ctx: ToolContext): Promise<{ text: string; existed: boolean } | undefined> {
  try {
    if ((await stat(abs)).isDirectory()) return undefined;
    return { text: await previewText(ctx, abs), existed: true };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return { text: '', existed: false };
    throw err;
  }
}

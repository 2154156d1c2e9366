/** `read_file`: a text file's content, a window of lines at a time. */
import { constants, createReadStream } from 'node:fs';
import { z } from 'zod';
import type { Tool, ToolResult } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { type ContainedFile, openContained, OutsideWorkspaceError, outsideText, recheckPath } from '../../../util/contained.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { fsErrorText, isBinaryHandle, notice } from '../../../util/fs-util.js';
import { EditorFileError, readThroughEditor } from './editor-text.js';

export const DEFAULT_READ_LINES = 2000;
export const MAX_READ_CHARS = 256 * 1024;
/** Past this size, lines after the shown window are not counted (the notice says "more"). */
const COUNT_REST_MAX_BYTES = 64 * 1024 * 1024;
/**
 * Past this size on disk, the file is streamed from disk even when the editor offers its buffers:
 * such a file is a log or a data dump, not something open in an editor, and the editor's answer
 * would carry all of it in one message.
 */
const EDITOR_READ_MAX_BYTES = COUNT_REST_MAX_BYTES;

export const readFileSchema = z.object({
  path: z.string().min(1).describe('Absolute path of the file to read (relative paths are taken from the first workspace root).'),
  line_offset: z.number().int().min(0).optional().describe('Number of lines to skip from the start of the file (0-based). Default 0.'),
  limit: z.number().int().min(1).optional().describe(`Maximum number of lines to return. Default ${DEFAULT_READ_LINES}.`),
});

const description = `Read a file's current content.

Usage:
- \`path\` should be an absolute path.
- Optional: \`line_offset\` (0-based number of lines to skip) and \`limit\` (maximum lines).
- Returns at most ${DEFAULT_READ_LINES} lines or ${MAX_READ_CHARS / 1024} KB per call; a notice at the end says how to read the rest.
- UTF-8 text only; binary files are refused. Prefer one well-scoped read over many tiny reads.`;

export function readFileTool(): Tool {
  return defineNativeTool({
    name: 'read_file',
    description,
    schema: readFileSchema,
    readOnly: true,
    mutates: false,
    pathArgs: ['path'],
    summary: (a) => (a.path ? `Reading file "${a.path}"` : 'Reading file'),
    async run(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      let file: ContainedFile;
      try {
        file = await openContained(abs, constants.O_RDONLY, { roots: ctx.roots, confined: ctx.confined });
      } catch (err) {
        if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, abs, 'nothing was read'), true);
        return textResult(`Cannot read file: ${fsErrorText(err, abs)}`, true);
      }
      const { fh } = file;
      let handedOver = false;
      try {
        const st = await fh.stat();
        if (st.isDirectory()) return textResult(`${abs} is a directory; use directory_tree to list it.`, true);
        if (await isBinaryHandle(fh)) return textResult(`${abs} is a binary file (${st.size} bytes); read_file only reads text.`, true);
        const offset = args.line_offset ?? 0;
        const limit = args.limit ?? DEFAULT_READ_LINES;
        if (ctx.editor.readTextFile && st.isFile() && st.size <= EDITOR_READ_MAX_BYTES) {
          // The whole text through the editor (its unsaved changes included), windowed here as a
          // disk read is, so the output is the same; a file the editor does not know reads from disk.
          let bytes: Buffer;
          try {
            bytes = await readThroughEditor(ctx, abs, () => fh.readFile({ signal: ctx.signal }), { roots: ctx.roots, confined: ctx.confined });
            // The editor opened the path itself: it must still lead inside.
            await recheckPath(abs, { roots: ctx.roots, confined: ctx.confined });
          } catch (err) {
            if (ctx.signal.aborted) throw err;
            if (err instanceof EditorFileError) return textResult(`Cannot read file: ${err.message}`, true);
            if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, abs, 'nothing was read'), true);
            return textResult(`Cannot read file: ${fsErrorText(err, abs)}`, true);
          }
          return await readWindow(chunksOf(bytes.toString('utf8')), abs, bytes.length, offset, limit);
        }
        handedOver = true;
        const stream = createReadStream('', { fd: fh, start: 0, encoding: 'utf8', highWaterMark: 64 * 1024, signal: ctx.signal });
        return await readWindow(stream as AsyncIterable<string>, abs, st.size, offset, limit);
      } finally {
        // The read stream closes the handle it was given.
        if (!handedOver) await fh.close();
      }
    },
  });
}

/** A text in pieces of the size a disk read streams, for readWindow. */
function* chunksOf(text: string): Generator<string> {
  for (let i = 0; i < text.length; i += CHUNK_CHARS) yield text.slice(i, i + CHUNK_CHARS);
}
const CHUNK_CHARS = 64 * 1024;

/**
 * Goes through the text once (streamed from disk, or the editor's): skips `offset` lines, collects
 * up to `limit` lines or MAX_READ_CHARS, then (for files that are not huge) keeps counting lines so
 * the notice can give a total. Line endings are kept as they are in the file. `size` is in bytes.
 */
async function readWindow(source: AsyncIterable<string> | Iterable<string>, abs: string, size: number, offset: number, limit: number): Promise<ToolResult> {
  let state: 'skip' | 'collect' | 'count' = offset > 0 ? 'skip' : 'collect';
  let lines = 0; // complete lines seen so far
  let collected = 0;
  let chars = 0;
  let cutLine: number | undefined; // 0-based line that was cut mid-way
  let countedAll = true;
  let lastChar = '';
  const out: string[] = [];

  // Leaving the loop early destroys a disk stream (closing its handle).
  read: for await (const chunk of source) {
    lastChar = chunk[chunk.length - 1] ?? lastChar;
    let pos = 0;
    while (pos < chunk.length) {
      if (state === 'skip') {
        const nl = chunk.indexOf('\n', pos);
        if (nl === -1) break;
        pos = nl + 1;
        if (++lines === offset) state = 'collect';
      } else if (state === 'collect') {
        const nl = chunk.indexOf('\n', pos);
        const end = nl === -1 ? chunk.length : nl + 1;
        const piece = chunk.slice(pos, end);
        pos = end;
        if (chars + piece.length > MAX_READ_CHARS) {
          out.push(piece.slice(0, MAX_READ_CHARS - chars));
          cutLine = lines;
          state = 'count';
          if (nl !== -1) lines++;
          continue;
        }
        out.push(piece);
        chars += piece.length;
        if (nl !== -1) {
          lines++;
          if (++collected === limit) state = 'count';
        }
      } else {
        if (size > COUNT_REST_MAX_BYTES) {
          countedAll = false;
          break read;
        }
        for (let i = chunk.indexOf('\n', pos); i !== -1; i = chunk.indexOf('\n', i + 1)) lines++;
        break;
      }
    }
  }
  // A last line without a trailing newline is still a line.
  const total = lines + (size > 0 && lastChar !== '\n' && countedAll ? 1 : 0);
  if (state === 'collect' && lastChar !== '\n' && size > 0 && lines >= offset) collected++;

  if (size === 0) return textResult(notice(`${abs} is empty`));
  if (offset > 0 && offset >= total && countedAll) {
    return textResult(`line_offset ${offset} is past the end of ${abs}, which has ${total} lines.`, true);
  }

  let text = out.join('');
  const first = offset + 1;
  const last = offset + collected + (cutLine !== undefined ? 1 : 0);
  const of = countedAll ? `of ${total}` : 'of more';
  let msg: string | undefined;
  if (cutLine !== undefined) {
    msg =
      `output limit of ${MAX_READ_CHARS / 1024} KB reached in the middle of line ${cutLine + 1}; showing lines ${first}-${last} ${of}. ` +
      (cutLine + 1 < total || !countedAll ? `To continue after that line, call read_file with line_offset=${cutLine + 1}.` : 'That is the last line of the file.');
  } else if (last < total || !countedAll) {
    msg = `showing lines ${first}-${last} ${of}. To read more, call read_file with line_offset=${last}.`;
  }
  if (msg) text += `${text.endsWith('\n') ? '' : '\n'}\n${notice(msg)}`;
  return textResult(text);
}

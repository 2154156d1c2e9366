/**
 * The file tools' text through the editor, when the front end offers it (ACP `fs/read_text_file`,
 * `fs/write_text_file`): what the model reads and edits is the editor's buffer, unsaved changes
 * included, and what it writes lands in the editor, which saves it. Callers check the path on disk
 * first (util/contained.ts); the editor is asked only about what the tool could have opened itself.
 *
 * When the editor fails: a read falls back to disk only when the editor says it does not know the
 * file (ACP's "resource not found", -32002, or an ENOENT): it has no buffer for it and cannot open
 * it, while the file we just checked is there. Any other failure, and every failed write, is a tool
 * error the model reads ("the editor said: …"): writing disk behind the editor's back would leave
 * its buffer and the file disagreeing, and the user would not know which one the model changed.
 *
 * Checkpoints hold the editor's text the change was made on (unsaved changes included); a
 * rollback (../../chat/rollback.ts) restores through disk, as always, and the editor reloads the file.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { ToolContext } from '../../../shapes/tool.js';
import { type ContainOptions, isContained, OutsideWorkspaceError, realRootsOf, recheckPath } from '../../../util/contained.js';
import { isWithin } from '../../../util/paths.js';
import { isTimeout } from '../../../util/deadline.js';

/** The editor answered an error (or its request timed out): `message` is for the model. */
export class EditorFileError extends Error {
  /** `said`: false for a request the editor never answered (its deadline passed). */
  constructor(
    readonly editorMessage: string,
    said = true,
  ) {
    super(said ? `the editor said: ${editorMessage}` : editorMessage);
  }
}

/** An editor's message is echoed to the model; one past this many characters is cut. */
const MAX_MESSAGE_CHARS = 500;
/** ACP `ErrorCode` "resource not found" (the session or file named does not exist). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * The file's bytes: the editor's text (as UTF-8) when it offers reading and knows the file, else
 * what `disk()` reads. Throws EditorFileError for any other failure of the editor; a stop (the
 * signal) is thrown as it came.
 */
export async function readThroughEditor(ctx: ToolContext, path: string, disk: () => Promise<Buffer>, contain?: ContainOptions): Promise<Buffer> {
  const read = ctx.editor.readTextFile;
  if (!read) return disk();
  // As for writes (writeThroughEditor): the editor gets the path resolved at the last moment, so
  // no symlink on the way can redirect its read; callers check again once it answered.
  const sent = contain && contain.confined !== false ? (await editorPath(path, contain)).path : path;
  let text: unknown;
  try {
    text = await read({ path: sent, chatId: ctx.chatId, toolCallId: ctx.toolCallId, signal: ctx.signal });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (notFound(err)) return disk();
    throw new EditorFileError(messageOf(err), !isTimeout(err));
  }
  // The bridge validates the wire; this keeps a bad bridge from handing the model something else.
  if (typeof text !== 'string') throw new EditorFileError('its answer was not text');
  return Buffer.from(text, 'utf8');
}

/**
 * A regular file's bytes. Opened non-blocking and checked on the open file: a plain read of a FIFO
 * waits for a writer forever, and the previewed call (and its turn) with it.
 */
async function regularFile(path: string): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!(await fh.stat()).isFile()) throw new Error(`${path} is not a regular file`);
    return await fh.readFile();
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/**
 * The text a preview diffs against (before approval): the editor's for a file inside the workspace,
 * else the disk's, as before (a path outside is shown, not handed to the editor).
 */
export async function previewText(ctx: ToolContext, path: string): Promise<string> {
  const disk = () => regularFile(path);
  if (!ctx.editor.readTextFile || !(await isContained(path, { roots: ctx.roots, confined: ctx.confined }))) return (await disk()).toString('utf8');
  return (await readThroughEditor(ctx, path, disk)).toString('utf8');
}

/** Whether writes go through the editor (else the tool writes disk as it always has). */
export function editorWrites(ctx: ToolContext): boolean {
  return ctx.editor.writeTextFile !== undefined;
}

/**
 * Writes `content` through the editor; throws EditorFileError when it fails (nothing falls back
 * to disk), OutsideWorkspaceError when the path leads outside (checked with `contain`).
 *
 * The editor opens the file by path, in its own process, so no check of ours can hold at the
 * moment it opens it (issue 28, point 16). What is done instead:
 * - the path is resolved again right before the request (resolveContained's steps: each symlink
 *   on the way followed and checked), and the editor is sent that resolved path (the root's own
 *   prefix kept as the client named it, see editorPath): a symlink inside the workspace that is
 *   swapped after the check cannot redirect the write, because the path sent has none;
 * - after the editor answers, the same resolution must give the same real path: when a folder on
 *   it was swapped for a symlink (or moved) meanwhile, the call reports the write as moved out.
 * The residual window: a real folder on the sent path renamed and replaced by a symlink between
 * this check and the editor's open (one request's trip through the pipe) still redirects that
 * write; it is then reported to the model afterwards, not prevented.
 */
export async function writeThroughEditor(ctx: ToolContext, path: string, content: string, contain: ContainOptions): Promise<void> {
  const write = ctx.editor.writeTextFile;
  if (!write) throw new Error('writeThroughEditor: the editor does not write files');
  const sent = await editorPath(path, contain);
  try {
    await write({ path: sent.path, content, chatId: ctx.chatId, toolCallId: ctx.toolCallId, signal: ctx.signal });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    throw new EditorFileError(messageOf(err), !isTimeout(err));
  }
  if (contain.confined === false) return;
  const after = await recheckPath(sent.path, contain);
  if (after.real !== sent.real) throw new OutsideWorkspaceError(path, true);
}

/**
 * Where the editor is sent to read or write `path`: its real location (checked: throws
 * OutsideWorkspaceError when it leads outside), written under the workspace root as the client
 * named it (a root reached through a symlink of its own, macOS's /tmp, keeps its name, so the
 * editor's buffers still match), and `real` to compare with afterwards.
 */
export async function editorPath(path: string, contain: ContainOptions): Promise<{ path: string; real: string }> {
  const { real } = await recheckPath(path, contain);
  const roots = contain.roots;
  const reals = contain.realRoots ?? (await realRootsOf(roots));
  for (const [i, realRoot] of reals.entries()) if (isWithin(realRoot, real)) return { path: join(roots[i]!, relative(realRoot, real)), real };
  return { path: real, real };
}

function notFound(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === RESOURCE_NOT_FOUND || code === 'ENOENT';
}

function messageOf(err: unknown): string {
  // An Error, or a plain `{ code, message }` object (some JSON-RPC libraries reject with those).
  const message = (err as { message?: unknown } | null)?.message;
  const raw = typeof message === 'string' ? message : typeof err === 'string' ? err : '';
  const flat = raw.replace(/\s+/g, ' ').trim() || 'an error without a message';
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS)}…` : flat;
}

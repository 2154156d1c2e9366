/**
 * A `write_file` or `edit_file` into a memory folder must leave a valid memory file (ECA
 * docs/config/memory.md "Write policy": otherwise the file would vanish from the index without a
 * word). Checked on the content the call would write, before anything reaches disk; the model
 * reads why and can fix the content and try again.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { editFileSchema, planEdit } from '../tools/native/edit-file.js';
import { isWithin, realpathDeepest, resolvePath } from '../../util/paths.js';
import type { MemoryDir } from './dirs.js';
import { memoryContentError } from './files.js';

/** The memory folder `abs` lies in (as written, or once its symlinks are followed), if any. */
export async function inMemoryDir(abs: string, dirs: readonly MemoryDir[]): Promise<boolean> {
  const real = await realpathDeepest(abs).catch(() => abs);
  for (const d of dirs) {
    const realDir = await realpathDeepest(d.dir).catch(() => d.dir);
    if (isWithin(d.dir, abs) || isWithin(realDir, real)) return true;
  }
  return false;
}

/**
 * The text of `abs` when it is a regular file. Opened non-blocking and checked on the open file:
 * a plain read of a FIFO waits for a writer forever, and the call with it.
 */
async function regularFileText(abs: string): Promise<string | undefined> {
  const fh = await open(abs, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
  if (!fh) return undefined;
  try {
    if (!(await fh.stat()).isFile()) return undefined;
    return await fh.readFile('utf8');
  } catch {
    return undefined;
  } finally {
    await fh.close().catch(() => undefined);
  }
}

/** Why this call is refused, or undefined when it may run (not a memory write, or a valid one). */
export async function memoryWriteRefusal(tool: string, args: Record<string, unknown>, roots: string[], dirs: readonly MemoryDir[]): Promise<string | undefined> {
  if (tool !== 'write_file' && tool !== 'edit_file') return undefined;
  if (typeof args.path !== 'string' || !args.path) return undefined;
  let abs: string;
  try {
    abs = resolvePath(args.path, roots);
  } catch {
    return undefined;
  }
  // Only Markdown files are memories; anything else in the folder is the user's business.
  if (!abs.endsWith('.md') || !(await inMemoryDir(abs, dirs))) return undefined;
  let after: string;
  if (tool === 'write_file') {
    if (typeof args.content !== 'string') return undefined;
    after = args.content;
  } else {
    const parsed = editFileSchema.safeParse(args);
    if (!parsed.success) return undefined;
    const before = await regularFileText(abs);
    // The tool itself says why it cannot edit the file.
    if (before === undefined) return undefined;
    const plan = planEdit(before, parsed.data, abs);
    if (!('after' in plan)) return undefined;
    after = plan.after;
  }
  const error = memoryContentError(after);
  return error ? `${error} Nothing was written to ${abs}.` : undefined;
}

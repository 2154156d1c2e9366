/** `move_file`: move or rename a file or directory, never overwriting. */
import { cp, lstat, readFile, rename, rm } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { OutsideWorkspaceError, outsideText, pinParent, type PinnedDir } from '../../../util/contained.js';
import { isWithin, resolvePath } from '../../../util/paths.js';
import { MAX_CHECKPOINT_BYTES, moveCheckpoints } from '../checkpoint.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { errnoCode, fsErrorText } from '../../../util/fs-util.js';

export const moveFileSchema = z.object({
  source: z.string().min(1).describe('Absolute path of the file or directory to move.'),
  destination: z.string().min(1).describe('Absolute path it should have afterwards. Must not exist yet.'),
});

export function moveFileTool(): Tool {
  return defineNativeTool({
    name: 'move_file',
    description: `Move or rename a file or directory.

Usage:
- \`source\` and \`destination\` should be absolute paths.
- Works across directories; missing parent directories of \`destination\` are created.
- Fails if \`destination\` already exists: nothing is ever overwritten.`,
    schema: moveFileSchema,
    readOnly: false,
    mutates: true,
    pathArgs: ['source', 'destination'],
    summary: (a) => (a.source && a.destination ? `Moving "${a.source}" to "${a.destination}"` : 'Moving file'),
    async run(args, ctx) {
      const from = resolvePath(args.source, ctx.roots);
      const to = resolvePath(args.destination, ctx.roots);
      const contain = { roots: ctx.roots, confined: ctx.confined, guard: ctx.guardProtected };
      // Both ends are looked up in their parent directories held open and checked, so a parent
      // flipped to a symlink cannot move anything in from, or out to, outside the workspace.
      const held: PinnedDir[] = [];
      let moved: Buffer | { skipped: string };
      try {
        let src: Awaited<ReturnType<typeof pinParent>>;
        try {
          src = await pinParent(from, contain);
          held.push(src.dir);
          moved = await movedContent(src.at);
        } catch (err) {
          if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, from, 'nothing was moved'), true);
          return textResult(`Cannot move: ${fsErrorText(err, from)}`, true);
        }
        if (
          await lstat(to).then(
            () => true,
            () => false,
          )
        ) {
          return textResult(`Cannot move: destination ${to} already exists. Choose another destination, or move or delete it first.`, true);
        }
        if (from !== to && isWithin(from, to)) return textResult(`Cannot move ${from} into itself (${to}).`, true);
        ctx.signal.throwIfAborted();
        try {
          const dst = await pinParent(to, { ...contain, mkdirs: true });
          held.push(dst.dir);
          if (
            await lstat(dst.at).then(
              () => true,
              () => false,
            )
          ) {
            return textResult(`Cannot move: destination ${to} already exists. Choose another destination, or move or delete it first.`, true);
          }
          await rename(src.at, dst.at).catch(async (err) => {
            if (errnoCode(err) !== 'EXDEV') throw err;
            // Across file systems: copy, then remove the original.
            await cp(src.at, dst.at, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true, verbatimSymlinks: true });
            await rm(src.at, { recursive: true });
          });
        } catch (err) {
          if (err instanceof OutsideWorkspaceError) return textResult(outsideText(err, to, 'nothing was moved'), true);
          return textResult(`Cannot move ${from} to ${to}: ${fsErrorText(err, from)}`, true);
        }
      } finally {
        for (const d of held) await d.close();
      }
      for (const c of moveCheckpoints(from, to, moved)) ctx.recordChange?.(c);
      return textResult(`Moved ${from} to ${to}.`);
    },
  });
}

/** What a rollback needs to undo the move: a regular file's bytes, or why they are not kept. */
async function movedContent(at: string): Promise<Buffer | { skipped: string }> {
  const st = await lstat(at);
  if (!st.isFile()) return { skipped: st.isDirectory() ? 'a moved directory is not checkpointed' : 'only regular files are checkpointed' };
  if (st.size > MAX_CHECKPOINT_BYTES) return { skipped: `it was larger than ${MAX_CHECKPOINT_BYTES / 1024 / 1024} MB when moved` };
  // The move itself needs no read access: a file it cannot read is moved all the same, and a
  // rollback reports it instead of restoring it.
  return readFile(at).catch((e: unknown) => ({ skipped: `it could not be read to keep a copy (${fsErrorText(e, at)})` }));
}

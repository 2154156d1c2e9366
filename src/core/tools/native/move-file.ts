/** `move_file`: move or rename a file or directory, never overwriting. */
import { cp, lstat, mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Tool } from '../../tool.js';
import { textResult } from '../../tool.js';
import { isWithin, resolvePath } from '../paths.js';
import { defineNativeTool } from './define.js';
import { errnoCode, fsErrorText } from './fs-util.js';

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
      try {
        await lstat(from);
      } catch (err) {
        return textResult(`Cannot move: ${fsErrorText(err, from)}`, true);
      }
      if (await lstat(to).then(() => true, () => false)) {
        return textResult(`Cannot move: destination ${to} already exists. Choose another destination, or move or delete it first.`, true);
      }
      if (from !== to && isWithin(from, to)) return textResult(`Cannot move ${from} into itself (${to}).`, true);
      ctx.signal.throwIfAborted();
      try {
        await mkdir(dirname(to), { recursive: true });
        await rename(from, to).catch(async (err) => {
          if (errnoCode(err) !== 'EXDEV') throw err;
          // Across file systems: copy, then remove the original.
          await cp(from, to, { recursive: true, errorOnExist: true, force: false, preserveTimestamps: true, verbatimSymlinks: true });
          await rm(from, { recursive: true });
        });
      } catch (err) {
        return textResult(`Cannot move ${from} to ${to}: ${fsErrorText(err, from)}`, true);
      }
      return textResult(`Moved ${from} to ${to}.`);
    },
  });
}

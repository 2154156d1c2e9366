/** `write_file`: create a file or replace its whole content. */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { Tool } from '../../tool.js';
import { textResult } from '../../tool.js';
import { fileChange } from '../diff.js';
import { resolvePath } from '../paths.js';
import { defineNativeTool } from './define.js';
import { errnoCode, fsErrorText } from './fs-util.js';

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
      const before = await currentContent(abs);
      return before === undefined ? undefined : fileChange(abs, before.text, args.content);
    },
    async run(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      let before: { text: string; existed: boolean } | undefined;
      try {
        before = await currentContent(abs);
        if (!before) return textResult(`${abs} is a directory; cannot write a file there.`, true);
        await mkdir(dirname(abs), { recursive: true });
        await writeFile(abs, args.content, { encoding: 'utf8', signal: ctx.signal });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        return textResult(`Cannot write file: ${fsErrorText(err, abs)}`, true);
      }
      const details = fileChange(abs, before.text, args.content);
      const verb = before.existed ? 'Wrote' : 'Created';
      return {
        error: false,
        outputs: [{ type: 'text', text: `${verb} ${abs} (+${details.linesAdded} -${details.linesRemoved} lines).` }],
        details,
      };
    },
  });
}

/** The file's current text ('' when it does not exist yet), or undefined when `abs` is a directory. */
async function currentContent(abs: string): Promise<{ text: string; existed: boolean } | undefined> {
  try {
    if ((await stat(abs)).isDirectory()) return undefined;
    return { text: await readFile(abs, 'utf8'), existed: true };
  } catch (err) {
    if (errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') return { text: '', existed: false };
    throw err;
  }
}

/** `directory_tree`: a gitignore-aware tree of a directory, breadth-first so a cap cuts the deepest parts. */
import { readlink, stat } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { fsErrorText, notice, plural } from '../../../util/fs-util.js';
import { type Entry, Ignorer, listDirectory } from '../../../util/gitignore.js';

export const DEFAULT_TREE_ENTRIES = 1000;

export const directoryTreeSchema = z.object({
  path: z.string().min(1).describe('Absolute path of the directory to list (relative paths are taken from the first workspace root).'),
  max_depth: z.number().int().min(1).optional().describe('How many levels below `path` to show; 1 lists only its direct entries. Default: no limit.'),
});

interface Node {
  entry: Entry;
  label: string;
  children: Node[];
  /** Entries of this directory not shown because the cap was reached. */
  omitted: number;
}

export function directoryTreeTool(opts: { maxEntries?: number } = {}): Tool {
  const maxEntries = opts.maxEntries ?? DEFAULT_TREE_ENTRIES;
  return defineNativeTool({
    name: 'directory_tree',
    description: `Show a recursive tree of the directories and files under the given path.

Usage:
- \`path\` should be an absolute path.
- Optional: \`max_depth\` to limit how deep the tree goes.
- Entries ignored by .gitignore files, and .git itself, are skipped. Symlinked directories are shown but not entered.
- At most ${maxEntries} entries are shown, shallowest first; a notice says when the tree was cut.`,
    schema: directoryTreeSchema,
    readOnly: true,
    mutates: false,
    pathArgs: ['path'],
    summary: (a) => (a.path ? `Listing directory "${a.path}"` : 'Listing directory'),
    async run(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      try {
        if (!(await stat(abs)).isDirectory()) return textResult(`${abs} is a file, not a directory; use read_file to read it.`, true);
      } catch (err) {
        return textResult(`Cannot list directory: ${fsErrorText(err, abs)}`, true);
      }
      const maxDepth = args.max_depth ?? Infinity;
      const root: Node = { entry: { name: abs, abs, isDir: true, isSymlink: false }, label: abs, children: [], omitted: 0 };
      const queue: { node: Node; depth: number; ignorer: Promise<Ignorer> }[] = [{ node: root, depth: 0, ignorer: Ignorer.forDirectory(abs, ctx.roots) }];
      let shown = 0;
      let dirs = 0;
      let unexpanded = 0;
      let omitted = 0;
      while (queue.length) {
        ctx.signal.throwIfAborted();
        const { node, depth, ignorer } = queue.shift()!;
        if (shown >= maxEntries) {
          unexpanded++;
          continue;
        }
        const ig = await ignorer;
        const entries = await listDirectory(node.entry.abs, ig);
        for (const [i, entry] of entries.entries()) {
          if (shown >= maxEntries) {
            node.omitted = entries.length - i;
            omitted += node.omitted;
            break;
          }
          shown++;
          const child: Node = { entry, label: await labelFor(entry), children: [], omitted: 0 };
          node.children.push(child);
          if (!entry.isDir) continue;
          dirs++;
          if (!entry.isSymlink && depth + 1 < maxDepth) {
            queue.push({ node: child, depth: depth + 1, ignorer: ig.enter(entry.abs) });
          }
        }
      }
      const lines = [`${abs}/`.replace(/\/+$/, '/')];
      render(root, '', lines);
      lines.push('', `${plural(dirs, 'directory', 'directories')}, ${plural(shown - dirs, 'file')}`);
      if (unexpanded || omitted) {
        const parts = [omitted ? `${plural(omitted, 'entry', 'entries')} left out` : '', unexpanded ? `${plural(unexpanded, 'directory', 'directories')} not expanded` : '']
          .filter(Boolean)
          .join(' and ');
        lines.push(notice(`listing capped at ${maxEntries} entries; ${parts}. Call directory_tree on a subdirectory, or with a smaller max_depth.`));
      }
      return textResult(lines.join('\n'));
    },
  });
}

async function labelFor(e: Entry): Promise<string> {
  if (e.isSymlink) {
    const target = await readlink(e.abs).catch(() => '?');
    return `${e.name}${e.isDir ? '/' : ''} -> ${target}`;
  }
  return e.isDir ? `${e.name}/` : e.name;
}

function render(node: Node, prefix: string, lines: string[]): void {
  const n = node.children.length;
  node.children.forEach((child, i) => {
    const last = i === n - 1 && node.omitted === 0;
    lines.push(`${prefix}${last ? '└── ' : '├── '}${child.label}`);
    render(child, prefix + (last ? '    ' : '│   '), lines);
  });
  if (node.omitted) lines.push(`${prefix}└── … ${node.omitted} more`);
}

/**
 * `grep`: regex search over the files under a path, in Node so it works without ripgrep.
 * Files are walked depth-first in name order and read a few at a time, with results
 * consumed in walk order so output is deterministic; the walk stops at `max_results`.
 */
import { constants } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, relative, sep } from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import type { Tool, ToolContext } from '../../../shapes/tool.js';
import { textResult } from '../../../shapes/tool.js';
import { openContained, realRootsOf } from '../../../util/contained.js';
import { resolvePath } from '../../../util/paths.js';
import { defineNativeTool } from '../../../shapes/define-tool.js';
import { displayPath, fsErrorText, looksBinary, notice, plural } from '../../../util/fs-util.js';
import { type Entry, Ignorer, listDirectory } from '../../../util/gitignore.js';

export const DEFAULT_GREP_RESULTS = 200;
export const MAX_GREP_FILE_BYTES = 4 * 1024 * 1024;
const MAX_LINE_CHARS = 400;
const PARALLEL_READS = 8;

export const grepSchema = z.object({
  path: z.string().min(1).describe('Absolute path of the directory (or file) to search.'),
  pattern: z.string().min(1).describe('JavaScript regular expression matched against each line. Start it with (?i) to ignore case.'),
  include: z.string().min(1).optional().describe('Glob selecting the files to search, e.g. "*.ts" or "src/**/*.{ts,js}".'),
  max_results: z.number().int().min(1).optional().describe(`Maximum number of matching lines to return. Default ${DEFAULT_GREP_RESULTS}.`),
});

interface FileHits {
  file: string;
  hits: { line: number; text: string }[];
  skipped?: 'large' | 'binary' | 'unreadable';
}

export function grepTool(): Tool {
  return defineNativeTool({
    name: 'grep',
    description: `Find the lines of files that match a regular expression.

Usage:
- \`path\` should be an absolute path to a directory (or a single file).
- \`pattern\` is a JavaScript regular expression tested against each line; prefix it with (?i) to ignore case.
- Optional: \`include\` glob filter on file names or paths relative to \`path\` (e.g. "*.ts", "**/*.{ts,js}").
- Optional: \`max_results\` limits the number of matching lines (default ${DEFAULT_GREP_RESULTS}).
- Output lines are \`file:line: text\`. Files ignored by .gitignore, binary files and files over ${MAX_GREP_FILE_BYTES / 1024 / 1024} MB are skipped.`,
    schema: grepSchema,
    readOnly: true,
    mutates: false,
    pathArgs: ['path'],
    summary: (a) => (a.pattern ? `Searching for "${a.pattern}"${a.path ? ` in "${a.path}"` : ''}` : 'Searching files'),
    async run(args, ctx) {
      const abs = resolvePath(args.path, ctx.roots);
      let regex: RegExp;
      try {
        regex = compile(args.pattern);
      } catch (err) {
        return textResult(`Invalid regular expression in pattern: ${err instanceof Error ? err.message : String(err)}`, true);
      }
      let isDir: boolean;
      try {
        isDir = (await stat(abs)).isDirectory();
      } catch (err) {
        return textResult(`Cannot search: ${fsErrorText(err, abs)}`, true);
      }
      const max = args.max_results ?? DEFAULT_GREP_RESULTS;
      const include = args.include ? includeMatcher(args.include, abs) : () => true;
      const files = isDir ? walkFiles(abs, await Ignorer.forDirectory(abs, ctx.roots), ctx.signal) : single(abs);

      const out: string[] = [];
      let searched = 0;
      let large = 0;
      let capped = false;
      const take = (r: FileHits): boolean => {
        if (r.skipped === 'large') large++;
        if (!r.skipped) searched++;
        const shown = displayPath(r.file, ctx.roots);
        for (const h of r.hits) {
          if (out.length >= max) {
            capped = true;
            return false;
          }
          out.push(`${shown}:${h.line}: ${h.text}`);
        }
        return true;
      };
      const pending: Promise<FileHits>[] = [];
      let more = true;
      // Resolved once for the whole walk, not once per file.
      const realRoots = await realRootsOf(ctx.roots);
      for await (const file of files) {
        if (!include(file)) continue;
        // One hit more than needed, so that reaching the cap is told apart from ending on it.
        pending.push(searchFile(file, regex, max + 1, ctx, realRoots));
        if (pending.length >= PARALLEL_READS && !take(await pending.shift()!)) {
          more = false;
          break;
        }
      }
      while (more && pending.length) more = take(await pending.shift()!);
      ctx.signal.throwIfAborted();

      const notes: string[] = [];
      if (capped) notes.push(`stopped after ${max} matches; there may be more. Narrow the pattern or include, or raise max_results.`);
      if (large) notes.push(`${plural(large, 'file')} over ${MAX_GREP_FILE_BYTES / 1024 / 1024} MB skipped.`);
      const tail = notes.map(notice).join('\n');
      if (!out.length) {
        const text = `No matches for /${args.pattern}/ in ${plural(searched, 'file')} under ${abs}.`;
        return textResult(tail ? `${text}\n${tail}` : text);
      }
      return textResult(tail ? `${out.join('\n')}\n\n${tail}` : out.join('\n'));
    },
  });
}

/** A JS RegExp, accepting a leading `(?i)` (as ripgrep and most LLMs write it) for case-insensitivity. */
export function compile(pattern: string): RegExp {
  return pattern.startsWith('(?i)') ? new RegExp(pattern.slice(4), 'i') : new RegExp(pattern);
}

/** `include` matches either the file's name or its path relative to the search root. */
function includeMatcher(glob: string, root: string): (abs: string) => boolean {
  const isMatch = picomatch(glob, { dot: true });
  return (abs) => {
    const rel = relative(root, abs);
    return isMatch(basename(abs)) || isMatch(sep === '/' ? rel : rel.split(sep).join('/'));
  };
}

async function* single(abs: string): AsyncGenerator<string> {
  yield abs;
}

/** Files under `dir`, depth-first in name order; symlinks are not followed (as in ripgrep). */
async function* walkFiles(dir: string, ignorer: Ignorer, signal: AbortSignal): AsyncGenerator<string> {
  const entries: Entry[] = await listDirectory(dir, ignorer);
  for (const e of entries) {
    signal.throwIfAborted();
    if (e.isSymlink) continue;
    if (e.isDir) yield* walkFiles(e.abs, await ignorer.enter(e.abs), signal);
    else yield e.abs;
  }
}

async function searchFile(file: string, regex: RegExp, max: number, ctx: ToolContext, realRoots: readonly string[]): Promise<FileHits> {
  try {
    // Opened through the containment check: a folder flipped to a symlink mid-walk must not
    // make grep read files outside the workspace.
    const { fh } = await openContained(file, constants.O_RDONLY | constants.O_NONBLOCK, { roots: ctx.roots, confined: ctx.confined, realRoots });
    let buf: Buffer;
    try {
      if ((await fh.stat()).size > MAX_GREP_FILE_BYTES) return { file, hits: [], skipped: 'large' };
      buf = await fh.readFile({ signal: ctx.signal });
    } finally {
      await fh.close();
    }
    if (looksBinary(buf)) return { file, hits: [], skipped: 'binary' };
    const hits: FileHits['hits'] = [];
    const lines = buf.toString('utf8').split('\n');
    for (let i = 0; i < lines.length && hits.length < max; i++) {
      let line = lines[i];
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (regex.test(line)) hits.push({ line: i + 1, text: line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line });
    }
    return { file, hits };
  } catch {
    return { file, hits: [], skipped: 'unreadable' };
  }
}

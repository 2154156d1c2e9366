/**
 * `.gitignore` files, parsed and applied in one place: the file tools that walk directories
 * (`Ignorer`, `listDirectory`: `directory_tree`, `grep`), the context walk (core/context/walk.ts)
 * and the LSP peer's `workspace/xfiles` (peers/lsp/sourcegraph.ts) all parse with
 * `parseGitignore` and decide with `ignoredBy`. Each directory's `.gitignore` applies to paths
 * below it, and a deeper file overrides a shallower one (a negation re-includes), as in git.
 * `.git` itself is always skipped by `listDirectory`. Reading the files stays with each caller
 * (async, sync, capped, or an editor's unsaved buffer first).
 */
import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { isWithin } from './paths.js';

/** The name git reads in each directory. */
export const GITIGNORE = '.gitignore';

/** One `.gitignore` file's rules. */
export type ParsedGitignore = Ignore;

/** The rules of one `.gitignore` file's text. */
export function parseGitignore(text: string): ParsedGitignore {
  return ignore().add(text);
}

/**
 * Whether a path is ignored by a chain of `.gitignore` files, shallowest first, each given with
 * the path as seen from its own folder (`/`-separated; a directory ends in `/`): a later (deeper)
 * file that matches decides, so a negation there re-includes what a shallower one ignored.
 */
export function ignoredBy(chain: Iterable<readonly [ParsedGitignore, string]>): boolean {
  let ignored = false;
  for (const [rules, path] of chain) {
    const r = rules.test(path);
    if (r.ignored) ignored = true;
    else if (r.unignored) ignored = false;
  }
  return ignored;
}

interface Layer {
  dir: string;
  ig: Ignore;
}

export class Ignorer {
  private constructor(private readonly layers: readonly Layer[]) {}

  /**
   * The rules in force for `dir`: the `.gitignore` files from the repository (or workspace)
   * root down to `dir`. The root is the workspace root containing `dir`, else the nearest
   * ancestor holding `.git`, else `dir` itself. When `dir` is itself ignored, the caller asked
   * for it explicitly: only the rules inside it apply.
   */
  static async forDirectory(dir: string, roots: string[]): Promise<Ignorer> {
    const base = roots.find((r) => isWithin(r, dir)) ?? (await findGitRoot(dir)) ?? dir;
    const chain: string[] = [];
    for (let d = dir; ; d = dirname(d)) {
      chain.unshift(d);
      if (d === base || dirname(d) === d) break;
    }
    let ignorer = new Ignorer([]);
    for (const d of chain) ignorer = await ignorer.enter(d);
    return ignorer.ignores(dir, true) ? new Ignorer([]).enter(dir) : ignorer;
  }

  /** The rules for the child directory `dir`, adding its `.gitignore` if it has one. */
  async enter(dir: string): Promise<Ignorer> {
    let text: string;
    try {
      text = await readFile(join(dir, GITIGNORE), 'utf8');
    } catch {
      return this;
    }
    return new Ignorer([...this.layers, { dir, ig: parseGitignore(text) }]);
  }

  ignores(abs: string, isDir: boolean): boolean {
    return ignoredBy(
      this.layers.flatMap(({ dir, ig }): Array<[Ignore, string]> => {
        let rel = relative(dir, abs);
        if (rel === '' || rel.startsWith('..')) return [];
        if (sep !== '/') rel = rel.split(sep).join('/');
        return [[ig, isDir ? `${rel}/` : rel]];
      }),
    );
  }
}

export interface Entry {
  name: string;
  abs: string;
  isDir: boolean;
  isSymlink: boolean;
}

/**
 * The entries of `dir` that are not ignored, sorted by name. Symlinks are reported but marked,
 * so that walkers never descend through them (no cycles, no escapes).
 */
export async function listDirectory(dir: string, ignorer: Ignorer): Promise<Entry[]> {
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: Entry[] = [];
  for (const d of dirents) {
    if (d.name === '.git') continue;
    const abs = join(dir, d.name);
    const isSymlink = d.isSymbolicLink();
    let isDir = d.isDirectory();
    if (isSymlink)
      isDir = await stat(abs).then(
        (s) => s.isDirectory(),
        () => false,
      );
    if (ignorer.ignores(abs, isDir)) continue;
    out.push({ name: d.name, abs, isDir, isSymlink });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function findGitRoot(dir: string): Promise<string | undefined> {
  for (let d = dir; ; d = dirname(d)) {
    if (
      await stat(join(d, '.git')).then(
        () => true,
        () => false,
      )
    )
      return d;
    if (dirname(d) === d) return undefined;
  }
}

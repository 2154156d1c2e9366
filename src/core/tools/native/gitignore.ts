/**
 * `.gitignore` handling for the tools that walk directories. Each directory's `.gitignore`
 * applies to paths below it, and a deeper file overrides a shallower one, as in git.
 * `.git` itself is always skipped.
 */
import type { Dirent } from 'node:fs';
import { readFile, readdir, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { isWithin } from '../../../util/paths.js';

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
      text = await readFile(join(dir, '.gitignore'), 'utf8');
    } catch {
      return this;
    }
    return new Ignorer([...this.layers, { dir, ig: ignore().add(text) }]);
  }

  ignores(abs: string, isDir: boolean): boolean {
    let ignored = false;
    for (const { dir, ig } of this.layers) {
      let rel = relative(dir, abs);
      if (rel === '' || rel.startsWith('..')) continue;
      if (sep !== '/') rel = rel.split(sep).join('/');
      const r = ig.test(isDir ? `${rel}/` : rel);
      if (r.ignored) ignored = true;
      else if (r.unignored) ignored = false;
    }
    return ignored;
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

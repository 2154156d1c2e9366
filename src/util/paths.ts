/**
 * Turning the paths an LLM gives into absolute paths, and deciding whether they stay inside
 * the workspace. The approval logic asks the user for any call whose path is outside, so
 * `isInsideWorkspace` errs towards "outside": symlinks are followed, and anything it cannot
 * prove to be inside is outside. This judges paths before a call runs; what a file tool really
 * opens is checked again, with no window, by contained.ts.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute, normalized form of `raw`: `~` is the home directory, `file:` URIs are accepted,
 * and relative paths are taken from the first workspace root (or the process cwd when there is none).
 */
export function resolvePath(raw: string, roots: string[]): string {
  let p = raw;
  if (p.startsWith('file:')) p = fileURLToPath(p);
  else if (p === '~' || p.startsWith('~/') || (process.platform === 'win32' && p.startsWith('~\\'))) {
    p = join(homedir(), p.slice(1));
  }
  return isAbsolute(p) ? resolve(p) : resolve(roots[0] ?? process.cwd(), p);
}

/**
 * True when `child` is `parent` or lies below it (both absolute), by their names only (no
 * symlinks followed: `isInsideWorkspace` does that). The one inside-a-folder check: a child
 * named `..foo` is inside, `..` and `../x` are not.
 */
export function isWithin(parent: string, child: string): boolean {
  const rel = relative(fold(parent), fold(child));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Whether `absPath` — which need not exist yet — really lies inside one of `roots`, after
 * following every symlink along the way (including a dangling one at the end, which a write
 * would follow).
 */
export async function isInsideWorkspace(absPath: string, roots: string[]): Promise<boolean> {
  if (roots.length === 0) return false;
  let real: string;
  try {
    real = await realpathDeepest(resolve(absPath));
  } catch {
    return false;
  }
  for (const root of roots) {
    const realRoot = await realpath(resolve(root)).catch(() => resolve(root));
    if (isWithin(realRoot, real)) return true;
  }
  return false;
}

/** Case-insensitive file systems are the default on Windows; compare there without case. */
function fold(p: string): string {
  return process.platform === 'win32' ? p.toLowerCase() : p;
}

/**
 * The real path of `p`: the realpath of its deepest existing ancestor joined with the part that
 * does not exist yet. A dangling symlink is followed to its target.
 */
export async function realpathDeepest(p: string, hops = 0): Promise<string> {
  if (hops > 40) throw new Error('too many levels of symbolic links');
  const missing: string[] = [];
  let cur = p;
  for (;;) {
    try {
      const real = await realpath(cur);
      return missing.length ? join(real, ...missing.reverse()) : real;
    } catch {
      // Either cur does not exist, or it is (or passes through) a dangling symlink.
    }
    const st = await lstat(cur).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      const target = resolve(dirname(cur), await readlink(cur));
      return realpathDeepest(missing.length ? join(target, ...[...missing].reverse()) : target, hops + 1);
    }
    const parent = dirname(cur);
    if (parent === cur) return p;
    missing.push(basename(cur));
    cur = parent;
  }
}

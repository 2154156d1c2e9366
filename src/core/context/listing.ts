/**
 * One way to ask "which files does this folder hold?": `git ls-files` inside a git work tree,
 * a gitignore-aware walk elsewhere. A folder git reports as empty (say, a workspace that the
 * enclosing repository ignores) is walked instead.
 */
import { gitListFiles, gitListFilesSync } from './git.js';
import { walkAsync, walkSync, type WalkOptions } from './walk.js';

export type ListingMode = 'git' | 'walk';
export interface Listing {
  /** Relative to the listed folder, `/`-separated. */
  files: string[];
  mode: ListingMode;
}

export interface ListOptions extends WalkOptions {
  signal?: AbortSignal;
  /** Skip git and walk (tests, and callers that know better). */
  useGit?: boolean;
}

export async function listFiles(dir: string, opts: ListOptions = {}): Promise<Listing> {
  if (opts.useGit !== false) {
    const files = await gitListFiles(dir, opts.signal);
    if (files && files.length > 0) return { files: cap(files, opts.maxFiles), mode: 'git' };
  }
  return { files: await walkAsync(dir, opts), mode: 'walk' };
}

export function listFilesSync(dir: string, opts: ListOptions = {}): Listing {
  if (opts.useGit !== false) {
    const files = gitListFilesSync(dir);
    if (files && files.length > 0) return { files: cap(files, opts.maxFiles), mode: 'git' };
  }
  return { files: walkSync(dir, opts), mode: 'walk' };
}

function cap(files: string[], max: number | undefined): string[] {
  return max !== undefined && files.length > max ? files.slice(0, max) : files;
}

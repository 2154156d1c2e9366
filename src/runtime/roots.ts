/**
 * Workspace folders added and removed at run time (an editor's `workspace/didChangeWorkspaceFolders`):
 * which of the requested changes apply, and why the others do not. As in ECA's
 * `workspace-did-change-folders` (src/eca/handlers.clj), removals go first, then additions are
 * appended in order; unlike it, a request that would make no sense is refused entry by entry
 * with a warning, so the folders stay a set of existing directories and never become empty.
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';

export interface RootsRequest {
  added: string[];
  removed: string[];
}

export interface RootsPlan {
  /** The folders after the change, in order: the kept ones first, then the added ones. */
  roots: string[];
  added: string[];
  removed: string[];
  /** One line per entry that was not applied, saying why. */
  warnings: string[];
}

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** Applies `req` to `current` (absolute paths); `exists` is swappable for tests. */
export function planRootsChange(current: readonly string[], req: RootsRequest, exists: (path: string) => boolean = isDirectory): RootsPlan {
  const roots = current.map((r) => resolve(r));
  const warnings: string[] = [];
  const removed: string[] = [];
  for (const raw of req.removed) {
    const path = resolve(raw);
    const at = roots.indexOf(path);
    if (at < 0) warnings.push(`cannot remove workspace folder ${path}: it is not one of the workspace folders (${roots.join(', ')})`);
    else {
      roots.splice(at, 1);
      removed.push(path);
    }
  }
  const added: string[] = [];
  for (const raw of req.added) {
    const path = resolve(raw);
    if (roots.includes(path)) warnings.push(`workspace folder ${path} is already open; added once only`);
    else if (!exists(path)) warnings.push(`cannot add workspace folder ${path}: no such directory`);
    else {
      roots.push(path);
      added.push(path);
    }
  }
  // Relative paths and shell commands need a default folder (the Emacs plugin refuses too).
  if (!roots.length) {
    for (const path of removed) warnings.push(`cannot remove workspace folder ${path}: it is the last one`);
    return { roots: current.map((r) => resolve(r)), added: [], removed: [], warnings };
  }
  // Removed and added back in the same change: it stays, and its peers need not let go of it.
  const back = new Set(added.filter((a) => removed.includes(a)));
  return { roots, added: added.filter((a) => !back.has(a)), removed: removed.filter((r) => !back.has(r)), warnings };
}

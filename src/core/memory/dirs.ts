/**
 * Where durable memory lives (ECA docs/config/memory.md "Two tiers"): under
 * `<XDG_CONFIG_HOME or ~/.config>/patchbay/memory/`, one personal folder per project
 * (`projects/<slug>-<hash>/`) and one `global/` folder for every project.
 *
 * A project is named by its canonical folder: the real path, and for a linked git worktree the
 * main worktree's folder (its `.git` file names a gitdir whose `commondir` is the main `.git`),
 * so every worktree of a repository shares one memory.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { userConfigDir } from '../../util/locations.js';

export type MemoryTier = 'personal' | 'global';

export interface MemoryDir {
  /** Absolute folder. */
  dir: string;
  tier: MemoryTier;
  /** What the index and `memory/list` call it: the project folder's name, or `global`. */
  label: string;
}

/** The root of all memory: `<user config dir>/memory`. */
export function memoryRoot(env: NodeJS.ProcessEnv, homeDir?: string): string {
  return join(userConfigDir(env, homeDir), 'memory');
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

/**
 * The folder a workspace root stands for: its real path, or for a linked worktree the main
 * worktree's. A `.git` that cannot be read leaves the root as it is, and so does one git would
 * not take for a linked worktree: the folder's `.git` file is anyone's to write (an archive), so
 * it counts only when the repository lists it, as `git worktree add` does (the gitdir lies in
 * `<common>/worktrees/`, and its `gitdir` file names this folder's `.git`). Otherwise a folder
 * could claim another project's memory, reading and writing its notes.
 */
export function canonicalProject(root: string): string {
  const folder = real(root);
  try {
    const dotGit = join(folder, '.git');
    if (!statSync(dotGit).isFile()) return folder;
    const line = /^gitdir:\s*(.+?)\s*$/m.exec(smallFile(dotGit) ?? '');
    if (!line) return folder;
    const gitdir = resolve(folder, line[1]!);
    const common = smallFile(join(gitdir, 'commondir'))?.trim();
    if (!common) return folder;
    const commonDir = real(isAbsolute(common) ? common : resolve(gitdir, common));
    if (real(dirname(gitdir)) !== join(commonDir, 'worktrees')) return folder;
    const back = smallFile(join(gitdir, 'gitdir'))?.trim();
    if (!back || real(resolve(gitdir, back)) !== real(dotGit)) return folder;
    // The main worktree holds its repository in `<main>/.git`; a bare repository has no worktree to name.
    return basename(commonDir) === '.git' ? dirname(commonDir) : folder;
  } catch {
    return folder;
  }
}

const MAX_READABLE = 64;

/** A `.git` file and a `commondir` hold one path: more than this is no git file. */
const MAX_GIT_FILE = 4096;

/**
 * The text of a small regular file, or undefined. The folder may be anyone's (an archive): a FIFO
 * must not block the open (O_NONBLOCK, and only a regular file is read), nor a link to
 * /dev/zero read forever (at most MAX_GIT_FILE bytes). Synchronous: the slug is needed at once.
 */
function smallFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_GIT_FILE) return undefined;
    const buf = Buffer.alloc(MAX_GIT_FILE);
    const n = readSync(fd, buf, 0, MAX_GIT_FILE, 0);
    return buf.subarray(0, n).toString('utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** `home-me-src-app-1a2b3c4d`: a readable slug of the canonical folder and 8 hex of its sha256. */
export function projectSlug(root: string): string {
  const canonical = canonicalProject(root);
  const hash = createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 8);
  const readable = canonical
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, MAX_READABLE)
    .replace(/-+$/, '');
  return readable ? `${readable}-${hash}` : hash;
}

/** A chat's memory folders: each root's personal folder (in root order), then the global one. */
export function memoryDirs(roots: readonly string[], env: NodeJS.ProcessEnv, homeDir?: string): MemoryDir[] {
  const base = memoryRoot(env, homeDir);
  const seen = new Set<string>();
  const dirs: MemoryDir[] = [];
  for (const root of roots) {
    const dir = join(base, 'projects', projectSlug(root));
    // Two worktrees of one repository open together share one folder: listed once.
    if (seen.has(dir)) continue;
    seen.add(dir);
    dirs.push({ dir, tier: 'personal', label: basename(canonicalProject(root)) || canonicalProject(root) });
  }
  dirs.push({ dir: join(base, 'global'), tier: 'global', label: 'global' });
  return dirs;
}

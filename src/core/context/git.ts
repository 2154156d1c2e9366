/**
 * The workspace's files as git sees them: tracked plus untracked-but-not-ignored, minus files
 * deleted from the work tree. Run without a shell; `undefined` means "not a git work tree (or no
 * git)", and callers fall back to a walk.
 */
import { spawn, spawnSync, type SpawnSyncOptionsWithBufferEncoding } from 'node:child_process';

/**
 * A workspace folder is not trusted code: its own `.git/config` may name programs git runs.
 * `core.fsmonitor` is run by `ls-files` (a hook that lists changed files), so it is switched off
 * here, before anyone has trusted the folder. Nothing else `ls-files` reads from config runs a
 * program (`diff.external`, textconv and hooks belong to other commands).
 */
const SAFE = ['-c', 'core.fsmonitor=false', '-c', 'core.quotepath=off'];
const LS_FILES = [...SAFE, 'ls-files', '--cached', '--others', '--exclude-standard', '-z'];
const LS_DELETED = [...SAFE, 'ls-files', '--deleted', '-z'];
const TIMEOUT_MS = 30_000;
/** Read-only calls must never take the index lock away from the user's own git commands. */
const env = { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0' };

function splitZ(out: Buffer | string): string[] {
  const text = typeof out === 'string' ? out : out.toString('utf8');
  const parts = text.split('\0');
  const files: string[] = [];
  let prev = '';
  for (const p of parts) {
    // Unmerged paths are listed once per stage, next to each other.
    if (p && p !== prev) files.push(p);
    prev = p;
  }
  return files;
}

function merge(all: string[], deleted: string[]): string[] {
  if (deleted.length === 0) return all;
  const gone = new Set(deleted);
  return all.filter((f) => !gone.has(f));
}

function run(args: string[], cwd: string, signal?: AbortSignal): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn('git', args, { cwd, env, stdio: ['ignore', 'pipe', 'ignore'], signal, timeout: TIMEOUT_MS });
    } catch {
      resolve(undefined);
      return;
    }
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(chunks) : undefined));
  });
}

/** Paths relative to `cwd`, `/`-separated. */
export async function gitListFiles(cwd: string, signal?: AbortSignal): Promise<string[] | undefined> {
  const [all, deleted] = await Promise.all([run(LS_FILES, cwd, signal), run(LS_DELETED, cwd, signal)]);
  if (!all) return undefined;
  return merge(splitZ(all), deleted ? splitZ(deleted) : []);
}

export function gitListFilesSync(cwd: string): string[] | undefined {
  const opts: SpawnSyncOptionsWithBufferEncoding = {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: TIMEOUT_MS,
    maxBuffer: 1 << 30,
    encoding: 'buffer',
  };
  const all = spawnSync('git', LS_FILES, opts);
  if (all.error || all.status !== 0) return undefined;
  const deleted = spawnSync('git', LS_DELETED, opts);
  return merge(splitZ(all.stdout), deleted.status === 0 ? splitZ(deleted.stdout) : []);
}

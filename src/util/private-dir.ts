/**
 * patchbay's data directory holds chats, tokens and logs: only the user may read it. Directories
 * are created 0700 and files 0600 whatever the process umask; a home left group/world-readable by
 * an older version is tightened once, here.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** Creates `dir` and any missing parents as 0700; an existing `dir` we own loses group/other access. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, PRIVATE_DIR_MODE);
}

/** Creates `file` empty as 0600 when it does not exist; an existing one we own loses group/other access. */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  tighten(file, PRIVATE_FILE_MODE);
}

function tighten(path: string, mode: number): void {
  if (process.platform === 'win32') return;
  try {
    const st = statSync(path);
    // Only what we own: chmod on someone else's file would fail anyway, and is not ours to change.
    if ((st.mode & 0o077) !== 0 && (typeof process.getuid !== 'function' || st.uid === process.getuid())) chmodSync(path, mode);
  } catch {
    /* gone meanwhile, or not ours: nothing to tighten */
  }
}

/**
 * A lock between patchbay processes sharing one PATCHBAY_HOME: a file created with O_EXCL (only
 * one creator wins, on every local file system), removed when the work is done. A holder that
 * died leaves its file behind, so a lock older than `staleMs` is taken over.
 */
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from './private-dir.js';

export interface FileLockOptions {
  /** A lock file older than this belongs to a holder that died or hangs. */
  staleMs: number;
  /** How long to wait for the lock before giving up (an Error). */
  waitMs: number;
  signal?: AbortSignal;
}

/** Runs `work` holding the lock `file`; waits for another holder, takes over a stale lock. */
export async function withFileLock<T>(file: string, o: FileLockOptions, work: () => Promise<T>): Promise<T> {
  const fd = await acquire(file, o);
  try {
    return await work();
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}

async function acquire(file: string, o: FileLockOptions): Promise<number> {
  ensurePrivateDir(dirname(file));
  const giveUpAt = Date.now() + o.waitMs;
  for (let attempt = 0; ; attempt++) {
    o.signal?.throwIfAborted();
    try {
      const fd = openSync(file, 'wx', PRIVATE_FILE_MODE);
      // Who holds it, for a person looking at a lock left behind.
      writeSync(fd, `${process.pid}\n`);
      return fd;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (isStale(file, o.staleMs)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() >= giveUpAt) throw new Error(`another patchbay holds ${file} for longer than ${Math.round(o.waitMs / 1000)} s`);
    // Short waits first: a peer's refresh usually takes well under a second.
    await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** Math.min(attempt, 4), 500)));
  }
}

function isStale(file: string, staleMs: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > staleMs;
  } catch {
    // Gone between our open and stat: not stale, just free; the next attempt takes it.
    return false;
  }
}

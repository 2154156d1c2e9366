/**
 * A lock between patchbay processes sharing one PATCHBAY_HOME: a file created with O_EXCL (only
 * one creator wins, on every local file system), removed when the work is done.
 *
 * The file names its holder (a random token, pid and host). Only the holder whose token is in it
 * removes it: a holder declared stale and taken over must not delete its successor's lock. A
 * holder that died leaves its file behind: on this host a dead pid makes it stale at once,
 * elsewhere (a shared home) only its age does. A stale file is taken over by renaming it away to a
 * unique name (one racing waiter's rename wins, the others find it gone) and then creating anew.
 * Locks still held when the process exits (a window closed mid-refresh) are removed by a
 * synchronous exit handler, so the next window does not wait for them to go stale.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
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
  const release = await acquireFileLock(file, o);
  try {
    return await work();
  } finally {
    release();
  }
}

/** Takes the lock `file` (waiting, taking over a stale one); the function returned releases it (idempotent). */
export async function acquireFileLock(file: string, o: FileLockOptions): Promise<() => void> {
  ensurePrivateDir(dirname(file));
  const giveUpAt = Date.now() + o.waitMs;
  for (let attempt = 0; ; attempt++) {
    o.signal?.throwIfAborted();
    const token = tryCreate(file);
    if (token) {
      held.set(file, token);
      installExitHandler();
      return () => release(file, token);
    }
    const seen = readHolder(file);
    if (seen !== undefined && isStale(file, seen, o.staleMs)) {
      takeOverStale(file, seen);
      continue;
    }
    if (Date.now() >= giveUpAt) throw new Error(`another patchbay holds ${file} for longer than ${Math.round(o.waitMs / 1000)} s`);
    // Short waits first: a peer's refresh usually takes well under a second.
    await sleep(Math.min(50 * 2 ** Math.min(attempt, 4), 500), o.signal);
  }
}

/** file → our token, for the locks this process holds now. */
const held = new Map<string, string>();
let exitHandlerInstalled = false;

function installExitHandler(): void {
  if (exitHandlerInstalled) return;
  exitHandlerInstalled = true;
  // 'exit' handlers run synchronously on process.exit() too: only sync fs calls work here.
  process.on('exit', () => {
    for (const [file, token] of [...held]) release(file, token);
  });
}

/** Our token when we created `file`; undefined when it exists already. */
function tryCreate(file: string): string | undefined {
  const token = randomBytes(12).toString('hex');
  try {
    writeFileSync(file, `${token}\n${process.pid}\n${hostname()}\n`, { flag: 'wx', mode: PRIVATE_FILE_MODE });
    return token;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    return undefined;
  }
}

/** The lock's content ('' while its creator has not written it yet); undefined when it is gone. */
function readHolder(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function isStale(file: string, content: string, staleMs: number): boolean {
  const [, pid, host] = content.split('\n');
  if (host === hostname() && pid && /^\d+$/.test(pid) && !isAlive(Number(pid))) return true;
  try {
    return Date.now() - statSync(file).mtimeMs > staleMs;
  } catch {
    // Gone between our read and stat: not stale, just free; the next attempt takes it.
    return false;
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: alive, only not ours to signal.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves the stale lock away under a unique name: of several waiters only one rename finds it.
 * When what we moved is not what we judged stale (another waiter took over in between and created
 * a fresh lock), it is linked back (link fails rather than replace a newer lock) and left alone.
 * Exported for the test that plays two waiters racing.
 */
export function takeOverStale(file: string, staleContent: string): void {
  const aside = `${file}.stale-${randomBytes(6).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // another waiter moved it first
  }
  if (readHolder(aside) !== staleContent) {
    try {
      linkSync(aside, file);
    } catch {
      /* a newer lock is in place already: the moved holder finds its token gone and removes nothing */
    }
  }
  rmSync(aside, { force: true });
}

/** Removes `file` only while it still holds our token. */
function release(file: string, token: string): void {
  if (held.get(file) === token) held.delete(file);
  const content = readHolder(file);
  if (content?.split('\n')[0] === token) rmSync(file, { force: true });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      reject(signal!.reason);
    };
    const t = setTimeout(() => {
      done();
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

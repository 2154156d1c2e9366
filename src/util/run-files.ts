/**
 * Run files: `<dir>/<pid>.json`, one per process that serves something (the provider gateway, the
 * remote API), holding its address and token. Written 0600 in a 0700 folder, read back only when a
 * file is this user's own regular file, and told live or stale by whether its pid is alive.
 */
import { chmodSync, closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { z } from 'zod';
import { isAlive } from './pid.js';

/** A run file is a few hundred bytes: anything much bigger is not one. */
const MAX_OWN_FILE_BYTES = 64 * 1024;

/**
 * A small file's text, only when it is a regular file (not a symlink, a FIFO or a device) owned
 * by this user: what a process of this user wrote. Anything else is skipped (undefined): a file
 * another user put in a shared home could point a client at their server (which would then
 * drive its tools, and receive a token), and a FIFO would block the read.
 */
export function readOwnFile(file: string): string | undefined {
  let fd: number;
  try {
    // No follow: a symlink fails here (ELOOP). Non-blocking: opening a FIFO does not wait for a writer.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_OWN_FILE_BYTES) return undefined;
    const uid = process.geteuid?.();
    if (uid !== undefined && st.uid !== uid) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** One run file's content, or undefined when it is gone, unreadable, not this user's (readOwnFile) or not of this schema. */
export function readRunFileAs<T>(file: string, schema: z.ZodType<T>): T | undefined {
  try {
    const text = readOwnFile(file);
    if (text === undefined) return undefined;
    const parsed = schema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The run files in `dir` that parse: those whose process is alive (with their file), and the files of processes that are gone. */
export function scanRunFiles<T extends { pid: number }>(dir: string, schema: z.ZodType<T>): { live: Array<T & { file: string }>; stale: string[] } {
  const live: Array<T & { file: string }> = [];
  const stale: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { live, stale };
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    const run = readRunFileAs(file, schema);
    if (!run) continue;
    if (isAlive(run.pid)) live.push({ ...run, file });
    else stale.push(file);
  }
  return { live, stale };
}

/** Writes `content` to `file` as 0600 in a 0700 folder (created when missing), atomically (a temp file renamed over it). */
export function writePrivateFile(file: string, content: string): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700); // mkdir's mode is filtered by the umask and ignored for an existing dir
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, content, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
}

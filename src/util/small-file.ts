/**
 * Reading a file named by something we do not control (a repo's `.gitignore`, a context the model
 * or a mention points at, an image): only a regular file after following links, opened without
 * blocking (a FIFO with no writer would hang a blocking open, and a libuv thread with it), and
 * never read past the limit (`logo.png -> /dev/zero` has no size to check and never ends).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

const FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
/** Read size per step: a file is never buffered much past what is wanted. */
const CHUNK = 1024 * 1024;

export type Bounded =
  /** `bytes`: at most `maxBytes` of it; `more`: it holds more than that; `size`: what stat said. */
  { kind: 'file'; bytes: Buffer; more: boolean; size: number } | { kind: 'directory' } | { kind: 'other' };

export interface BoundedOptions {
  /** All or nothing: a file stat says is over the limit is not read at all (`more`, no bytes). */
  whole?: boolean;
}

/** Up to `maxBytes` of a regular file (one byte more is read to tell `more`). fs errors (ENOENT…) are thrown. */
export async function readBounded(path: string, maxBytes: number, opts: BoundedOptions = {}): Promise<Bounded> {
  const fh = await open(path, FLAGS);
  try {
    const st = await fh.stat();
    if (!st.isFile()) return st.isDirectory() ? { kind: 'directory' } : { kind: 'other' };
    if (opts.whole && st.size > maxBytes) return { kind: 'file', bytes: Buffer.alloc(0), more: true, size: st.size };
    const chunks: Buffer[] = [];
    let got = 0;
    while (got <= maxBytes) {
      const buf = Buffer.alloc(Math.min(CHUNK, maxBytes + 1 - got));
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      chunks.push(buf.subarray(0, bytesRead));
      got += bytesRead;
    }
    const all = Buffer.concat(chunks, got);
    return { kind: 'file', bytes: all.subarray(0, maxBytes), more: got > maxBytes, size: st.size };
  } finally {
    await fh.close();
  }
}

/** readBounded, synchronously (a config read while loading, which is synchronous). */
export function readBoundedSync(path: string, maxBytes: number, opts: BoundedOptions = {}): Bounded {
  const fd = openSync(path, FLAGS);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return st.isDirectory() ? { kind: 'directory' } : { kind: 'other' };
    if (opts.whole && st.size > maxBytes) return { kind: 'file', bytes: Buffer.alloc(0), more: true, size: st.size };
    // Sized for what stat says (or one step), grown as a file that grows while read needs.
    let buf = Buffer.alloc(Math.min(maxBytes + 1, Math.max(st.size + 1, 1), CHUNK));
    let got = 0;
    while (got <= maxBytes) {
      if (got === buf.length) {
        const bigger = Buffer.alloc(Math.min(maxBytes + 1, buf.length * 2));
        buf.copy(bigger, 0, 0, got);
        buf = bigger;
      }
      const n = readSync(fd, buf, got, buf.length - got, null);
      if (n === 0) break;
      got += n;
    }
    return { kind: 'file', bytes: buf.subarray(0, Math.min(got, maxBytes)), more: got > maxBytes, size: st.size };
  } finally {
    closeSync(fd);
  }
}

/** A small text file's first `maxBytes`, or undefined when it is missing, unreadable or no regular file. */
export function readSmallFileSync(path: string, maxBytes: number): string | undefined {
  try {
    const r = readBoundedSync(path, maxBytes);
    return r.kind === 'file' ? r.bytes.toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}

/** readSmallFileSync, without blocking the event loop. */
export async function readSmallFile(path: string, maxBytes: number): Promise<string | undefined> {
  try {
    const r = await readBounded(path, maxBytes);
    return r.kind === 'file' ? r.bytes.toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}

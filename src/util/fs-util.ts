/** Small file-system helpers shared by the native tools. */
import type { FileHandle } from 'node:fs/promises';
import { relative } from 'node:path';
import { isWithin } from './paths.js';

/** How many leading bytes are sniffed for a NUL byte to call a file binary (as git does). */
export const SNIFF_BYTES = 8000;

export function looksBinary(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, SNIFF_BYTES);
  for (let i = 0; i < n; i++) if (buf[i] === 0) return true;
  return false;
}

/** Reads the first bytes of an open file to decide whether it is binary (a positioned read: the file offset is left alone). */
export async function isBinaryHandle(fh: FileHandle): Promise<boolean> {
  const buf = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
  return looksBinary(buf.subarray(0, bytesRead));
}

/** A model-readable sentence for a failed file-system call on `abs`. */
export function fsErrorText(err: unknown, abs: string): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return `No such file or directory: ${abs}`;
    case 'EACCES':
    case 'EPERM':
      return `Permission denied: ${abs}`;
    case 'EISDIR':
      return `${abs} is a directory, not a file.`;
    case 'ENOTDIR':
      return `A parent of ${abs} is not a directory.`;
    case 'ELOOP':
      return `Too many levels of symbolic links: ${abs}`;
    default:
      return `${abs}: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export function errnoCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * How a path is shown to the model: relative to the first root when inside it (so that it can be
 * passed straight back to a tool), absolute otherwise.
 */
export function displayPath(abs: string, roots: string[]): string {
  const root = roots[0];
  if (root && isWithin(root, abs)) return relative(root, abs) || '.';
  return abs;
}

/** The marker every truncation notice starts with, so the model learns to recognise it. */
export function notice(text: string): string {
  return `[patchbay: ${text}]`;
}

export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n} ${n === 1 ? word : many}`;
}

/**
 * Reading a config file (the user's, `--config-file`, a workspace's `.patchbay/config.json`, the
 * trust store): only a regular file, opened without blocking (a FIFO with no writer would hang
 * the open and the whole server with it, at start or when one is swapped in while it runs), and
 * never more than MAX_CONFIG_BYTES (a 300 MB file made every `initialize` fail and memory peak at
 * 2.2 GB). The size is checked on the open file before anything is read, and the read itself
 * stops past the cap (a file that grows while it is read). A refused file is reported and skipped,
 * as one that is not JSON is.
 */
import { readBoundedSync } from '../util/small-file.js';

/** A config file is a few KB of settings; past this it is not one (and parsing it would cost GBs). */
export const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

export type ConfigText =
  | { kind: 'text'; text: string }
  | { kind: 'missing' }
  /** `message`: why, for the user ("is not a regular file; ignored"); the path is said by the caller. */
  | { kind: 'refused'; message: string };

/** The file's text, or why it is not read. fs errors other than ENOENT are `refused` with their code. */
export function readConfigText(path: string, maxBytes = MAX_CONFIG_BYTES): ConfigText {
  let r: ReturnType<typeof readBoundedSync>;
  try {
    r = readBoundedSync(path, maxBytes, { whole: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'refused', message: `cannot be read (${code ?? (e as Error).message}); ignored` };
  }
  if (r.kind === 'directory') return { kind: 'refused', message: 'is a directory; ignored' };
  if (r.kind === 'other') return { kind: 'refused', message: 'is not a regular file (a FIFO, socket or device); ignored' };
  if (r.more) return { kind: 'refused', message: `is ${r.size > maxBytes ? sizeText(r.size) : `more than ${sizeText(maxBytes)}`}, over the ${sizeText(maxBytes)} a config file may have; ignored` };
  return { kind: 'text', text: r.bytes.toString('utf8') };
}

function sizeText(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

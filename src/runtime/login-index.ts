/**
 * `logins.json`: the ids of the providers with a stored login (names only, no secret), so start-up
 * asks the secret store (maybe a keychain) only for those. Several patchbay processes share it, so
 * each change is a read-merge-write of one id, written whole (temp file + rename): a window never
 * drops another window's logins.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { readConfigText } from '../config/config-file.js';
import { PRIVATE_FILE_MODE } from '../util/private-dir.js';
import { errorMessage, logger } from '../util/log.js';

const log = logger('login');

export function readLoginIndex(file: string): Set<string> {
  try {
    const read = readConfigText(file);
    if (read.kind === 'missing') return new Set();
    if (read.kind === 'refused') throw new Error(read.message.replace(/; ignored$/, ''));
    const parsed = JSON.parse(read.text) as { providers?: unknown };
    return new Set(Array.isArray(parsed.providers) ? parsed.providers.filter((x): x is string => typeof x === 'string') : []);
  } catch (e) {
    log.warn(`Cannot read ${file} (${errorMessage(e)}); stored logins are not loaded`);
    return new Set();
  }
}

/** Adds or removes one id, keeping every other id the file names now. */
export function updateLoginIndex(file: string, id: string, present: boolean): void {
  const ids = readLoginIndex(file);
  if (ids.has(id) === present) return;
  if (present) ids.add(id);
  else ids.delete(id);
  try {
    if (!ids.size) return rmSync(file, { force: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ providers: [...ids].sort() }) + '\n', { mode: PRIVATE_FILE_MODE });
    renameSync(tmp, file);
  } catch (e) {
    log.warn(`Cannot write ${file}: ${errorMessage(e)}`);
  }
}

/**
 * The provider token (spec "Authentication"): one per gateway start, checked in constant time,
 * published in files only the user can read (the gateway's own run file, and the older shared
 * `provider-token`) and removed when the gateway stops.
 */
import { writePrivateFile } from '../../util/run-files.js';
import { secretsEqual } from '../../util/loopback.js';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** `ptk-` + 128 random bits as hex. */
export function newToken(): string {
  return `ptk-${randomBytes(16).toString('hex')}`;
}

/**
 * Constant-time comparison. Lengths differ → still one full comparison (of the expected token
 * with itself) so the time taken does not tell how long the expected token is.
 */
export function tokenMatches(expected: string, given: unknown): boolean {
  return secretsEqual(expected, given);
}

export function tokenFilePath(home: string): string {
  return join(home, 'gateway', 'provider-token');
}

/** Directory 0700, file 0600, written atomically (a reader never sees half a token). */
export function writeTokenFile(file: string, token: string): void {
  writePrivateFile(file, token);
}

/** Removes the file unless another gateway has since written its own token there. */
export function removeTokenFile(file: string, token: string): void {
  try {
    if (readFileSync(file, 'utf8') !== token) return;
    rmSync(file, { force: true });
  } catch {
    // already gone
  }
}

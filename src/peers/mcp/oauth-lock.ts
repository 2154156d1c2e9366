/**
 * A lock file between patchbay processes sharing one secret store, held from "the server wants a
 * new token" (401) through re-reading the stored tokens, refreshing and writing the new ones: two
 * processes refreshing one rotating refresh token at once would otherwise make one of them fail
 * (`invalid_grant`) and sign it out. Created with O_EXCL; a lock older than STALE_MS (its holder
 * crashed) is taken over; after WAIT_MS the caller goes on without it rather than hang.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { patchbayHome } from '../../util/locations.js';
import type { SecretStore } from '../../util/secrets.js';

const STALE_MS = 30_000;
const WAIT_MS = 10_000;
const POLL_MS = 50;

/** Next to the secrets file, or in patchbay's home for a keychain (one per server). */
export function oauthLockPath(store: SecretStore, env: NodeJS.ProcessEnv, server: string): string {
  return store.kind === 'file' ? `${store.where}.mcp-${server}.lock` : join(patchbayHome(env), 'locks', `mcp-${server}.oauth.lock`);
}

/** Takes the lock (waiting up to WAIT_MS); the function returned releases it (idempotent); undefined when it could not be taken. */
export async function acquireLock(path: string): Promise<(() => void) | undefined> {
  const mine = randomBytes(12).toString('hex');
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      writeFileSync(path, mine, { flag: 'wx', mode: 0o600 });
      return () => release(path, mine);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
    }
    if (stale(path)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() > deadline) return undefined;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function stale(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > STALE_MS;
  } catch {
    return false;
  }
}

/** Removes the lock only while it is still ours (a stale take-over may have replaced it). */
function release(path: string, mine: string): void {
  try {
    if (readFileSync(path, 'utf8') === mine) rmSync(path, { force: true });
  } catch {
    // Already gone.
  }
}

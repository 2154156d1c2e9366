/**
 * A lock file between patchbay processes sharing one secret store, held from "the server wants a
 * new token" (401) through re-reading the stored tokens, refreshing and writing the new ones: two
 * processes refreshing one rotating refresh token at once would otherwise make one of them fail
 * (`invalid_grant`) and sign it out. util/file-lock.ts: a lock older than STALE_MS or whose holder
 * died is taken over; after WAIT_MS the caller goes on without it rather than hang.
 */
import { join } from 'node:path';
import { acquireFileLock } from '../../util/file-lock.js';
import { patchbayHome } from '../../util/locations.js';
import type { SecretStore } from '../../util/secrets.js';

const STALE_MS = 30_000;
const WAIT_MS = 10_000;

/** Next to the secrets file, or in patchbay's home for a keychain (one per server). */
export function oauthLockPath(store: SecretStore, env: NodeJS.ProcessEnv, server: string): string {
  return store.kind === 'file' ? `${store.where}.mcp-${server}.lock` : join(patchbayHome(env), 'locks', `mcp-${server}.oauth.lock`);
}

/** Takes the lock (waiting up to WAIT_MS); the function returned releases it (idempotent); undefined when it could not be taken. */
export async function acquireLock(path: string): Promise<(() => void) | undefined> {
  // Token, pid check and rename take-over: util/file-lock.ts.
  return acquireFileLock(path, { staleMs: STALE_MS, waitMs: WAIT_MS }).catch(() => undefined);
}

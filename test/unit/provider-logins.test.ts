/**
 * ProviderLogins (src/runtime/provider-logins.ts) on a real 0600 file store: what start-up loads,
 * and a refresh that finds another patchbay already refreshed the login (its refresh token may
 * have been rotated, leaving ours spent) and takes that token instead of calling the server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderLogins } from '../../src/runtime/provider-logins.js';
import { FileSecretStore } from '../../src/util/secrets.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'pb-logins-'));
  dirs.push(dir);
  const store = new FileSecretStore(join(dir, 'secrets.json'));
  const changes: string[] = [];
  let changed!: () => void;
  const changedOnce = new Promise<void>((r) => (changed = r));
  const logins = new ProviderLogins({
    store,
    indexFile: join(dir, 'logins.json'),
    // Port 9 (discard) refuses: a token request would fail loudly.
    providers: () => ({ acme: { api: 'openai-chat', login: { clientId: 'c', authorizationUrl: 'http://127.0.0.1:9/a', tokenUrl: 'http://127.0.0.1:9/t' } } }),
    known: () => ['openai', 'acme'],
    overriddenBy: () => undefined,
    changed: async (id) => {
      changes.push(id);
      changed();
    },
    notice: (type, message) => changes.push(`${type}: ${message}`),
  });
  return { dir, store, logins, changes, changedOnce };
}

const now = (): number => Math.floor(Date.now() / 1000);

describe('ProviderLogins', () => {
  it('loads only the providers its index names; a logout empties both', async () => {
    const { dir, store, logins } = setup();
    await store.set('provider/acme', JSON.stringify({ type: 'api-key', key: 'stored-key-0123456789' }));
    await logins.load();
    // Not in the index (written by a login): not looked up.
    expect(logins.keys()).toEqual({});
    writeFileSync(join(dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
    await logins.load();
    expect(logins.keys()).toEqual({ acme: 'stored-key-0123456789' });
    await logins.logout('acme');
    expect(logins.keys()).toEqual({});
    expect(await store.get('provider/acme')).toBeUndefined();
    logins.dispose();
  });

  it('a refresh that finds a newer token in the store takes it without asking the server', async () => {
    const { dir, store, logins, changes, changedOnce } = setup();
    writeFileSync(join(dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
    // Ten seconds left: inside the refresh margin, so the refresh is due at once.
    await store.set('provider/acme', JSON.stringify({ type: 'oauth', mode: 'browser', accessToken: 'ours-access-0123456789', refreshToken: 'ours-refresh-0123456789', expiresAt: now() + 10 }));
    await logins.load();
    // Another patchbay refreshed meanwhile.
    await store.set('provider/acme', JSON.stringify({ type: 'oauth', mode: 'browser', accessToken: 'theirs-access-0123456789', refreshToken: 'theirs-refresh-0123456789', expiresAt: now() + 7200 }));
    await changedOnce;
    expect(logins.keys()).toEqual({ acme: 'theirs-access-0123456789' });
    // No failed refresh was reported (the token endpoint refuses connections).
    expect(changes).toEqual(['acme']);
    logins.dispose();
  });
});

/**
 * The MCP OAuth lock (oauth-provider.ts, oauth-lock.ts) is held for one 401's refresh, not beyond:
 * a 401 whose SDK auth() fails before any token is saved or any redirect happens (the SDK's
 * un-awaited GET stream, where no send() releases it) must not leave the lock to other windows.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { afterEach, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/peers/mcp/oauth-fetch.js';
import { acquireLock } from '../../src/peers/mcp/oauth-lock.js';
import { McpOAuthProvider } from '../../src/peers/mcp/oauth-provider.js';
import { logger } from '../../src/util/log.js';
import { FileSecretStore } from '../../src/util/secrets.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the MCP OAuth lock', () => {
  it('a 401 whose auth() throws early releases the lock (bounded), and another taker gets it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-oauth-lock-'));
    dirs.push(dir);
    const lockPath = join(dir, 'secrets.json.mcp-s.lock');
    const url = 'http://127.0.0.1:9/mcp';
    const provider = new McpOAuthProvider({ server: 's', url, store: new FileSecretStore(join(dir, 'secrets.json')), log: logger('test'), lockPath, lockHoldMs: 300 });
    // The MCP server's Bearer challenge, as the SDK's GET stream would meet it.
    const challenged = guardedFetch({
      url: new URL(url),
      headers: [],
      onChallenge: async () => (await provider.adoptStored(), undefined),
      base: async () => new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer' } }),
    });
    expect((await challenged(url)).status).toBe(401);
    expect(existsSync(lockPath)).toBe(true);
    // The SDK's auth() then fails before saving tokens or redirecting (here: discovery unreachable).
    const down = async (): Promise<Response> => Promise.reject(new TypeError('fetch failed'));
    await expect(auth(provider, { serverUrl: url, fetchFn: down })).rejects.toThrow();
    // Nobody calls settle(): the bound releases it.
    const deadline = Date.now() + 10_000;
    while (existsSync(lockPath) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(existsSync(lockPath)).toBe(false);
    const release = await acquireLock(lockPath);
    expect(release).toBeDefined();
    release!();
  });

  it('two 401s at once share one lock: neither goes on without it, one release frees it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-oauth-lock-'));
    dirs.push(dir);
    const lockPath = join(dir, 'l.lock');
    const provider = new McpOAuthProvider({ server: 's', url: 'http://127.0.0.1:9/mcp', store: new FileSecretStore(join(dir, 'secrets.json')), log: logger('test'), lockPath });
    await Promise.all([provider.adoptStored(), provider.adoptStored()]);
    expect(existsSync(lockPath)).toBe(true);
    provider.settle();
    expect(existsSync(lockPath)).toBe(false);
  });
});

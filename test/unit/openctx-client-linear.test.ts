/**
 * The real `@openctx/provider-linear-issues` (0.0.9) loaded by package name from the workspace
 * root. Offline: `meta` is static and `items` without a Linear mention returns before any token or
 * network use. `fetch` is stubbed to fail the test if the provider tried the network.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { OpenCtxClient, resolvePackage } from '../../src/peers/openctx/client/index.js';
import type { Logger } from '../../src/util/log.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const PKG = '@openctx/provider-linear-issues';
const silent: Logger = { error() {}, warn() {}, info() {}, debug() {} };

let fetchCalls: unknown[];
let client: OpenCtxClient;
beforeEach(() => {
  fetchCalls = [];
  vi.stubGlobal('fetch', (...args: unknown[]) => {
    fetchCalls.push(args);
    return Promise.reject(new Error('network used in an offline test'));
  });
  // No accessToken and no userCredentialsPath: the provider has no way to reach Linear.
  client = new OpenCtxClient({ config: { providers: { [PKG]: {} }, autoInclude: ['Linear Issues'], timeoutMs: 3000 }, roots: [root], log: silent });
});
afterEach(() => {
  client.dispose();
  vi.unstubAllGlobals();
});

describe('@openctx/provider-linear-issues through the client', () => {
  it('resolves by package name from the workspace root', () => {
    expect(resolvePackage(PKG, root)).toBe(join(root, 'node_modules', '@openctx', 'provider-linear-issues', 'dist', 'bundle.js'));
  });

  it('meta works offline: name and mentions capability', async () => {
    const [meta] = await client.meta();
    expect(meta).toEqual({ provider: PKG, name: 'Linear Issues', meta: { name: 'Linear Issues', mentions: {} } });
    expect(client.status()).toEqual([{ provider: PKG, name: 'Linear Issues', ok: true }]);
    expect(fetchCalls).toEqual([]);
  });

  it('items without a mention works offline and yields nothing to include', async () => {
    expect(await client.itemsForMessage('what is ENG-123 about?')).toBe('');
    expect(client.status()).toEqual([{ provider: PKG, name: 'Linear Issues', ok: true }]);
    expect(fetchCalls).toEqual([]);
  });

  it('items for a non-Linear mention is empty offline; mentions without credentials fail clearly, never crash', async () => {
    expect(await client.itemsForMention({ uri: 'https://example.com/not-linear', server: 'openctx:Linear Issues' })).toBe('');
    expect(await client.mentions('bug')).toEqual([]);
    expect(client.status()[0]).toMatchObject({ ok: false, lastError: expect.stringContaining('must provide a Linear user credentials path') });
    expect(fetchCalls).toEqual([]);
  });
});

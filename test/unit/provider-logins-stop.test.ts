/**
 * A prompt or an inline completion waiting for a provider login's refresh (ProviderLogins
 * `ensureFresh`, ECA's `maybe-renew-auth-token!` before each request) stops waiting when the
 * editor stops it: another window holding the refresh lock must not make a stop hang for a minute.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProviderLoginConfig } from '../../src/peers/llm/index.js';
import { ProviderLogins, type Credential } from '../../src/runtime/provider-logins.js';
import { logToFile } from '../../src/util/log.js';
import { FileSecretStore } from '../../src/util/secrets.js';
import { useLoginsFixture } from '../support/provider-logins.js';

const fx = useLoginsFixture();
const { dirs, instances } = fx;

describe('waiting for a login refresh', () => {
  it('a stop ends the wait while another window holds the refresh lock; no token request is made', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-logins-stop-'));
    dirs.push(dir);
    const t = fx.auth.grant();
    // Expired: the next request must refresh first.
    const cred: Credential = { type: 'oauth', mode: 'browser', accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Math.floor(Date.now() / 1000) - 10 };
    await new FileSecretStore(join(dir, 'secrets.json')).set('provider/acme', JSON.stringify(cred));
    writeFileSync(join(dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
    // Another window (alive: this very process) is mid-refresh, holding the lock.
    mkdirSync(join(dir, 'locks'));
    writeFileSync(join(dir, 'locks', 'login-acme.lock'), `other-window\n${process.pid}\n${hostname()}\n`);
    const logins = new ProviderLogins({
      store: new FileSecretStore(join(dir, 'secrets.json')),
      indexFile: join(dir, 'logins.json'),
      providers: () => ({ acme: { api: 'openai-chat', login: fx.auth.loginConfig() as ProviderLoginConfig } }),
      known: () => ['acme'],
      overriddenBy: () => undefined,
      changed: async () => {},
      notice: () => {},
    });
    instances.push(logins);
    await logins.load();
    const stop = new AbortController();
    const waiting = logins.ensureFresh('acme', stop.signal);
    setTimeout(() => stop.abort(new Error('stopped by the editor')), 100);
    const outcome = await Promise.race([
      waiting.then(
        () => 'refreshed',
        (e: Error) => e.message,
      ),
      new Promise((r) => setTimeout(() => r('still waiting'), 10_000)),
    ]);
    expect(outcome).toBe('stopped by the editor');
    expect(fx.auth.tokenRequests.filter((r) => r.grantType === 'refresh_token')).toHaveLength(0);
  });

  it('a login that cannot be refreshed (no tokenUrl in its config) is warned about once, not on every request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pb-logins-warn-'));
    dirs.push(dir);
    const logFile = join(dir, 'server.log');
    logToFile(logFile);
    const t = fx.auth.grant();
    const cred: Credential = { type: 'oauth', mode: 'browser', accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: Math.floor(Date.now() / 1000) - 10 };
    await new FileSecretStore(join(dir, 'secrets.json')).set('provider/acme', JSON.stringify(cred));
    writeFileSync(join(dir, 'logins.json'), JSON.stringify({ providers: ['acme'] }));
    const logins = new ProviderLogins({
      store: new FileSecretStore(join(dir, 'secrets.json')),
      indexFile: join(dir, 'logins.json'),
      providers: () => ({ acme: { api: 'openai-chat' } }),
      known: () => ['acme'],
      overriddenBy: () => undefined,
      changed: async () => {},
      notice: () => {},
    });
    instances.push(logins);
    await logins.load();
    for (let i = 0; i < 4; i++) await logins.ensureFresh('acme');
    const warned = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('cannot be refreshed').length - 1 : 0;
    expect(warned).toBe(1);
  });
});

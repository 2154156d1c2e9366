/**
 * The bounds on provider logins: login URLs (config and the device server's verification_uri)
 * are https or this machine only, the device polling interval and the login timeout are clamped,
 * refresh timing has a floor, and only temporary token-endpoint failures count as temporary.
 * Against the fake authorization server (test/fixtures/fake-oauth.ts) over real HTTP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { providerSchema } from '../../src/peers/llm/config.js';
import { backoffMs, MIN_GAP_MS, refreshDelayMs, refreshDue } from '../../src/runtime/login-refresh-timing.js';
import { isTemporaryOAuthFailure, OAuthError, pollDeviceToken, refreshTokens, startDeviceAuthorization } from '../../src/util/oauth.js';
import { FakeAuthServer } from '../fixtures/fake-oauth.js';

let auth: FakeAuthServer;
beforeAll(async () => {
  auth = await FakeAuthServer.start();
});
afterAll(() => auth.close());
afterEach(() => auth.reset());

const login = (extra: Record<string, unknown>) => providerSchema.safeParse({ api: 'openai-chat', login: { clientId: 'c', ...extra } });

describe('login URLs', () => {
  it('config: https, or http only to 127.0.0.1, localhost or [::1]; anything else is refused with the rule', () => {
    for (const url of ['https://auth.example.com/token', 'http://127.0.0.1:8080/t', 'http://localhost/t', 'http://[::1]:9/t']) {
      expect(login({ tokenUrl: url, authorizationUrl: url, deviceAuthorizationUrl: url, redirectUri: url }).success).toBe(true);
    }
    for (const key of ['tokenUrl', 'authorizationUrl', 'deviceAuthorizationUrl', 'redirectUri']) {
      for (const url of ['http://evil.example/t', 'file:///etc/passwd', 'javascript:alert(1)', 'data:text/html,hi', 'http://127.0.0.1.evil.example/t']) {
        const r = login({ [key]: url });
        expect(r.success, `${key} ${url}`).toBe(false);
        expect(r.error?.issues[0]?.message).toMatch(/must be https:\/\/ \(or http:\/\/ to 127\.0\.0\.1, localhost or \[::1\]\)/);
      }
    }
  });

  it("the device server's verification_uri must be as safe: javascript: or a stranger's http page is refused", async () => {
    for (const bad of ['javascript:alert(1)', 'http://evil.example/activate', 'file:///tmp/x']) {
      auth.device.verificationUri = bad;
      await expect(startDeviceAuthorization({ deviceAuthorizationUrl: `${auth.url}/device`, clientId: auth.clientId })).rejects.toThrow(/verification_uri that is not allowed/);
    }
    auth.device.verificationUri = 'https://auth.example.com/activate';
    const ok = await startDeviceAuthorization({ deviceAuthorizationUrl: `${auth.url}/device`, clientId: auth.clientId });
    expect(ok.verificationUri).toBe('https://auth.example.com/activate');
  });
});

describe('device polling interval and login timeout', () => {
  it('a server interval of 0.001 s polls once a second at most; 1e9 s is cut to 60 s (setTimeout would overflow to 1 ms)', async () => {
    auth.device.interval = 0.001;
    expect((await startDeviceAuthorization({ deviceAuthorizationUrl: `${auth.url}/device`, clientId: auth.clientId })).interval).toBe(1);
    auth.device.interval = 1e9;
    expect((await startDeviceAuthorization({ deviceAuthorizationUrl: `${auth.url}/device`, clientId: auth.clientId })).interval).toBe(60);
  });

  it('a device login polls no faster than once a second even when handed a tiny interval', async () => {
    auth.device.pending = 100;
    const device = await startDeviceAuthorization({ deviceAuthorizationUrl: `${auth.url}/device`, clientId: auth.clientId });
    const abort = new AbortController();
    const polling = pollDeviceToken({ tokenUrl: `${auth.url}/token`, clientId: auth.clientId, device: { ...device, interval: 0.001 }, signal: abort.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1500));
    abort.abort();
    await polling;
    // 1 ms polling would have made hundreds of requests in 1.5 s.
    expect(auth.tokenRequests.length).toBe(1);
  });

  it('a 503 while polling (no OAuth error) is waited out with backoff, not the end of the login', async () => {
    auth.device.unavailable = 1;
    const device = await startDeviceAuthorization({ deviceAuthorizationUrl: `${auth.url}/device`, clientId: auth.clientId });
    const tokens = await pollDeviceToken({ tokenUrl: `${auth.url}/token`, clientId: auth.clientId, device });
    expect(tokens.accessToken).toBe(auth.issued.at(-2));
    expect(auth.tokenRequests).toHaveLength(2);
  });

  it('login.timeoutSeconds is capped at an hour', () => {
    expect(login({ timeoutSeconds: 3600 }).success).toBe(true);
    expect(login({ timeoutSeconds: 1e9 }).success).toBe(false);
  });
});

describe('refresh timing', () => {
  const nowMs = 1_700_000_000_000;
  const at = (s: number) => nowMs / 1000 + s;

  it('a just-issued token living no longer than the margin is refreshed halfway or after 30 s, never at once', () => {
    expect(refreshDelayMs({ expiresAt: at(30), nowMs, issuedLifetimeS: 30, random: 0 })).toBe(MIN_GAP_MS);
    expect(refreshDelayMs({ expiresAt: at(1), nowMs, issuedLifetimeS: 1, random: 0 })).toBe(MIN_GAP_MS);
    expect(refreshDelayMs({ expiresAt: at(7200), nowMs, issuedLifetimeS: 7200, random: 0 })).toBe((7200 - 60) * 1000);
  });

  it('never sooner than 30 s after the last attempt; a stored token already due is refreshed at once; jitter only delays', () => {
    expect(refreshDelayMs({ expiresAt: at(10), nowMs, random: 0.5 })).toBe(0);
    expect(refreshDelayMs({ expiresAt: at(10), nowMs, lastAttemptMs: nowMs - 5_000, random: 0 })).toBe(25_000);
    const jittered = refreshDelayMs({ expiresAt: at(3600), nowMs, random: 0.999 });
    expect(jittered).toBeGreaterThan((3600 - 60) * 1000);
    expect(jittered).toBeLessThan((3600 - 60) * 1000 + 5_000);
    expect(refreshDelayMs({ expiresAt: at(1e9), nowMs, random: 0 })).toBe(2 ** 31 - 1);
  });

  it('due on demand inside the margin, at most once per 30 s; backoff doubles up to 30 min', () => {
    expect(refreshDue({ expiresAt: at(3600), nowMs })).toBe(false);
    expect(refreshDue({ expiresAt: at(-100), nowMs })).toBe(true);
    expect(refreshDue({ expiresAt: at(10), nowMs, lastAttemptMs: nowMs - 1_000 })).toBe(false);
    expect([1, 2, 3, 10].map((n) => backoffMs(n, 0))).toEqual([30_000, 60_000, 120_000, 30 * 60_000]);
  });
});

describe('which refresh failures are temporary', () => {
  const refresh = (mode: Parameters<typeof auth.tokenModes.push>[0]) => {
    auth.tokenModes = [mode];
    return refreshTokens({ tokenUrl: `${auth.url}/token`, clientId: auth.clientId, refreshToken: auth.grant().refreshToken }).then(
      () => undefined,
      (e: unknown) => e,
    );
  };

  it('unreachable and 5xx are; invalid_grant, invalid_client, unauthorized_client and garbage are not', async () => {
    expect(isTemporaryOAuthFailure(await refresh('unavailable'))).toBe(true);
    const unreachable = await refreshTokens({ tokenUrl: 'http://127.0.0.1:9/token', clientId: 'c', refreshToken: 'r' }).catch((e: unknown) => e);
    expect(isTemporaryOAuthFailure(unreachable)).toBe(true);
    for (const mode of ['invalid_grant', 'invalid_client', 'unauthorized_client', 'garbage'] as const) {
      const e = await refresh(mode);
      expect(e, mode).toBeInstanceOf(OAuthError);
      expect(isTemporaryOAuthFailure(e), mode).toBe(false);
    }
  });
});

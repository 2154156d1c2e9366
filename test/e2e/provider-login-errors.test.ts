/**
 * Provider logins that go wrong: bad requests from the editor, an authorization server that
 * answers garbage or says no, a login cancelled by a newer one or a logout, a login that times
 * out. Each is a clear error (the request's, or `$/showMessage` plus `providers/updated` for the
 * flows that finish in the background, as ECA's openai.clj "pro" login logs its "OAuth error"),
 * nothing is stored, and nothing is left listening (checked with a connect and with `ss -ltnp`).
 *
 * Requests are shaped as eca-emacs sends them (eca-providers.el `eca-providers--do-login`,
 * `eca-providers--handle-login-response`); ECA answers an unknown provider or method with an
 * error whose message names it (features/providers.clj `provider-login`, `start-login!` :default).
 */
import { describe, expect, it } from 'vitest';
import { ECA, type EcaProc, type Msg, useFakeLlmSuite, useTempDirs } from './harness.js';
import { bearerSeen, bootLogin, listeningPorts, portOf, providerUpdated, refused, storedSecrets, useFakeAuth } from './login-support.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const auth = useFakeAuth();
const boot = (login?: Record<string, unknown>) => bootLogin({ llm: llm(), auth: auth(), track, scratch, login });

function shown(p: EcaProc, re: RegExp, from: number, timeoutMs = 15_000): Promise<Msg> {
  return p.waitFor((m) => m.method === ECA.showMessage.method && re.test(m.params.message), `$/showMessage matching ${re}`, timeoutMs, from);
}

/** The loopback port of a browser login's authorize URL. */
function redirectPort(authorizeUrl: string): number {
  return portOf(new URL(authorizeUrl).searchParams.get('redirect_uri')!);
}

describe('bad requests', () => {
  it('unknown provider or method, a local provider, missing data, a code with no login waiting → −32602 with a clear message; the server keeps serving', async () => {
    const { p } = await boot();
    const cases: Array<[typeof ECA.providersLogin | typeof ECA.providersLoginInput | typeof ECA.providersLogout, unknown, RegExp]> = [
      [ECA.providersLogin, { provider: 'nope' }, /Unknown provider: nope/],
      [ECA.providersLogin, { provider: 'acme', method: 'sms' }, /Unsupported login method 'sms' for provider 'acme'.*browser, paste, device, api-key/],
      [ECA.providersLogin, { provider: 'ollama' }, /runs on this machine and needs no login/],
      [ECA.providersLogin, { method: 'api-key' }, /provider/],
      [ECA.providersLoginInput, { provider: 'acme', data: {} }, /needs "api-key"/],
      [ECA.providersLoginInput, { provider: 'acme', data: { 'api-key': 42 } }, /data.api-key/],
      [ECA.providersLoginInput, { provider: 'acme', data: { code: 'abc' } }, /No browser login is waiting for a code/],
      [ECA.providersLogout, { provider: 'nope' }, /Unknown provider: nope/],
    ];
    for (const [entry, params, message] of cases) {
      const res = await p.request(entry, params);
      expect(res.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
      expect(res.error!.message).toMatch(message);
    }
    expect((await p.request(ECA.providersList, {})).error).toBeUndefined();
  });
});

describe('an authorization server that answers garbage or says no (code pasted back)', () => {
  for (const [mode, message] of [
    ['garbage', /not JSON/],
    ['no-access-token', /without an access_token/],
    ['invalid_grant', /invalid_grant: The code has expired/],
  ] as const) {
    it(`token endpoint ${mode} → an error result naming it; nothing stored`, async () => {
      auth().tokenModes = [mode];
      const { p, pbHome } = await boot();
      const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'paste' });
      const location = new URL((await fetch(res.result.url, { redirect: 'manual' })).headers.get('location')!);
      const input = await p.request(ECA.providersLoginInput, { provider: 'acme', data: { code: location.searchParams.get('code') } });
      expect(input.error).toMatchObject({ code: -32803 });
      expect(input.error!.message).toMatch(message);
      expect(input.error!.message).toMatch(/nothing was stored/);
      expect(storedSecrets(pbHome)).toBe('');
      const listed = (await p.request(ECA.providersList, {})).result.providers.find((x: { id: string }) => x.id === 'acme');
      expect(listed.auth).toEqual({ status: 'unauthenticated' });
    });
  }

  it('a pasted code whose state is not ours is refused', async () => {
    const { p, pbHome } = await boot();
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'paste' });
    const location = new URL((await fetch(res.result.url, { redirect: 'manual' })).headers.get('location')!);
    const input = await p.request(ECA.providersLoginInput, { provider: 'acme', data: { code: `${location.searchParams.get('code')}#forged` } });
    expect(input.error?.message).toMatch(/state does not match/);
    expect(storedSecrets(pbHome)).toBe('');
    expect(auth().tokenRequests).toHaveLength(0);
  });
});

describe('loopback logins that fail, are cancelled or time out: nothing stays listening', () => {
  it('a redirect with the wrong state gets an error page and does not end the login: the right redirect then completes it', async () => {
    auth().authorizeMode = 'wrong-state';
    const { p, pbHome } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    const port = redirectPort(res.result.url);
    expect(listeningPorts(p.pid)).toContain(port);
    const page = await fetch(res.result.url);
    expect(page.status).toBe(400);
    // Any web page can send the browser to the listener: it must not cancel the user's login.
    expect(listeningPorts(p.pid)).toContain(port);
    expect(auth().tokenRequests).toHaveLength(0);
    expect(storedSecrets(pbHome)).toBe('');
    auth().authorizeMode = 'ok';
    expect((await fetch(res.result.url)).status).toBe(200);
    await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth', from);
    expect(p.messages.some((m) => m.method === ECA.showMessage.method && /Login to acme failed/.test(m.params.message))).toBe(false);
    expect(await refused(port)).toBe(true);
  });

  it('the user denies at the authorization server (error=access_denied on the redirect)', async () => {
    auth().authorizeMode = 'denied';
    const { p } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    await fetch(res.result.url);
    await shown(p, /Login to acme failed: .*access_denied/, from);
    expect(await refused(redirectPort(res.result.url))).toBe(true);
  });

  it('the token endpoint answers garbage after the redirect: a message, nothing stored', async () => {
    auth().tokenModes = ['garbage'];
    const { p, pbHome } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    await fetch(res.result.url);
    await shown(p, /Login to acme failed: The token endpoint answered HTTP 200 with something that is not JSON/, from);
    await providerUpdated(p, 'acme', (s) => s.auth.status === 'unauthenticated', from);
    expect(storedSecrets(pbHome)).toBe('');
    expect(await refused(redirectPort(res.result.url))).toBe(true);
  });

  it('a new login cancels the running one (its listener closes); a logout cancels that one', async () => {
    const { p } = await boot();
    const first = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    const second = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    const [a, b] = [redirectPort(first.result.url), redirectPort(second.result.url)];
    expect(a).not.toBe(b);
    await expect.poll(() => refused(a)).toBe(true);
    expect(await refused(b)).toBe(false);
    // The first login's link is dead: the browser cannot reach its listener.
    await expect(fetch(first.result.url)).rejects.toThrow();
    expect((await p.request(ECA.providersLogout, { provider: 'acme' })).result).toEqual({});
    await expect.poll(() => refused(b)).toBe(true);
    expect(listeningPorts(p.pid)).not.toContain(a);
    expect(listeningPorts(p.pid)).not.toContain(b);
    // A cancelled login is not a failure to report.
    expect(p.messages.some((m) => m.method === ECA.showMessage.method && /Login to acme failed/.test(m.params.message))).toBe(false);
  });

  it('a login that times out: the listener closes, a message says so, providers/updated shows unauthenticated', async () => {
    const { p } = await boot({ timeoutSeconds: 1 });
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    const port = redirectPort(res.result.url);
    const msg = await shown(p, /Login to acme failed: The login timed out after 1 s/, from);
    expect(msg.params.type).toBe('error');
    await providerUpdated(p, 'acme', (s) => s.auth.status === 'unauthenticated', from);
    expect(await refused(port)).toBe(true);
    expect(listeningPorts(p.pid)).not.toContain(port);
  });

  it('a pasted-code login that times out is forgotten: its code is refused afterwards', async () => {
    const { p } = await boot({ timeoutSeconds: 1 });
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'paste' });
    await shown(p, /Login to acme timed out after 1 s/, from);
    const location = new URL((await fetch(res.result.url, { redirect: 'manual' })).headers.get('location')!);
    const input = await p.request(ECA.providersLoginInput, { provider: 'acme', data: { code: location.searchParams.get('code') } });
    expect(input.error?.message).toMatch(/No browser login is waiting for a code/);
  });
});

describe('a refresh the authorization server refuses', () => {
  it('invalid_grant: a warning to log in again, providers/updated; the old token stays until it expires', async () => {
    auth().expiresIns = [30];
    // The code exchange succeeds; the refresh before the next prompt (30 s left) is refused.
    auth().tokenModes = ['ok', 'invalid_grant'];
    const { p } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    await fetch(res.result.url);
    await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth', from);
    // The prompt still goes out, with the old token.
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${auth().issued[0]}`);
    const msg = await shown(p, /Refreshing the login to acme failed: The token endpoint refused: invalid_grant.*Log in again/, from);
    expect(msg.params.type).toBe('warning');
    const upd = await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth', p.messages.indexOf(msg) - 1);
    // 30 s left: "expiring" (ECA's one-day window); it turns "expired" at expiresAt.
    expect(upd.params.auth.status).toBe('expiring');
    expect(auth().tokenRequests.map((r) => r.grantType)).toEqual(['authorization_code', 'refresh_token']);
  });
});

describe('device logins that fail', () => {
  for (const [outcome, message] of [
    ['access_denied', /The login was denied/],
    ['expired_token', /The device code expired/],
  ] as const) {
    it(`${outcome} → a message and providers/updated; polling stops`, async () => {
      auth().device = { ...auth().device, outcome };
      const { p, pbHome } = await boot();
      const from = p.messages.length;
      expect((await p.request(ECA.providersLogin, { provider: 'acme', method: 'device' })).result.action).toBe('device-code');
      await shown(p, message, from);
      await providerUpdated(p, 'acme', (s) => s.auth.status === 'unauthenticated', from);
      const polls = auth().tokenRequests.length;
      await new Promise((r) => setTimeout(r, 1500));
      expect(auth().tokenRequests.length).toBe(polls);
      expect(storedSecrets(pbHome)).toBe('');
    });
  }

  it('a device authorization endpoint that answers garbage → the login request fails with a clear message', async () => {
    const { p } = await boot({ deviceAuthorizationUrl: `${auth().url}/code` });
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'device' });
    // `/code` answers POST with 404 text: not JSON.
    expect(res.error).toMatchObject({ code: -32803 });
    expect(res.error!.message).toMatch(/device authorization endpoint answered HTTP 404 with something that is not JSON/);
  });

  it('a logout stops the polling', async () => {
    auth().device = { ...auth().device, pending: 100 };
    const { p } = await boot();
    await p.request(ECA.providersLogin, { provider: 'acme', method: 'device' });
    await expect.poll(() => auth().tokenRequests.length, { timeout: 5000 }).toBeGreaterThan(0);
    await p.request(ECA.providersLogout, { provider: 'acme' });
    const polls = auth().tokenRequests.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(auth().tokenRequests.length).toBeLessThanOrEqual(polls + 1);
  });
});

/**
 * Provider logins from the editor's Providers panel, each flow end to end over real stdio against
 * a fake authorization server (test/fixtures/fake-oauth.ts) and the fake LLM, which shows the key
 * the provider is then called with.
 *
 * What the client sends follows eca-emacs `eca-providers--do-login` and
 * `eca-providers--handle-login-response` (eca-providers.el): `providers/login` without a method,
 * then with the chosen one; `input` and `authorize` with fields → `providers/loginInput` with the
 * fields' values by key; `authorize` without fields and `device-code` → wait for
 * `providers/updated`. What the server answers, and in which order, follows ECA's
 * src/eca/features/providers.clj (`provider-login`, `provider-login-input`, `provider-logout`,
 * `sync-and-notify!`: `config/updated`, then `providers/updated`) and the per-provider
 * `start-login!` methods (llm_providers/openai.clj "pro": loopback; anthropic.clj "max": code paste;
 * copilot.clj "device": device flow).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ECA, EcaProc, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { bearerSeen, bootLogin, portOf, providerUpdated, refused, storedSecrets, useFakeAuth } from './login-support.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const auth = useFakeAuth();
const boot = (login?: Record<string, unknown>, home?: string) => bootLogin({ llm: llm(), auth: auth(), track, scratch, login, home });

describe('providers/list and the choice of method', () => {
  it('lists the built-in providers and the configured one with its login methods; local ones have none', async () => {
    const { p } = await boot();
    const res = await p.request(ECA.providersList, {});
    const byId = Object.fromEntries((res.result.providers as Array<{ id: string }>).map((x) => [x.id, x as any]));
    expect(Object.keys(byId)).toEqual(expect.arrayContaining(['openai', 'anthropic', 'ollama', 'acme']));
    expect(byId.openai).toMatchObject({ label: 'OpenAI', configured: false, auth: { status: 'unauthenticated' }, login: { methods: [{ key: 'api-key', label: 'Enter API key' }] } });
    expect(byId.ollama.login).toBeUndefined();
    expect(byId.acme).toMatchObject({ configured: true, auth: { status: 'unauthenticated' }, models: [{ id: 'm1' }] });
    expect(byId.acme.login.methods.map((m: { key: string }) => m.key)).toEqual(['browser', 'paste', 'device', 'api-key']);
    // The login's client config is not a "setting" the panel shows.
    expect(byId.acme.settings).toEqual({ api: 'openai-chat', url: `${llm().url}/v1` });

    // First round trip: no method → choose-method (ECA `provider-login`).
    const choose = await p.request(ECA.providersLogin, { provider: 'acme' });
    expect(choose.result).toEqual({ action: 'choose-method', methods: byId.acme.login.methods });
    // One method only → straight to it.
    expect((await p.request(ECA.providersLogin, { provider: 'openai' })).result).toEqual({ action: 'input', fields: [{ key: 'api-key', label: 'API Key', type: 'secret' }] });
  });
});

describe('API key', () => {
  it('is stored 0600, used as the bearer key, announced (config/updated then providers/updated), kept across a restart, and forgotten on logout', async () => {
    const { p, home, pbHome } = await boot();
    const key = 'acme-key-0123456789abcdef';
    expect((await p.request(ECA.providersLogin, { provider: 'acme', method: 'api-key' })).result).toEqual({ action: 'input', fields: [{ key: 'api-key', label: 'API Key', type: 'secret' }] });
    const from = p.messages.length;
    expect((await p.request(ECA.providersLoginInput, { provider: 'acme', data: { 'api-key': key } })).result).toEqual({ action: 'done' });
    const upd = await providerUpdated(p, 'acme', (s) => s.auth.status === 'authenticated', from);
    expect(upd.params.auth).toEqual({ status: 'authenticated', type: 'api-key', source: 'login', mode: 'manual' });
    const cfg = p.messages.findIndex((m, i) => i >= from && m.method === ECA.configUpdated.method);
    expect(cfg).toBeGreaterThanOrEqual(0);
    expect(cfg).toBeLessThan(p.messages.indexOf(upd));
    expect(JSON.stringify(upd)).not.toContain(key);
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${key}`);
    expect(statSync(join(pbHome, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(storedSecrets(pbHome)).toContain(key);

    // A new server with the same home uses the stored key.
    await p.stop();
    const again = await boot(undefined, home);
    const listed = (await again.p.request(ECA.providersList, {})).result.providers.find((x: { id: string }) => x.id === 'acme');
    expect(listed.auth).toEqual({ status: 'authenticated', type: 'api-key', source: 'login', mode: 'manual' });
    expect(await bearerSeen(again.p, llm())).toBe(`Bearer ${key}`);

    const before = again.p.messages.length;
    expect((await again.p.request(ECA.providersLogout, { provider: 'acme' })).result).toEqual({});
    await providerUpdated(again.p, 'acme', (s) => s.auth.status === 'unauthenticated', before);
    expect(storedSecrets(pbHome)).not.toContain(key);
    expect(await bearerSeen(again.p, llm())).not.toBe(`Bearer ${key}`);
  });

  // ECA features/providers.clj `build-provider-status`: every provider with stored auth is listed, so it can be logged out of.
  it("a login to a provider missing from this window's config is listed, can be logged out of, and is not dropped from the shared index meanwhile", async () => {
    const { p, home, pbHome } = await boot();
    await p.request(ECA.providersLogin, { provider: 'acme', method: 'api-key' });
    await p.request(ECA.providersLoginInput, { provider: 'acme', data: { 'api-key': 'acme-key-0123456789abcdef' } });
    await p.stop();
    // Another window whose config has no "acme".
    const other = track(new EcaProc({ home, config: { chat: { generateTitles: false, maxRetries: 0 } }, env: { PATCHBAY_SECRET_STORE: 'file' } }));
    await other.initialize(scratch(workspace()));
    const listed = (await other.request(ECA.providersList, {})).result.providers.find((x: { id: string }) => x.id === 'acme');
    expect(listed?.auth).toEqual({ status: 'authenticated', type: 'api-key', source: 'login', mode: 'manual' });
    expect(JSON.parse(readFileSync(join(pbHome, 'logins.json'), 'utf8'))).toEqual({ providers: ['acme'] });
    expect((await other.request(ECA.providersLogout, { provider: 'acme' })).result).toEqual({});
    expect(storedSecrets(pbHome)).not.toContain('acme-key-0123456789abcdef');
    expect((await other.request(ECA.providersList, {})).result.providers.some((x: { id: string }) => x.id === 'acme')).toBe(false);
  });

  it('a key in the config wins over a login, with a warning at login (ECA `key-auth-override-warning`, `resolve-auth-info`)', async () => {
    const { p } = await bootLogin({ llm: llm(), auth: auth(), track, scratch, key: 'config-key-0123456789' });
    const from = p.messages.length;
    expect((await p.request(ECA.providersLogin, { provider: 'acme', method: 'api-key' })).result.action).toBe('input');
    const warning = await p.waitFor((m) => m.method === ECA.showMessage.method && /already configured for acme/.test(m.params.message), 'the override warning', 5_000, from);
    expect(warning.params.type).toBe('warning');
    await p.request(ECA.providersLoginInput, { provider: 'acme', data: { 'api-key': 'login-key-0123456789' } });
    const upd = await providerUpdated(p, 'acme', () => true, from);
    expect(upd.params.auth).toEqual({ status: 'authenticated', type: 'api-key', source: 'config' });
    expect(await bearerSeen(p, llm())).toBe('Bearer config-key-0123456789');
  });
});

describe('OAuth: authorization code with PKCE on a loopback redirect (ECA openai.clj "pro")', () => {
  it('authorize without fields; the browser comes back to 127.0.0.1; the access token is the bearer key; the listener is gone', async () => {
    const { p, pbHome } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    expect(res.result).toMatchObject({ action: 'authorize', message: expect.any(String) });
    expect(res.result.fields).toBeUndefined();
    const url = new URL(res.result.url);
    expect(url.origin + url.pathname).toBe(`${auth().url}/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toBe('models.read chat');
    const redirect = url.searchParams.get('redirect_uri')!;
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);

    // The "browser": follows the authorization server's redirect to the loopback listener.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Login complete');

    const upd = await providerUpdated(p, 'acme', (s) => s.auth.source === 'login', from);
    expect(upd.params.auth).toMatchObject({ type: 'oauth', source: 'login', mode: 'browser', expiresAt: expect.any(Number) });
    // ECA: a token that ends within a day is "expiring" (the fake issues 2-hour tokens).
    expect(upd.params.auth.status).toBe('expiring');
    const [access, refresh] = auth().issued;
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${access}`);
    expect(storedSecrets(pbHome)).toContain(refresh);
    expect(await refused(portOf(redirect))).toBe(true);
    // The code exchange carried the verifier the fake checked against the challenge.
    expect(auth().tokenRequests.map((r) => r.grantType)).toEqual(['authorization_code']);
  });

  // ECA chat.clj `prompt` → login.clj `maybe-renew-auth-token!`: a token about to expire is renewed before the prompt is sent.
  it('a prompt with the token inside the refresh margin refreshes it first and uses the new one (providers/updated each time)', async () => {
    auth().expiresIns = [30, 7200];
    const { p } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    await fetch(res.result.url);
    await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth', from);
    // A just-issued 30 s token is not refreshed by its timer at once (that looped: a refresh per millisecond).
    expect(auth().tokenRequests.map((r) => r.grantType)).toEqual(['authorization_code']);
    const before = p.messages.length;
    // 30 s left is inside the margin: the prompt waits for the refresh and is sent with the new token.
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${auth().issued[2]}`);
    const refreshReq = auth().tokenRequests.find((r) => r.grantType === 'refresh_token');
    expect(refreshReq?.form.refresh_token).toBe(auth().issued[1]);
    // The status carries the new token's expiry (2 hours: "expiring" by ECA's one-day rule).
    const refreshed = await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth' && s.auth.expiresAt > Date.now() / 1000 + 3600, before);
    expect(refreshed.params.auth.status).toBe('expiring');
    expect(auth().tokenRequests.map((r) => r.grantType)).toEqual(['authorization_code', 'refresh_token']);
  });
});

describe('OAuth tokens of an Anthropic-API provider', () => {
  // ECA llm_providers/anthropic.clj: an OAuth token goes as `Authorization: Bearer` with the `oauth-2025-04-20` beta, never as `x-api-key`.
  it('are sent as a bearer token with the OAuth beta header', async () => {
    const { p } = await bootLogin({ llm: llm(), auth: auth(), track, scratch, api: 'anthropic' });
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'browser' });
    await fetch(res.result.url);
    await providerUpdated(p, 'acme', (s) => s.auth.type === 'oauth', from);
    const before = llm().requests.length;
    const r = await p.request(ECA.chatPrompt, { message: 'hi', model: 'acme/m1' });
    await p.turnDone(r.result.chatId);
    const sent = llm()
      .requests.slice(before)
      .find((x) => x.path.includes('/v1/messages'));
    expect(sent?.headers.authorization).toBe(`Bearer ${auth().issued[0]}`);
    expect(sent?.headers['x-api-key']).toBeUndefined();
    expect(sent?.headers['anthropic-beta']).toBe('oauth-2025-04-20');
  });
});

describe('OAuth: authorization code with the code pasted back (ECA anthropic.clj "max")', () => {
  it('authorize with a code field, then providers/loginInput {code} → done', async () => {
    const { p } = await boot();
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'paste' });
    expect(res.result).toMatchObject({ action: 'authorize', fields: [{ key: 'code', label: 'Authorization code', type: 'text' }] });
    const url = new URL(res.result.url);
    expect(url.searchParams.get('redirect_uri')).toBe(`${auth().url}/code`);
    // The browser lands on the server's page that shows `code#state`.
    const location = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')!);
    const pasted = `${location.searchParams.get('code')}#${location.searchParams.get('state')}`;
    const from = p.messages.length;
    expect((await p.request(ECA.providersLoginInput, { provider: 'acme', data: { code: pasted } })).result).toEqual({ action: 'done' });
    const upd = await providerUpdated(p, 'acme', (s) => s.auth.source === 'login', from);
    expect(upd.params.auth).toMatchObject({ type: 'oauth', mode: 'paste' });
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${auth().issued[0]}`);
  });
});

describe('OAuth: device code (RFC 8628; ECA copilot.clj "device")', () => {
  it('device-code action; polls through authorization_pending and slow_down; providers/updated when approved', async () => {
    auth().device = { ...auth().device, pending: 1, slowDown: 1 };
    const { p } = await boot();
    const from = p.messages.length;
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'device' });
    expect(res.result).toEqual({ action: 'device-code', url: `${auth().url}/activate`, code: 'WDJB-MJHT', message: expect.any(String) });
    // 1 s, 1 s, then 1 + 5 s after slow_down.
    const upd = await providerUpdated(p, 'acme', (s) => s.auth.source === 'login', from, 30_000);
    expect(upd.params.auth).toMatchObject({ type: 'oauth', mode: 'device' });
    expect(auth().tokenRequests.filter((r) => r.grantType === 'urn:ietf:params:oauth:grant-type:device_code')).toHaveLength(3);
    expect(await bearerSeen(p, llm())).toBe(`Bearer ${auth().issued.at(-2)}`);
  }, 45_000);
});

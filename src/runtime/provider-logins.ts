/**
 * Logins to LLM providers from the editor: an API key typed in, or OAuth 2.0 (authorization code
 * with PKCE on a loopback redirect or with the code pasted back, or the device grant), driven by
 * the provider's `login` config; no vendor's client id or secret is built in. What a login yields
 * is kept in the secret store (src/util/secrets.ts) under `provider/<id>` and used as that
 * provider's key (a config `key` still wins, then the login, then the environment, as in ECA).
 * OAuth tokens are refreshed before they expire.
 *
 * One login at a time per provider: a new login or a logout cancels the running one (its loopback
 * listener closes, its device polling stops). Protocol-free: the façade maps `LoginStep`s.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { ProviderConfig, ProviderLoginConfig } from '../peers/llm/index.js';
import { PRIVATE_FILE_MODE } from '../util/private-dir.js';
import { errorMessage, logger, rememberSecret } from '../util/log.js';
import { authorizeUrl, exchangeCode, OAuthError, pkce, pollDeviceToken, randomState, refreshTokens, startDeviceAuthorization, type Tokens } from '../util/oauth.js';
import { listenForRedirect } from '../util/oauth-loopback.js';
import type { SecretStore } from '../util/secrets.js';

const log = logger('login');

const DEFAULT_TIMEOUT_S = 300;
/** Refresh this long before the access token expires. */
const REFRESH_MARGIN_S = 60;
/** setTimeout's ceiling (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Providers that run on this machine: nothing to log in to. */
const LOCAL_APIS = new Set(['ollama', 'local']);

export type LoginMethodKey = 'api-key' | 'browser' | 'paste' | 'device';
export interface LoginMethod {
  key: LoginMethodKey;
  label: string;
}
export interface LoginField {
  key: string;
  label: string;
  type: 'secret' | 'text';
}

/** What the user does next, as the front end renders it. */
export type LoginStep =
  | { kind: 'choose'; methods: LoginMethod[] }
  /** Open `url`; with `fields`, then send them back (`input`); without, completion is announced as a change. */
  | { kind: 'authorize'; url: string; message: string; fields?: LoginField[] }
  | { kind: 'deviceCode'; url: string; code: string; message: string }
  | { kind: 'input'; fields: LoginField[] }
  | { kind: 'done' };

/** What is stored under `provider/<id>` (JSON). */
export type Credential = { type: 'api-key'; key: string } | { type: 'oauth'; mode: LoginMethodKey; accessToken: string; refreshToken?: string; expiresAt?: number };

/** Bad input from the front end (unknown provider or method, no login waiting for a code). */
export class LoginInputError extends Error {}
/** The login was tried and failed (the authorization server said no, or answered garbage). */
export class LoginFailedError extends Error {}

export interface ProviderLoginsOptions {
  store: SecretStore;
  /**
   * A file naming the providers with a stored login (names only, no secret): start-up looks
   * only those up, so a keychain is not asked once per provider at every start.
   */
  indexFile: string;
  /** The configured providers, read anew each time (the config may be reloaded). */
  providers: () => Record<string, ProviderConfig>;
  /** Every provider id patchbay can talk to (configured and built in). */
  known: () => string[];
  /** A provider's login state changed (logged in, out, refreshed, failed): re-resolve and tell. */
  changed: (id: string, modelsMayChange: boolean) => Promise<void>;
  /**
   * Where a key that wins over any login comes from (`key` in the config, or the environment
   * variable's name), for ECA's warning (`key-auth-override-warning`); undefined when none does.
   */
  overriddenBy: (id: string) => string | undefined;
  /** Something the user should read (a failed browser login, a refresh that failed). */
  notice: (type: 'info' | 'warning' | 'error', message: string) => void;
}

interface Pending {
  method: LoginMethodKey;
  abort: AbortController;
  /** `paste`: what the code exchange needs. */
  paste?: { verifier: string; state: string; redirectUri: string; login: ProviderLoginConfig; deadline: NodeJS.Timeout };
}

const secretKey = (id: string): string => `provider/${id}`;

export class ProviderLogins {
  private readonly creds = new Map<string, Credential>();
  private readonly pending = new Map<string, Pending>();
  private readonly refreshTimers = new Map<string, NodeJS.Timeout>();
  private disposed = false;

  constructor(private readonly o: ProviderLoginsOptions) {}

  /** Reads every known provider's stored login. A store that cannot be read is said once, not fatal. */
  async load(): Promise<void> {
    const stored = this.readIndex();
    for (const id of this.o.known().filter((k) => stored.has(k))) {
      try {
        const raw = await this.o.store.get(secretKey(id));
        const cred = raw ? parseCredential(raw) : undefined;
        if (raw && !cred) log.warn(`The stored login for provider "${id}" is not readable; log in again`);
        if (cred) {
          this.creds.set(id, cred);
          this.scheduleRefresh(id);
        }
      } catch (e) {
        log.warn(`Cannot read the stored login for provider "${id}": ${errorMessage(e)}`);
      }
    }
  }

  /** The keys logins provide, by provider (API keys and access tokens). */
  keys(): Record<string, string> {
    return Object.fromEntries([...this.creds].map(([id, c]) => [id, c.type === 'api-key' ? c.key : c.accessToken]));
  }

  credential(id: string): Credential | undefined {
    return this.creds.get(id);
  }

  get storeKind(): string {
    return `${this.o.store.kind} (${this.o.store.where})`;
  }

  /** The methods a provider offers: none for what runs locally; the OAuth ones its `login` config allows. */
  methods(id: string): LoginMethod[] {
    const config = this.o.providers()[id];
    const api = config?.api ?? (id === 'ollama' || id === 'local' ? id : undefined);
    if (api && LOCAL_APIS.has(api)) return [];
    const l = config?.login;
    const out: LoginMethod[] = [];
    if (l?.authorizationUrl && l.tokenUrl) {
      out.push({ key: 'browser', label: 'Browser login (OAuth)' });
      if (l.redirectUri) out.push({ key: 'paste', label: 'Browser login, then paste the code' });
    }
    if (l?.deviceAuthorizationUrl && l.tokenUrl) out.push({ key: 'device', label: 'Device code (enter a code in the browser)' });
    out.push({ key: 'api-key', label: 'Enter API key' });
    return out;
  }

  /** `providers/login`: no method → the choice (or the only method); a method → its first step. */
  async login(id: string, method?: string): Promise<LoginStep> {
    const methods = this.knownMethods(id);
    if (method === undefined) {
      if (methods.length > 1) return { kind: 'choose', methods };
      method = methods[0].key;
    }
    const m = methods.find((x) => x.key === method);
    if (!m) throw new LoginInputError(`Unsupported login method '${method}' for provider '${id}' (it offers: ${methods.map((x) => x.key).join(', ')})`);
    this.cancel(id, 'a new login started');
    const winner = this.o.overriddenBy(id);
    if (winner) {
      this.o.notice(
        'warning',
        `An API key is already configured for ${id} (${winner}). A configured key takes precedence over a login, so patchbay keeps using it after you log in; remove it to use the login.`,
      );
    }
    if (m.key === 'api-key') return { kind: 'input', fields: [{ key: 'api-key', label: 'API Key', type: 'secret' }] };
    const login = this.o.providers()[id]!.login!;
    if (m.key === 'browser') return this.startBrowser(id, login);
    if (m.key === 'paste') return this.startPaste(id, login);
    return this.startDevice(id, login);
  }

  /** `providers/loginInput`: an API key, or the code of a `paste` login. */
  async input(id: string, data: Record<string, string>): Promise<LoginStep> {
    this.knownMethods(id);
    if (data.code !== undefined) return this.finishPaste(id, data.code);
    const key = data['api-key']?.trim();
    if (!key) throw new LoginInputError(`providers/loginInput for '${id}' needs "api-key" (or "code" after a browser login)`);
    this.cancel(id, 'an API key was entered');
    await this.save(id, { type: 'api-key', key: rememberSecret(key) });
    return { kind: 'done' };
  }

  /** `providers/logout`: forgets the stored login (and cancels one running). */
  async logout(id: string): Promise<void> {
    this.knownMethods(id);
    this.cancel(id, 'logged out');
    this.clearRefresh(id);
    const had = this.creds.delete(id);
    await this.o.store.delete(secretKey(id));
    this.writeIndex();
    await this.o.changed(id, had);
  }

  dispose(): void {
    this.disposed = true;
    for (const id of [...this.pending.keys()]) this.cancel(id, 'patchbay is shutting down');
    for (const id of [...this.refreshTimers.keys()]) this.clearRefresh(id);
  }

  private knownMethods(id: string): LoginMethod[] {
    if (!this.o.known().includes(id)) throw new LoginInputError(`Unknown provider: ${id}`);
    const methods = this.methods(id);
    if (!methods.length) throw new LoginInputError(`Provider '${id}' runs on this machine and needs no login`);
    return methods;
  }

  private cancel(id: string, why: string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (p.paste) clearTimeout(p.paste.deadline);
    log.info(`login to "${id}" (${p.method}) cancelled: ${why}`);
    p.abort.abort(new Error(`cancelled: ${why}`));
  }

  private begin(id: string, method: LoginMethodKey): Pending {
    const p: Pending = { method, abort: new AbortController() };
    this.pending.set(id, p);
    return p;
  }

  /** Ends a background login: tokens stored and announced, or the failure said and announced. */
  private async settle(id: string, p: Pending, work: Promise<Tokens>): Promise<void> {
    try {
      const tokens = await work;
      if (this.pending.get(id) !== p) return;
      this.pending.delete(id);
      await this.save(id, oauthCredential(p.method, tokens));
    } catch (e) {
      // Cancelled by a newer login or a logout: that one speaks for itself.
      if (p.abort.signal.aborted || this.pending.get(id) !== p) return;
      this.pending.delete(id);
      const message = `Login to ${id} failed: ${errorMessage(e)}`;
      log.warn(message);
      this.o.notice('error', message);
      await this.o.changed(id, false);
    }
  }

  private async startBrowser(id: string, login: ProviderLoginConfig): Promise<LoginStep> {
    const p = this.begin(id, 'browser');
    const state = randomState();
    const codes = pkce();
    let redirect;
    try {
      redirect = await listenForRedirect({ state, timeoutMs: timeoutMs(login), signal: p.abort.signal });
    } catch (e) {
      if (this.pending.get(id) === p) this.pending.delete(id);
      throw new LoginFailedError(`Login to ${id} failed: cannot listen for the browser's redirect on 127.0.0.1: ${errorMessage(e)}`);
    }
    const url = authorizeUrl({
      authorizationUrl: login.authorizationUrl!,
      clientId: login.clientId,
      redirectUri: redirect.redirectUri,
      state,
      pkce: codes,
      scopes: login.scopes,
      extra: login.authorizationParams,
    });
    const tokens = redirect.code.then((code) =>
      exchangeCode({ tokenUrl: login.tokenUrl!, clientId: login.clientId, code, redirectUri: redirect.redirectUri, verifier: codes.verifier, signal: p.abort.signal }),
    );
    void this.settle(id, p, tokens);
    return { kind: 'authorize', url, message: 'Complete the login in your browser; patchbay finishes it automatically.' };
  }

  private startPaste(id: string, login: ProviderLoginConfig): LoginStep {
    const p = this.begin(id, 'paste');
    const state = randomState();
    const codes = pkce();
    const redirectUri = login.redirectUri!;
    const deadline = setTimeout(() => {
      if (this.pending.get(id) !== p) return;
      this.cancel(id, 'timed out');
      this.o.notice('warning', `Login to ${id} timed out after ${Math.round(timeoutMs(login) / 1000)} s without the code being pasted; start it again`);
      void this.o.changed(id, false);
    }, timeoutMs(login));
    deadline.unref();
    p.paste = { verifier: codes.verifier, state, redirectUri, login, deadline };
    const url = authorizeUrl({ authorizationUrl: login.authorizationUrl!, clientId: login.clientId, redirectUri, state, pkce: codes, scopes: login.scopes, extra: login.authorizationParams });
    return {
      kind: 'authorize',
      url,
      message: 'Complete the login in your browser, then paste the authorization code',
      fields: [{ key: 'code', label: 'Authorization code', type: 'text' }],
    };
  }

  private async finishPaste(id: string, pasted: string): Promise<LoginStep> {
    const p = this.pending.get(id);
    if (!p?.paste) throw new LoginInputError(`No browser login is waiting for a code for '${id}': start one with providers/login`);
    // Some servers show `code#state`: the state must be ours.
    const [code, state] = pasted.trim().split('#', 2);
    if (!code) throw new LoginInputError('The authorization code is empty');
    if (state !== undefined && state !== p.paste.state) {
      this.cancel(id, 'wrong state');
      throw new LoginFailedError('The pasted code belongs to another login (its state does not match); nothing was stored');
    }
    const { login, redirectUri, verifier, deadline } = p.paste;
    clearTimeout(deadline);
    this.pending.delete(id);
    let tokens: Tokens;
    try {
      tokens = await exchangeCode({ tokenUrl: login.tokenUrl!, clientId: login.clientId, code: rememberSecret(code), redirectUri, verifier, signal: p.abort.signal });
    } catch (e) {
      throw new LoginFailedError(`Login to ${id} failed: ${errorMessage(e)}; nothing was stored`);
    }
    await this.save(id, oauthCredential('paste', tokens));
    return { kind: 'done' };
  }

  private async startDevice(id: string, login: ProviderLoginConfig): Promise<LoginStep> {
    const p = this.begin(id, 'device');
    let device;
    try {
      device = await startDeviceAuthorization({ deviceAuthorizationUrl: login.deviceAuthorizationUrl!, clientId: login.clientId, scopes: login.scopes, signal: p.abort.signal });
    } catch (e) {
      if (this.pending.get(id) === p) this.pending.delete(id);
      throw new LoginFailedError(`Login to ${id} failed: ${errorMessage(e)}`);
    }
    // Our own deadline too: a server whose code lives for hours must not keep us polling.
    const ours = Math.min(device.expiresAtMs, Date.now() + timeoutMs(login));
    void this.settle(id, p, pollDeviceToken({ tokenUrl: login.tokenUrl!, clientId: login.clientId, device: { ...device, expiresAtMs: ours }, signal: p.abort.signal }));
    return { kind: 'deviceCode', url: device.verificationUriComplete ?? device.verificationUri, code: device.userCode, message: 'Enter this code at the URL above to finish the login.' };
  }

  private async save(id: string, cred: Credential): Promise<void> {
    await this.o.store.set(secretKey(id), JSON.stringify(cred));
    this.creds.set(id, cred);
    this.writeIndex();
    // A refresh that lands during shutdown is kept (the server may have rotated the refresh token), not announced.
    if (this.disposed) return;
    this.scheduleRefresh(id);
    await this.o.changed(id, true);
  }

  private readIndex(): Set<string> {
    try {
      if (!existsSync(this.o.indexFile)) return new Set();
      const parsed = JSON.parse(readFileSync(this.o.indexFile, 'utf8')) as { providers?: unknown };
      return new Set(Array.isArray(parsed.providers) ? parsed.providers.filter((x): x is string => typeof x === 'string') : []);
    } catch (e) {
      log.warn(`Cannot read ${this.o.indexFile} (${errorMessage(e)}); stored logins are not loaded`);
      return new Set();
    }
  }

  private writeIndex(): void {
    const ids = [...this.creds.keys()].sort();
    try {
      if (ids.length) writeFileSync(this.o.indexFile, JSON.stringify({ providers: ids }) + '\n', { mode: PRIVATE_FILE_MODE });
      else rmSync(this.o.indexFile, { force: true });
    } catch (e) {
      log.warn(`Cannot write ${this.o.indexFile}: ${errorMessage(e)}`);
    }
  }

  private clearRefresh(id: string): void {
    clearTimeout(this.refreshTimers.get(id));
    this.refreshTimers.delete(id);
  }

  /** An OAuth login with a refresh token and an expiry is refreshed REFRESH_MARGIN_S before it ends. */
  private scheduleRefresh(id: string): void {
    this.clearRefresh(id);
    const c = this.creds.get(id);
    if (this.disposed || c?.type !== 'oauth' || !c.refreshToken || c.expiresAt === undefined) return;
    const ms = Math.min(MAX_TIMER_MS, Math.max(0, (c.expiresAt - REFRESH_MARGIN_S) * 1000 - Date.now()));
    const t = setTimeout(() => void this.refresh(id), ms);
    t.unref();
    this.refreshTimers.set(id, t);
  }

  private async refresh(id: string): Promise<void> {
    this.refreshTimers.delete(id);
    const c = this.creds.get(id);
    const login = this.o.providers()[id]?.login;
    if (c?.type !== 'oauth' || !c.refreshToken) return;
    if (!login?.tokenUrl) {
      log.warn(`The login to "${id}" cannot be refreshed: its config has no login.tokenUrl`);
      return;
    }
    // Another patchbay sharing the store may have refreshed it already (and its refresh token
    // may have been rotated, leaving ours spent): take that one instead.
    const theirs = await this.o.store.get(secretKey(id)).then(
      (raw) => (raw ? parseCredential(raw) : undefined),
      () => undefined,
    );
    if (theirs?.type === 'oauth' && theirs.accessToken !== c.accessToken && (theirs.expiresAt ?? Infinity) > (c.expiresAt ?? 0)) {
      if (this.creds.get(id) !== c) return;
      log.info(`the login to "${id}" was refreshed by another patchbay; using its token`);
      this.creds.set(id, theirs);
      this.scheduleRefresh(id);
      await this.o.changed(id, true);
      return;
    }
    try {
      const tokens = await refreshTokens({ tokenUrl: login.tokenUrl, clientId: login.clientId, refreshToken: c.refreshToken });
      // Logged out (or in anew) while the refresh ran: that one wins.
      if (this.creds.get(id) !== c) return;
      log.info(`refreshed the login to "${id}"`);
      await this.save(id, oauthCredential(c.mode, tokens));
    } catch (e) {
      if (this.creds.get(id) !== c) return;
      const message = `Refreshing the login to ${id} failed: ${errorMessage(e)}. ${e instanceof OAuthError && e.code === 'invalid_grant' ? 'Log in again.' : 'patchbay tries again in a minute.'}`;
      log.warn(message);
      this.o.notice('warning', message);
      if (!(e instanceof OAuthError && e.code === 'invalid_grant') && !this.disposed) {
        const t = setTimeout(() => void this.refresh(id), 60_000);
        t.unref();
        this.refreshTimers.set(id, t);
      }
      await this.o.changed(id, false);
    }
  }
}

function timeoutMs(login: ProviderLoginConfig): number {
  return (login.timeoutSeconds ?? DEFAULT_TIMEOUT_S) * 1000;
}

function oauthCredential(mode: LoginMethodKey, t: Tokens): Credential {
  return { type: 'oauth', mode, accessToken: t.accessToken, ...(t.refreshToken ? { refreshToken: t.refreshToken } : {}), ...(t.expiresAt !== undefined ? { expiresAt: t.expiresAt } : {}) };
}

function parseCredential(raw: string): Credential | undefined {
  try {
    const c = JSON.parse(raw) as Partial<Record<string, unknown>>;
    if (c.type === 'api-key' && typeof c.key === 'string') return { type: 'api-key', key: rememberSecret(c.key) };
    if (c.type === 'oauth' && typeof c.accessToken === 'string') {
      rememberSecret(c.accessToken);
      if (typeof c.refreshToken === 'string') rememberSecret(c.refreshToken);
      return c as Credential;
    }
  } catch {
    /* not JSON: reported by the caller */
  }
  return undefined;
}

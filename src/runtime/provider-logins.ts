/**
 * Logins to LLM providers from the editor: an API key typed in, or OAuth 2.0 (authorization code
 * with PKCE on a loopback redirect or with the code pasted back, or the device grant), driven by
 * the provider's `login` config; no vendor's client id or secret is built in. What a login yields
 * is kept in the secret store (src/util/secrets.ts) under `provider/<id>` and used as that
 * provider's key (a config `key` still wins, then the login, then the environment, as in ECA).
 * OAuth tokens are refreshed before they expire.
 *
 * One login at a time per provider: a new login or a logout cancels the running one (its loopback
 * listener closes, its device polling stops). Each login, key entry and logout bumps the provider's
 * generation; whatever started under an older generation stores nothing (checked after every wait),
 * and writes to the store are queued per provider so the newest always lands last.
 *
 * Several patchbay processes may share one store (two editor windows): a refresh runs under a lock
 * file, re-reads the store first and takes what another process stored (a newer token, or nothing
 * after a logout there), as ECA's `login.clj` `renew-auth!` does (ECA #462). Refreshes are also
 * done on demand before a model is used (ECA's `maybe-renew-auth-token!`): timers do not run while
 * a laptop sleeps. Protocol-free: the façade maps `LoginStep`s.
 */
import { dirname, join } from 'node:path';
import type { ProviderConfig, ProviderLoginConfig } from '../peers/llm/index.js';
import { errorMessage, logger, rememberSecret } from '../util/log.js';
import {
  authorizeUrl,
  exchangeCode,
  isPermanentOAuthFailure,
  OAuthError,
  isTemporaryOAuthFailure,
  pkce,
  pollDeviceToken,
  randomState,
  refreshTokens,
  startDeviceAuthorization,
  type Tokens,
} from '../util/oauth.js';
import { listenForRedirect } from '../util/oauth-loopback.js';
import { withFileLock } from '../util/file-lock.js';
import type { SecretStore } from '../util/secrets.js';
import { readLoginIndex, updateLoginIndex } from './login-index.js';
import { type Credential, type LoginMethodKey, oauthCredential, parseCredential, sameCredential } from './login-credential.js';
import { backoffMs, refreshDelayMs, refreshDue } from './login-refresh-timing.js';

const log = logger('login');

const DEFAULT_TIMEOUT_S = 300;
/** The config schema's ceiling too (src/peers/llm/config.ts); kept here for logins built in code. */
const MAX_TIMEOUT_S = 3600;
/** A refresh lock older than this belongs to a patchbay that died mid-refresh (a token request times out after 30 s). */
const LOCK_STALE_MS = 60_000;
const LOCK_WAIT_MS = 75_000;
/** Providers that run on this machine: nothing to log in to. */
const LOCAL_APIS = new Set(['ollama', 'local']);

export type { LoginMethodKey } from './login-credential.js';
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

export type { Credential } from './login-credential.js';

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
  /** The provider's generation this login started in. */
  gen: number;
  /** `paste`: what the code exchange needs; `exchanging` once a code is being traded. */
  paste?: { verifier: string; state: string; redirectUri: string; login: ProviderLoginConfig; deadline: NodeJS.Timeout; exchanging?: boolean };
}

const secretKey = (id: string): string => `provider/${id}`;

export class ProviderLogins {
  private readonly creds = new Map<string, Credential>();
  private readonly pending = new Map<string, Pending>();
  private readonly refreshTimers = new Map<string, NodeJS.Timeout>();
  /** When an OAuth token runs out: the status turns "expired", and the editor is told. */
  private readonly expiryTimers = new Map<string, NodeJS.Timeout>();
  private readonly gens = new Map<string, number>();
  /** The tail of each provider's queue of store writes. */
  private readonly writes = new Map<string, Promise<unknown>>();
  private readonly refreshing = new Map<string, Promise<void>>();
  private readonly lastAttempt = new Map<string, number>();
  /** Failed refreshes in a row, by provider: the user hears of the first only. */
  private readonly failures = new Map<string, number>();
  /** Credentials whose refresh token the server refused for good: not tried again. */
  private readonly spent = new WeakSet<Credential>();
  private disposed = false;
  /** Aborted on dispose: a refresh waiting for another window's lock stops waiting. */
  private readonly stopping = new AbortController();

  constructor(private readonly o: ProviderLoginsOptions) {}

  /** Reads the stored login of every provider the index names. A store that cannot be read is said, not fatal. */
  async load(): Promise<void> {
    // Every id the index names, configured now or not: a login of a provider that is missing from
    // this window's config is kept (and listed), not dropped from the shared index.
    for (const id of readLoginIndex(this.o.indexFile)) {
      try {
        const raw = await this.o.store.get(secretKey(id));
        const cred = raw ? parseCredential(raw) : undefined;
        if (raw && !cred) log.warn(`The stored login for provider "${id}" is not readable; log in again`);
        if (cred) {
          this.creds.set(id, cred);
          this.scheduleRefresh(id);
          this.scheduleExpiry(id);
        }
      } catch (e) {
        log.warn(`Cannot read the stored login for provider "${id}": ${errorMessage(e)}`);
      }
    }
  }

  /**
   * Takes what another process (`patchbay login`, another window) stored since: re-reads the index
   * and the stored login of every provider it names or we hold, and adopts each that differs.
   * A login running here is left alone (it stores last). Each change is announced; returns the
   * providers whose login changed.
   */
  async reload(): Promise<string[]> {
    const changed: string[] = [];
    for (const id of new Set([...readLoginIndex(this.o.indexFile), ...this.creds.keys()])) {
      if (this.pending.has(id)) continue;
      let theirs: Credential | undefined;
      try {
        theirs = await this.readStored(id);
      } catch (e) {
        log.warn(`Cannot read the stored login for provider "${id}": ${errorMessage(e)}`);
        continue;
      }
      const ours = this.creds.get(id);
      if (ours ? sameCredential(theirs, ours) : !theirs) continue;
      this.takeTheirs(id, theirs);
      changed.push(id);
    }
    for (const id of changed) await this.announce(id, true);
    return changed;
  }

  /** The keys logins provide, by provider (API keys and access tokens). */
  keys(): Record<string, string> {
    return Object.fromEntries([...this.creds].map(([id, c]) => [id, c.type === 'api-key' ? c.key : c.accessToken]));
  }

  credential(id: string): Credential | undefined {
    return this.creds.get(id);
  }

  /** The providers with a login, configured or not (ECA lists every provider with stored auth). */
  storedIds(): string[] {
    return [...this.creds.keys()];
  }

  get storeKind(): string {
    return `${this.o.store.kind} (${this.o.store.where})`;
  }

  /**
   * Before a model of `id` is used: a token inside the refresh margin (or past it, after a sleep)
   * is refreshed now, and the caller waits for it. At most one attempt per MIN_GAP_MS.
   * `signal` (the turn or request waiting) ends the wait, not the refresh: others may share it.
   */
  async ensureFresh(id: string, signal?: AbortSignal): Promise<void> {
    const c = this.creds.get(id);
    let running = this.refreshing.get(id);
    if (!running) {
      if (c?.type !== 'oauth' || !c.refreshToken || c.expiresAt === undefined || this.spent.has(c)) return;
      if (!refreshDue({ expiresAt: c.expiresAt, nowMs: Date.now(), lastAttemptMs: this.lastAttempt.get(id) })) return;
      running = this.refresh(id);
    }
    await untilAborted(running, signal);
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
    await this.commit(id, this.bump(id), { type: 'api-key', key: rememberSecret(key) });
    await this.announce(id, true);
    return { kind: 'done' };
  }

  /** `providers/logout`: forgets the stored login (and cancels one running). Any provider with a stored login may be logged out of. */
  async logout(id: string): Promise<void> {
    if (!this.creds.has(id) && !readLoginIndex(this.o.indexFile).has(id)) this.knownMethods(id);
    this.cancel(id, 'logged out');
    this.clearRefresh(id);
    const had = this.creds.has(id);
    // The store first: if it cannot delete, the error is the answer and memory stays as it was.
    await this.commit(id, this.bump(id), undefined);
    await this.announce(id, had);
  }

  dispose(): void {
    this.disposed = true;
    this.stopping.abort(new Error('patchbay is shutting down'));
    for (const id of [...this.pending.keys()]) this.cancel(id, 'patchbay is shutting down');
    for (const id of [...this.refreshTimers.keys()]) this.clearRefresh(id);
    for (const t of this.expiryTimers.values()) clearTimeout(t);
  }

  private knownMethods(id: string): LoginMethod[] {
    if (!this.o.known().includes(id)) throw new LoginInputError(`Unknown provider: ${id}`);
    const methods = this.methods(id);
    if (!methods.length) throw new LoginInputError(`Provider '${id}' runs on this machine and needs no login`);
    return methods;
  }

  private bump(id: string): number {
    const g = (this.gens.get(id) ?? 0) + 1;
    this.gens.set(id, g);
    return g;
  }

  private isCurrent(id: string, gen: number): boolean {
    return (this.gens.get(id) ?? 0) === gen;
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
    const p: Pending = { method, abort: new AbortController(), gen: this.bump(id) };
    this.pending.set(id, p);
    return p;
  }

  /** Ends a background login: tokens stored and announced, or the failure said and announced. */
  private async settle(id: string, p: Pending, login: ProviderLoginConfig, work: Promise<Tokens>): Promise<void> {
    // Whether the tokens came and only storing them failed: then nobody else will say so.
    let saving = false;
    try {
      const tokens = await work;
      if (!this.isCurrent(id, p.gen)) return;
      saving = true;
      const stored = await this.commit(id, p.gen, oauthCredential(p.method, tokens, login));
      if (this.pending.get(id) === p) this.pending.delete(id);
      if (stored) await this.announce(id, true);
    } catch (e) {
      if (this.pending.get(id) === p) this.pending.delete(id);
      // Cancelled by a newer login or a logout: that one speaks for itself.
      if (!saving && (p.abort.signal.aborted || !this.isCurrent(id, p.gen))) return;
      const message = saving ? `Login to ${id} succeeded, but storing it failed: ${errorMessage(e)}` : `Login to ${id} failed: ${errorMessage(e)}`;
      log.warn(message);
      this.o.notice('error', message);
      await this.announce(id, false);
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
    void this.settle(id, p, login, tokens);
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
    if (!p?.paste || p.paste.exchanging) throw new LoginInputError(`No browser login is waiting for a code for '${id}': start one with providers/login`);
    // Some servers show `code#state`: the state must be ours.
    const [code, state] = pasted.trim().split('#', 2);
    if (!code) throw new LoginInputError('The authorization code is empty');
    if (state !== undefined && state !== p.paste.state) {
      this.cancel(id, 'wrong state');
      throw new LoginFailedError('The pasted code belongs to another login (its state does not match); nothing was stored');
    }
    const { login, redirectUri, verifier, deadline } = p.paste;
    clearTimeout(deadline);
    // Still pending while the code is traded: a logout or a new login meanwhile aborts the exchange.
    p.paste.exchanging = true;
    try {
      const tokens = await exchangeCode({ tokenUrl: login.tokenUrl!, clientId: login.clientId, code: rememberSecret(code), redirectUri, verifier, signal: p.abort.signal });
      if (!this.isCurrent(id, p.gen) || !(await this.commit(id, p.gen, oauthCredential('paste', tokens, login)))) {
        throw new LoginFailedError(`Login to ${id} was cancelled (a logout or another login came first); nothing was stored`);
      }
    } catch (e) {
      if (e instanceof LoginFailedError) throw e;
      throw new LoginFailedError(`Login to ${id} failed: ${errorMessage(e)}; nothing was stored`);
    } finally {
      if (this.pending.get(id) === p) this.pending.delete(id);
    }
    await this.announce(id, true);
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
    void this.settle(id, p, login, pollDeviceToken({ tokenUrl: login.tokenUrl!, clientId: login.clientId, device: { ...device, expiresAtMs: ours }, signal: p.abort.signal }));
    return { kind: 'deviceCode', url: device.verificationUriComplete ?? device.verificationUri, code: device.userCode, message: 'Enter this code at the URL above to finish the login.' };
  }

  /**
   * Stores `cred` (or deletes the login) unless a newer login or logout took over first, then
   * takes it in memory and in the index. Queued per provider: a newer action's write, queued
   * after, always lands last. False when it was superseded and nothing was written.
   */
  private commit(id: string, gen: number, cred: Credential | undefined): Promise<boolean> {
    const run = (this.writes.get(id) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        if (!this.isCurrent(id, gen)) return false;
        if (cred) await this.o.store.set(secretKey(id), JSON.stringify(cred));
        else await this.o.store.delete(secretKey(id));
        // Tokens committed are just issued: how long they live bounds the next refresh.
        this.adopt(id, cred, cred?.type === 'oauth' && cred.expiresAt !== undefined ? cred.expiresAt - Math.floor(Date.now() / 1000) : undefined);
        await this.updateIndex(id, cred !== undefined);
        return true;
      });
    this.writes.set(id, run);
    return run;
  }

  /** Takes `cred` (what the store holds now) as the provider's login in memory. */
  private adopt(id: string, cred: Credential | undefined, issuedLifetimeS?: number): void {
    if (cred) this.creds.set(id, cred);
    else this.creds.delete(id);
    this.failures.delete(id);
    // A refresh that lands during shutdown is kept (the server may have rotated the refresh token), not scheduled.
    this.scheduleRefresh(id, issuedLifetimeS);
    this.scheduleExpiry(id);
  }

  private async announce(id: string, modelsMayChange: boolean): Promise<void> {
    if (!this.disposed) await this.o.changed(id, modelsMayChange);
  }

  /** The index is shared by every patchbay on this PATCHBAY_HOME: changed one id at a time, under a lock. */
  private async updateIndex(id: string, present: boolean): Promise<void> {
    try {
      await withFileLock(this.lockFile('index'), { staleMs: 10_000, waitMs: 15_000 }, async () => updateLoginIndex(this.o.indexFile, id, present));
    } catch (e) {
      log.warn(`Cannot update ${this.o.indexFile}: ${errorMessage(e)}`);
    }
  }

  private lockFile(name: string): string {
    return join(dirname(this.o.indexFile), 'locks', `login-${encodeURIComponent(name)}.lock`);
  }

  private clearRefresh(id: string): void {
    clearTimeout(this.refreshTimers.get(id));
    this.refreshTimers.delete(id);
  }

  /** A token that runs out unrefreshed (refresh failed, or none possible) is announced as expired. */
  private scheduleExpiry(id: string): void {
    clearTimeout(this.expiryTimers.get(id));
    this.expiryTimers.delete(id);
    const c = this.creds.get(id);
    if (this.disposed || c?.type !== 'oauth' || c.expiresAt === undefined) return;
    const ms = c.expiresAt * 1000 - Date.now();
    if (ms <= 0 || ms > 2 ** 31 - 1) return;
    const t = setTimeout(() => {
      this.expiryTimers.delete(id);
      if (this.creds.get(id) === c) void this.announce(id, false);
    }, ms);
    t.unref();
    this.expiryTimers.set(id, t);
  }

  /** An OAuth login with a refresh token and an expiry is refreshed before it ends (./login-refresh-timing.ts). */
  private scheduleRefresh(id: string, issuedLifetimeS?: number, retryInMs?: number): void {
    this.clearRefresh(id);
    const c = this.creds.get(id);
    if (this.disposed || c?.type !== 'oauth' || !c.refreshToken || c.expiresAt === undefined || this.spent.has(c)) return;
    const ms = retryInMs ?? refreshDelayMs({ expiresAt: c.expiresAt, nowMs: Date.now(), lastAttemptMs: this.lastAttempt.get(id), issuedLifetimeS });
    const t = setTimeout(() => void this.refresh(id), ms);
    t.unref();
    this.refreshTimers.set(id, t);
  }

  /** One refresh at a time per provider: a timer and a prompt asking together share it. */
  private refresh(id: string): Promise<void> {
    let r = this.refreshing.get(id);
    if (!r) {
      r = this.refreshOnce(id).finally(() => this.refreshing.delete(id));
      this.refreshing.set(id, r);
    }
    return r;
  }

  private async refreshOnce(id: string): Promise<void> {
    this.clearRefresh(id);
    const c = this.creds.get(id);
    const gen = this.gens.get(id) ?? 0;
    if (c?.type !== 'oauth' || !c.refreshToken || this.spent.has(c)) return;
    const login = this.o.providers()[id]?.login;
    const tokenUrl = c.tokenUrl ?? login?.tokenUrl;
    const clientId = c.clientId ?? login?.clientId;
    // Set before the checks below: a login that cannot be refreshed is warned about once per gap, not per request.
    this.lastAttempt.set(id, Date.now());
    if (!tokenUrl || !clientId) {
      log.warn(`The login to "${id}" cannot be refreshed: its config has no login.tokenUrl`);
      return;
    }
    const refreshToken = c.refreshToken;
    const superseded = () => !this.isCurrent(id, gen) || this.creds.get(id) !== c;
    try {
      // Another patchbay sharing the store refreshes under the same lock: one at a time, and each
      // looks at the store first (its refresh token may have been rotated, leaving ours spent).
      const outcome = await withFileLock(this.lockFile(id), { staleMs: LOCK_STALE_MS, waitMs: LOCK_WAIT_MS, signal: this.stopping.signal }, async () => {
        if (superseded()) return 'superseded';
        const theirs = await this.readStored(id);
        if (superseded()) return 'superseded';
        if (!sameCredential(theirs, c)) return this.takeTheirs(id, theirs);
        try {
          const tokens = await refreshTokens({ tokenUrl, clientId, refreshToken });
          if (superseded()) return 'superseded';
          // Not stored (a login or logout came meanwhile): nothing to announce.
          if (!(await this.commit(id, gen, oauthCredential(c.mode, tokens, { tokenUrl, clientId })))) return 'superseded';
          return 'refreshed';
        } catch (e) {
          if (!isPermanentOAuthFailure(e)) throw e;
          // A patchbay not using our lock may have refreshed with the same refresh token: take its credential.
          const now = await this.readStored(id).catch(() => c);
          if (!superseded() && !sameCredential(now, c)) return this.takeTheirs(id, now);
          throw e;
        }
      });
      if (outcome === 'superseded') return;
      if (outcome === 'refreshed') log.info(`refreshed the login to "${id}"`);
      await this.announce(id, true);
    } catch (e) {
      if (superseded() || this.disposed) return;
      this.refreshFailed(id, c, e);
    }
  }

  /** What another patchbay stored (a newer token, an API key, or nothing after its logout) becomes ours. */
  private takeTheirs(id: string, theirs: Credential | undefined): 'adopted' {
    log.info(`the login to "${id}" was ${theirs ? 'refreshed or replaced' : 'removed'} by another patchbay; taking that`);
    this.adopt(id, theirs);
    return 'adopted';
  }

  private async readStored(id: string): Promise<Credential | undefined> {
    const raw = await this.o.store.get(secretKey(id));
    return raw ? parseCredential(raw) : undefined;
  }

  /**
   * Temporary failures (unreachable, timed out, 5xx, the lock or the store unavailable) are retried
   * with growing waits; a refused grant or client is not (log in again). The user hears of the
   * first failure of a streak only.
   */
  private refreshFailed(id: string, c: Credential, e: unknown): void {
    const streak = (this.failures.get(id) ?? 0) + 1;
    this.failures.set(id, streak);
    // Not an answer from the server (the lock or the store was unavailable): worth another try too.
    const temporary = isTemporaryOAuthFailure(e) || !(e instanceof OAuthError);
    let next = '';
    if (temporary) {
      const wait = backoffMs(streak);
      next = `patchbay tries again in ${wait >= 60_000 ? `${Math.round(wait / 60_000)} min` : `${Math.round(wait / 1000)} s`}.`;
      this.scheduleRefresh(id, undefined, wait);
    } else {
      this.spent.add(c);
      next = 'Log in again.';
    }
    const message = `Refreshing the login to ${id} failed: ${errorMessage(e)}. ${next}`;
    log.warn(message);
    if (streak > 1) return;
    this.o.notice('warning', message);
    void this.announce(id, false);
  }
}

/** `work`, or the abort of `signal` (its reason thrown), whichever comes first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function timeoutMs(login: ProviderLoginConfig): number {
  return Math.min(login.timeoutSeconds ?? DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S) * 1000;
}

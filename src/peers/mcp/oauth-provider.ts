/**
 * The SDK's `OAuthClientProvider` for one remote MCP server
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization). The SDK's `auth()`
 * does the protocol: protected-resource and authorization-server discovery, client ID metadata
 * documents, dynamic client registration, scope selection and step-up, PKCE, `resource`, refresh.
 * This class only keeps what it produces, in the secret store (`mcp/<server>/tokens`, `/client`,
 * `/verifier`), and hands the authorization URL to whoever plays the user:
 *
 * - nobody (a server started in the background): `redirectToAuthorization` throws
 *   AuthorizationRequired, and the server shows `requires-auth` until the editor asks to connect;
 * - the browser (`mcp/connectServer`, oauth-browser.ts) or a script (the conformance driver).
 *
 * Credentials are bound to the server's URL: a config entry pointed elsewhere never gets them.
 *
 * Several patchbay processes may share the store (two editors). Each remembers the stored text it
 * last read or wrote; it re-reads the tokens when the server answers 401 and adopts what another
 * process stored, deletes only the entry it holds (an `invalid_grant` after another process
 * rotated the tokens adopts theirs instead), and a logout leaves a marker that a refresh by a
 * process which had not seen it respects (it then asks for a sign-in instead of undoing the logout).
 */
import { randomBytes } from 'node:crypto';
import { auth, type OAuthClientProvider, type OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { errorMessage, rememberSecret, type Logger } from '../../util/log.js';
import type { SecretStore } from '../../util/secrets.js';
import { acquireLock } from './oauth-lock.js';

/** The server needs the user to sign in, and nobody is there to do it now. */
export class AuthorizationRequired extends Error {
  constructor(server: string) {
    super(`MCP server "${server}" requires authorization: connect it from the editor (mcp/connectServer)`);
    this.name = 'AuthorizationRequired';
  }
}

/** Whoever takes the user through the authorization page. */
export interface OAuthUser {
  /** Where the authorization server sends the user agent back to. */
  readonly redirectUrl: string;
  /** Takes the user to the authorization URL; the code comes back through `code()`. */
  authorize(url: URL, state: string): Promise<void>;
  /** The authorization code of the last `authorize`, once the user is back. */
  code(): Promise<string>;
}

/** What the MCP peer needs of any OAuth client of a server (this file's, or oauth-machine.ts's). */
export interface McpOAuthClient extends OAuthClientProvider {
  /** Who plays the user now (browser flows only). */
  user: OAuthUser | undefined;
  /** Reads stored credentials, once. */
  load(): Promise<void>;
  /** Re-reads the stored tokens (the server answered 401): another patchbay may have refreshed or logged out. */
  adoptStored?(): Promise<boolean>;
  /** `mcp/logoutServer`: forgets the credentials and tells other processes sharing the store. */
  signOut?(): Promise<void>;
  /** The request that met a 401 is over: the lock adoptStored() took is released. */
  settle?(): void;
  /** An access token is held. */
  readonly authorized: boolean;
  /** The code the user brings back from the sign-in the SDK just started; undefined when it started none. */
  takeCode(): Promise<string> | undefined;
  /** The loopback port of a stored registration's redirect. */
  registeredPort(): number | undefined;
  /** Deletes every credential held for the server. */
  forget(): Promise<void>;
  /** Signs in again for a wider scope though a token is held (403 insufficient_scope); browser flows only. */
  stepUp?(serverUrl: string, scope: string, fetchFn?: FetchLike): Promise<void>;
}

export interface McpOAuthOptions {
  server: string;
  /** The MCP server's URL: stored credentials are only used for this one. */
  url: string;
  store: SecretStore;
  log: Logger;
  /** A client registered with the authorization server beforehand (config `clientId`/`clientSecret`). */
  clientId?: string;
  clientSecret?: string;
  /** `client_name` in registrations (config `clientName`); some servers accept only known names. */
  clientName?: string;
  /** An https URL serving our client ID metadata document (SEP-991), used where the server supports it. */
  clientMetadataUrl?: string;
  /** Scope to ask for when neither the server's challenge nor its metadata names one (config `scope`). */
  scope?: string;
  /** The server wants a sign-in and nobody is there (e.g. a scope step-up during a tool call). */
  unattended?(): void;
  /** A lock file held from a 401 through re-read, refresh and write (oauth-lock.ts); none: no lock. */
  lockPath?: string;
  /**
   * Longest the lock stays held when nothing settles it: the SDK's un-awaited GET stream can meet
   * a 401 whose auth() fails before any token is saved, and no send() is there to release it.
   */
  lockHoldMs?: number;
}

/** Enough for re-reading the store and one token request; below oauth-lock's STALE_MS. */
const LOCK_HOLD_MS = 20_000;

interface Stored<T> {
  url: string;
  value?: T;
  /** A logout's marker (ms since the epoch), in place of tokens. */
  loggedOut?: number;
}

type Kind = 'tokens' | 'client' | 'verifier';
const KINDS: readonly Kind[] = ['tokens', 'client', 'verifier'];

/** Every secret-store key a server's OAuth may have written (for forgetting a removed server's). */
export function storedCredentialKeys(server: string): string[] {
  return KINDS.map((k) => `mcp/${server}/${k}`);
}

export class McpOAuthProvider implements McpOAuthClient {
  /** Who plays the user now; undefined while the server runs unattended. */
  user: OAuthUser | undefined;
  private tokensValue: OAuthTokens | undefined;
  private clientValue: OAuthClientInformationMixed | undefined;
  private verifier: string | undefined;
  private discovery: OAuthDiscoveryState | undefined;
  private lastState: string | undefined;
  /** The SDK sent the user to the authorization page since the last takeCode(). */
  private redirected = false;
  private loaded: Promise<void> | undefined;
  /** The stored text of each entry as this process last read or wrote it (compare before write/delete). */
  private readonly held: Partial<Record<Kind, string>> = {};
  /** The next saveTokens() is the user's code exchange (a sign-in), not a refresh. */
  private exchanging = false;
  /** Releases the lock taken on a 401, while held. */
  private unlock: (() => void) | undefined;
  /** The lock being taken: a second 401 meanwhile waits for the same one instead of going on without it. */
  private locking: Promise<void> | undefined;
  /** Releases the lock if nothing else does in time (LOCK_HOLD_MS). */
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(private readonly o: McpOAuthOptions) {
    if (o.clientSecret) rememberSecret(o.clientSecret);
  }

  /** Reads what the store holds (once); call before the first connection. */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      this.tokensValue = await this.read<OAuthTokens>('tokens');
      this.clientValue = await this.read<OAuthClientInformationMixed>('client');
      this.verifier = await this.read<string>('verifier');
      this.remember();
    })();
    return this.loaded;
  }

  /** An access token is held (`hasAuth` in `tool/serverUpdated`). */
  get authorized(): boolean {
    return !!this.tokensValue?.access_token;
  }

  /** The port of the loopback redirect a stored registration was made with, so a new sign-in can reuse it. */
  registeredPort(): number | undefined {
    const c = this.clientValue;
    const uri = c && 'redirect_uris' in c ? c.redirect_uris?.[0] : undefined;
    if (!uri) return undefined;
    try {
      const u = new URL(uri);
      return u.hostname === '127.0.0.1' && u.port ? Number(u.port) : undefined;
    } catch {
      return undefined;
    }
  }

  get redirectUrl(): string {
    return this.user?.redirectUrl ?? 'http://127.0.0.1/callback';
  }

  get clientMetadataUrl(): string | undefined {
    return this.o.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.o.clientName ?? 'patchbay',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.o.clientSecret ? 'client_secret_basic' : 'none',
      ...(this.o.scope ? { scope: this.o.scope } : {}),
    };
  }

  state(): string {
    this.lastState = randomBytes(24).toString('base64url');
    return this.lastState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    if (this.o.clientId) {
      const configured = { client_id: this.o.clientId, ...(this.o.clientSecret ? { client_secret: this.o.clientSecret } : {}) };
      // The configured secret wins over a stored one (the user may have rotated it).
      return this.clientValue?.client_id === this.o.clientId ? { ...this.clientValue, ...configured } : configured;
    }
    // Unattended, a registration would be made for a redirect nobody listens on: wait for the user.
    if (!this.clientValue && !this.user) throw new AuthorizationRequired(this.o.server);
    // A registration for another redirect (another port or path) would be refused: register again.
    const c = this.clientValue;
    if (this.user && c && 'redirect_uris' in c && c.redirect_uris?.length && !c.redirect_uris.includes(this.user.redirectUrl)) return undefined;
    return this.clientValue;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    this.clientValue = info;
    this.remember();
    await this.write('client', info);
  }

  tokens(): OAuthTokens | undefined {
    return this.tokensValue;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const exchange = this.exchanging;
    this.exchanging = false;
    if (!exchange) {
      // A refresh: if another process logged out since we read the tokens, signing back in here would undo it.
      const raw = await this.readRaw('tokens');
      if (raw !== this.held.tokens && this.parse<OAuthTokens>('tokens', raw).loggedOut) {
        this.held.tokens = raw;
        this.tokensValue = undefined;
        this.o.log.info('signed out by another patchbay: the refreshed tokens are dropped');
        this.settle();
        this.o.unattended?.();
        throw new AuthorizationRequired(this.o.server);
      }
    }
    this.tokensValue = tokens;
    this.remember();
    try {
      await this.write('tokens', tokens);
    } finally {
      this.settle();
    }
    this.o.log.info(`signed in${tokens.scope ? ` (scope: ${tokens.scope})` : ''}${tokens.refresh_token ? ', with a refresh token' : ''}`);
  }

  /**
   * The scope of the last sign-in nobody was there for: a step-up (403 insufficient_scope) the
   * next signIn() must ask for, since the token held still opens the connection.
   */
  wantedScope: string | undefined;

  async redirectToAuthorization(url: URL): Promise<void> {
    // No refresh is coming: other processes may go on.
    this.settle();
    if (!this.user) {
      // Only a step-up needs remembering: a first sign-in starts from the server's own 401 again.
      this.wantedScope = this.tokensValue ? (url.searchParams.get('scope') ?? undefined) : undefined;
      this.o.unattended?.();
      throw new AuthorizationRequired(this.o.server);
    }
    this.wantedScope = undefined;
    await this.user.authorize(url, url.searchParams.get('state') ?? this.lastState ?? '');
    this.redirected = true;
  }

  /**
   * A scope step-up through the SDK's auth(). The SDK answers a 403 `insufficient_scope` by
   * refreshing when a refresh token is held, which never widens the scope; so the tokens are set
   * aside for the call, and auth() starts a new authorization for `scope`. They come back when it fails.
   */
  async stepUp(serverUrl: string, scope: string, fetchFn?: FetchLike): Promise<void> {
    if (!this.user) {
      this.wantedScope = scope;
      this.o.unattended?.();
      throw new AuthorizationRequired(this.o.server);
    }
    const held = this.tokensValue;
    this.tokensValue = undefined;
    try {
      const opts = { serverUrl, scope, ...(fetchFn ? { fetchFn } : {}) };
      if ((await auth(this, opts)) === 'AUTHORIZED') return;
      const code = this.takeCode();
      if (!code) throw new Error('the authorization server did not send the user to sign in');
      await auth(this, { ...opts, authorizationCode: await code });
    } catch (e) {
      this.tokensValue ??= held;
      throw new Error(`sign-in failed: ${errorMessage(e)}`, { cause: e });
    } finally {
      await this.invalidateCredentials('verifier');
    }
  }

  /** The code the user brings back from the sign-in the SDK just started; undefined when it started none. */
  takeCode(): Promise<string> | undefined {
    if (!this.redirected || !this.user) return undefined;
    this.redirected = false;
    this.exchanging = true;
    return this.user.code();
  }

  async saveCodeVerifier(verifier: string): Promise<void> {
    this.verifier = verifier;
    rememberSecret(verifier);
    // Unattended, the authorization is never started (redirectToAuthorization refuses): nothing to keep.
    if (this.user) await this.write('verifier', verifier);
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error(`MCP server "${this.o.server}": no PKCE code verifier saved`);
    return this.verifier;
  }

  // Discovery results live as long as the process: cheap to redo, and an authorization server that
  // moved is then found again.
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    // The exchange a verifier served is over, whatever its outcome.
    if (scope === 'verifier') this.exchanging = false;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
    const kinds: Kind[] = scope === 'all' ? ['tokens', 'client', 'verifier'] : scope === 'discovery' ? [] : [scope];
    for (const k of kinds) {
      // Only the entry this process holds: newer tokens or a registration another process stored are adopted instead.
      if (k !== 'verifier' && (await this.adopt(k))) continue;
      this.drop(k);
      await this.o.store.delete(this.key(k)).catch((e: unknown) => this.o.log.warn(`forgetting ${k}: ${errorMessage(e)}`));
      delete this.held[k];
    }
  }

  /** A removed server: every stored credential is deleted. */
  async forget(): Promise<void> {
    this.discovery = undefined;
    for (const k of KINDS) {
      this.drop(k);
      delete this.held[k];
      await this.o.store.delete(this.key(k)).catch((e: unknown) => this.o.log.warn(`forgetting ${k}: ${errorMessage(e)}`));
    }
  }

  /** Logout: the credentials go, and the tokens' entry says so to other processes sharing the store. */
  async signOut(): Promise<void> {
    await this.forget();
    await this.write('tokens', { loggedOut: Date.now() });
  }

  async adoptStored(): Promise<boolean> {
    await this.load();
    if (this.o.lockPath) await (this.locking ??= this.lock(this.o.lockPath).finally(() => (this.locking = undefined)));
    return this.adopt('tokens');
  }

  private async lock(path: string): Promise<void> {
    if (this.unlock) {
      // Held for an earlier 401 that is still being answered: its bound starts again for this one.
      this.armHold();
      return;
    }
    const unlock = await acquireLock(path);
    if (!unlock) {
      this.o.log.warn('could not take the OAuth lock shared with other patchbays; refreshing without it');
      return;
    }
    this.unlock = unlock;
    this.armHold();
  }

  private armHold(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = setTimeout(() => {
      this.o.log.warn('the OAuth lock was held past its bound with no refresh finishing; released');
      this.settle();
    }, this.o.lockHoldMs ?? LOCK_HOLD_MS);
    this.holdTimer.unref();
  }

  settle(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    this.unlock?.();
    this.unlock = undefined;
  }

  /** Takes what the store holds for `kind` when it is not what this process last saw; true if it was adopted. */
  private async adopt(kind: 'tokens' | 'client'): Promise<boolean> {
    const raw = await this.readRaw(kind);
    if (raw === this.held[kind]) return false;
    this.held[kind] = raw;
    const stored = this.parse<never>(kind, raw).value;
    if (kind === 'tokens') this.tokensValue = stored;
    else this.clientValue = stored;
    this.remember();
    this.o.log.info(`another patchbay changed the stored ${kind === 'tokens' ? 'sign-in' : 'registration'}: ${stored ? 'using it' : 'it is gone'}`);
    return true;
  }

  private drop(k: Kind): void {
    if (k === 'tokens') this.tokensValue = undefined;
    if (k === 'client') this.clientValue = undefined;
    if (k === 'verifier') this.verifier = undefined;
  }

  private key(kind: Kind): string {
    return storedCredentialKeys(this.o.server)[KINDS.indexOf(kind)];
  }

  /** Tokens and secrets the SDK's errors might quote are redacted from every log line. */
  private remember(): void {
    for (const v of [this.tokensValue?.access_token, this.tokensValue?.refresh_token, this.tokensValue?.id_token, this.clientValue?.client_secret, this.verifier]) {
      if (v) rememberSecret(v);
    }
  }

  private async read<T>(kind: Kind): Promise<T | undefined> {
    const raw = await this.readRaw(kind);
    this.held[kind] = raw;
    return this.parse<T>(kind, raw).value;
  }

  private async readRaw(kind: Kind): Promise<string | undefined> {
    try {
      return await this.o.store.get(this.key(kind));
    } catch (e) {
      this.o.log.warn(`stored ${kind} unreadable: ${errorMessage(e)}`);
      return undefined;
    }
  }

  /** A stored entry for this server's URL; a damaged entry is as good as none (the user signs in again). */
  private parse<T>(kind: Kind, raw: string | undefined): { value?: T; loggedOut?: number } {
    if (!raw) return {};
    try {
      const parsed = JSON.parse(raw) as Partial<Stored<T>>;
      if (parsed.url !== this.o.url) return {};
      return { ...(parsed.value !== undefined ? { value: parsed.value } : {}), ...(typeof parsed.loggedOut === 'number' ? { loggedOut: parsed.loggedOut } : {}) };
    } catch (e) {
      this.o.log.warn(`stored ${kind} unreadable: ${errorMessage(e)}`);
      return {};
    }
  }

  private async write(kind: Kind, value: unknown): Promise<void> {
    const stored: Stored<unknown> = kind === 'tokens' && isMarker(value) ? { url: this.o.url, ...value } : { url: this.o.url, value };
    const raw = JSON.stringify(stored);
    await this.o.store.set(this.key(kind), raw);
    this.held[kind] = raw;
  }
}

function isMarker(v: unknown): v is { loggedOut: number } {
  return typeof v === 'object' && v !== null && typeof (v as { loggedOut?: unknown }).loggedOut === 'number';
}

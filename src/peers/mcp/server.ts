/**
 * One configured MCP server and its lifecycle, as an explicit state machine:
 *
 *   disabled ──start()──► starting ──ok──► running ──died──► failed ──backoff──► starting …
 *   stopped  ──start()──┘     └──error──► failed (retried 1 s, 2 s, 4 s … up to maxRestarts)
 *   any ──stop()──► stopped
 *   starting ──the server wants a sign-in, nobody there──► requires-auth ──signIn()──► starting …
 *
 * Each connection attempt has a generation number; events from an older attempt are ignored,
 * so a stop() during a slow start, or a crash report after a restart, cannot corrupt the state.
 */
import type { AskUser } from '../../shapes/ask.js';
import type { Command } from '../../shapes/command.js';
import type { CommandSink } from '../../shapes/registry.js';
import { textResult, type Tool, type ToolContext, type ToolResult } from '../../shapes/tool.js';
import type { ToolSink } from '../../shapes/registry.js';
import type { ResourceContext as McpResourceContext } from '../../shapes/context.js';
import { errorMessage, logger, redact, type Logger, type LogLevel } from '../../util/log.js';
import { toCommand, toResourceContext, toServerPrompt, toServerResource, toServerTool, toTool } from './adapt.js';
import { displayCommand, parseServerEntry, type ParsedEntry, type RemoteServerConfig, type ServerConfig } from './config.js';
import { McpSession } from './session.js';
import { oneLine } from './transport.js';
import { isAuthError } from './oauth-transport.js';
import { AuthorizationRequired, McpOAuthProvider, type McpOAuthClient, type OAuthUser } from './oauth-provider.js';
import { browserUser, type BrowserUser } from './oauth-browser.js';
import { oauthLockPath } from './oauth-lock.js';
import type { SecretStore } from '../../util/secrets.js';
import { maskedUrl, scrubUrls } from '../../util/url.js';
import type { McpServerInfo } from './types.js';
import { sandboxFailure, type SandboxPlan } from '../../util/sandbox.js';

export type ServerState =
  | { kind: 'disabled' }
  | { kind: 'stopped' }
  | { kind: 'starting'; gen: number; abort: AbortController }
  | { kind: 'running'; gen: number; session: McpSession }
  | { kind: 'failed'; error: string; retry?: NodeJS.Timeout }
  /** A remote server answered 401 and no credential of ours works: waits for signIn(). */
  | { kind: 'requires-auth' };

export interface RestartPolicy {
  /** First delay; doubles on each further restart. */
  baseDelayMs: number;
  maxRestarts: number;
}

export interface ServerDeps {
  env: NodeJS.ProcessEnv;
  roots: () => string[];
  timeoutSeconds: number;
  logLevel: LogLevel;
  tools: ToolSink;
  commands: CommandSink;
  restart: RestartPolicy;
  /** The front end's way to ask the user (MCP elicitation), when it has one. */
  ask?: AskUser;
  /** Every status or list change. */
  changed(info: McpServerInfo): void;
  /** Where OAuth credentials of remote servers are kept; without it, no OAuth. */
  secrets?: SecretStore;
  /** Someone always there to sign in (the conformance driver's script); else the browser on signIn(). */
  oauthUser?: (server: string) => OAuthUser;
  /** The sign-in page was opened (or could not be): the front end may show its URL. */
  signInOpened?(server: string, url: string, browserStarted: boolean): void;
  /** How a stdio server's process starts: in the OS sandbox, refused, or as it is (undefined, or off). */
  sandbox?(server: string): Promise<SandboxPlan | undefined>;
}

/** One signIn(): its listener once open; cancelled by halt() (stop, disable, remove, logout). */
interface SignInRun {
  done: Promise<void>;
  user?: BrowserUser;
  cancelled: boolean;
}

/** How long the user has to finish signing in after `mcp/connectServer`. */
const SIGN_IN_TIMEOUT_MS = 5 * 60_000;

export class McpServerHandle {
  private state: ServerState;
  private gen = 0;
  private restarts = 0;
  private lastError: string | undefined;
  /** Tools of the live session the registry refused (by MCP name). */
  private skipped = new Set<string>();
  /** The connection attempt in flight, if any; settles once it is running, failed or discarded. */
  private attempt: Promise<void> | undefined;
  private readonly log: Logger;
  private readonly entry: ParsedEntry;
  private readonly source: string;
  /** Settles once the first start is over (running, failed, stopped, or never meant to start). */
  readonly firstStart: Promise<void>;
  private firstStartOver = false;
  private endFirstStart!: () => void;
  /** A remote server's OAuth client (none for stdio servers and for a configured Authorization header). */
  private oauth: McpOAuthClient | undefined;
  /**
   * A machine grant's client (client_credentials, id-jag), being loaded: oauth-machine.ts pulls in
   * the SDK's JWT support (jose), which costs every server start ~6 MB of memory if loaded eagerly.
   */
  private machineOAuth: Promise<void> | undefined;
  /** A sign-in (signIn()) is under way: the connection attempt waits for the user. */
  private signingIn = false;
  /** The sign-in in progress (one per server); halt() cancels it. */
  private signInNow: SignInRun | undefined;

  constructor(
    readonly name: string,
    raw: unknown,
    private readonly deps: ServerDeps,
  ) {
    this.log = logger(`mcp:${name}`);
    this.source = `mcp:${name}`;
    this.entry = parseServerEntry(name, raw);
    if (!this.entry.ok) this.state = { kind: 'failed', error: this.entry.error };
    else this.state = this.entry.config.disabled ? { kind: 'disabled' } : { kind: 'stopped' };
    if (!this.entry.ok) {
      this.lastError = this.entry.error;
      this.log.error(this.entry.error);
    }
    this.oauth = this.makeOAuth();
    this.firstStart = new Promise<void>((r) => (this.endFirstStart = r));
    if (!this.autoStart) this.firstStartDone();
  }

  /** Configured to start and not yet through its first attempt (prompts wait for these). */
  get inFirstStart(): boolean {
    return !this.firstStartOver;
  }

  private firstStartDone(): void {
    this.firstStartOver = true;
    this.endFirstStart();
  }

  get status(): ServerState['kind'] {
    return this.state.kind;
  }

  /** Enabled and valid: started by startAll(). */
  get autoStart(): boolean {
    return this.entry.ok && this.state.kind === 'stopped';
  }

  get session(): McpSession | undefined {
    return this.state.kind === 'running' ? this.state.session : undefined;
  }

  info(): McpServerInfo {
    const shown = this.entry.ok ? displayCommand(this.entry.config) : { command: this.entry.command, args: this.entry.args };
    return {
      name: this.name,
      ...shown,
      // Shown, never connected to: without user info and query values (they may be secrets).
      ...(this.entry.ok && this.entry.config.kind === 'remote' ? { url: maskedUrl(this.entry.config.url) } : {}),
      status: this.state.kind,
      // What the model is offered: tools the registry refused are not listed.
      tools: this.session?.tools.filter((t) => !this.skipped.has(t.name)).map(toServerTool) ?? [],
      prompts: this.session?.prompts.map(toServerPrompt) ?? [],
      resources: this.session?.resources.map(toServerResource) ?? [],
      disabled: this.entry.ok && this.entry.config.disabled,
      hasAuth: this.oauth?.authorized ?? false,
      ...(this.lastError ? { lastError: this.lastError } : {}),
      restarts: this.restarts,
    };
  }

  /** Tells listeners the current state as it is (startAll() for disabled and invalid entries). */
  report(): void {
    this.deps.changed(this.info());
  }

  /** Manual start: resets the restart budget. Resolves once running or failed. */
  async start(): Promise<void> {
    if (this.state.kind === 'running') return;
    if (this.state.kind === 'starting') return this.attempt;
    this.clearRetry();
    // A manual start begins a fresh history: restart budget and last error.
    this.restarts = 0;
    this.lastError = this.entry.ok ? undefined : this.entry.error;
    await this.connect();
  }

  async stop(): Promise<void> {
    await this.halt(true);
  }

  /**
   * `mcp/connectServer`: sign in through the browser (a loopback listener for the redirect), then
   * connect. Resolves once running or failed; the state goes starting → running | failed.
   * One sign-in at a time: a second connect while the user is at the authorization page joins it
   * (its PKCE verifier and listener stay the first's); after a stop it waits for the first to end.
   */
  async signIn(): Promise<void> {
    const current = this.signInNow;
    if (current && !current.cancelled) {
      // The user may have closed the tab: the same page (same state and PKCE verifier) opens again.
      current.user?.reopen();
      return current.done;
    }
    if (current) await current.done.catch(() => {});
    if (this.signInNow && this.signInNow !== current) return this.signInNow.done;
    const run: SignInRun = { done: Promise.resolve(), cancelled: false };
    run.done = this.signInOnce(run).finally(() => {
      if (this.signInNow === run) this.signInNow = undefined;
    });
    this.signInNow = run;
    return run.done;
  }

  private async signInOnce(run: SignInRun): Promise<void> {
    await this.machineOAuth;
    const oauth = this.oauth;
    if (!oauth)
      throw new Error(`MCP server "${this.name}" does not sign in with OAuth (${this.entry.ok && this.entry.config.kind === 'remote' ? 'it has an Authorization header' : 'not a remote server'})`);
    const stepUp = oauth instanceof McpOAuthProvider && oauth.wantedScope !== undefined;
    if (this.state.kind === 'running' && !stepUp) return;
    await oauth.load();
    const config = this.entry.ok && this.entry.config.kind === 'remote' ? this.entry.config : undefined;
    // Machine grants need nobody: connecting is signing in.
    if (config?.grantType && config.grantType !== 'authorization_code') {
      await this.halt(false);
      return this.start();
    }
    // The listener first: if it cannot listen, the server is left as it was and the editor is told why.
    const user = await this.openListener(oauth, config);
    if (!user) return;
    await this.halt(false);
    run.user = user;
    oauth.user = user;
    this.signingIn = true;
    try {
      if (!run.cancelled) await this.start();
    } finally {
      this.signingIn = false;
      if (oauth.user === user) oauth.user = this.deps.oauthUser?.(this.name);
      await user.close();
      // However the sign-in ended, its PKCE verifier is spent; a later sign-in has not begun yet (signIn() waits).
      await oauth.invalidateCredentials?.('verifier');
    }
  }

  /** The loopback listener for the redirect; undefined (and the failure reported) when it cannot listen. */
  private async openListener(oauth: McpOAuthClient, config: RemoteServerConfig | undefined): Promise<BrowserUser | undefined> {
    const fixedPort = config?.redirectUri ? Number(new URL(config.redirectUri).port) : config?.oauthPort;
    const port = fixedPort ?? oauth.registeredPort() ?? 0;
    const userOpts = {
      env: this.deps.env,
      log: this.log,
      timeoutMs: SIGN_IN_TIMEOUT_MS,
      ...(config?.redirectUri ? { redirectUri: config.redirectUri } : {}),
      opened: (url: string, started: boolean) => this.deps.signInOpened?.(this.name, url, started),
    };
    try {
      return await browserUser({ ...userOpts, port });
    } catch (e) {
      if (!fixedPort && port) {
        // The port of an earlier registration is taken: register again with a free one.
        await oauth.invalidateCredentials?.('client');
        try {
          return await browserUser({ ...userOpts, port: 0 });
        } catch (again) {
          e = again;
        }
      }
      const error = `cannot listen for the sign-in redirect on ${config?.redirectUri ?? `127.0.0.1:${port}`}: ${errorMessage(e)}`;
      this.log.error(error);
      this.lastError = error;
      // A running server (a step-up) keeps running; otherwise the sign-in failed, shown as such.
      if (this.state.kind === 'running') this.report();
      else {
        await this.halt(false);
        this.setState({ kind: 'failed', error });
      }
      return undefined;
    }
  }

  /** `mcp/logoutServer`: forget the server's credentials and start it again (it then asks for a sign-in). */
  async logout(): Promise<void> {
    await this.halt(false);
    // Other patchbays sharing the store see the logout too (oauth-provider.ts).
    await (this.oauth?.signOut ? this.oauth.signOut() : this.forgetCredentials());
    await this.start();
  }

  /** Deletes every stored OAuth credential of this server (logout; a removed server). */
  async forgetCredentials(): Promise<void> {
    await this.oauth?.forget();
  }

  private makeOAuth(): McpOAuthClient | undefined {
    const c = this.entry.ok ? this.entry.config : undefined;
    if (!c || c.kind !== 'remote') return undefined;
    // A configured Authorization header is the user's own way in; OAuth would only get in its way (as ECA).
    if (Object.keys(c.headers).some((h) => h.toLowerCase() === 'authorization')) return undefined;
    const name = c.clientName ? { clientName: c.clientName } : {};
    // parseServerEntry checked that each grant has what it needs.
    if ((c.grantType === 'client_credentials' && c.clientId) || (c.grantType === 'id-jag' && c.clientId && c.idp)) {
      const { clientId, clientSecret, clientPrivateKey, clientSigningAlgorithm, idp } = c;
      this.machineOAuth = import('./oauth-machine.js').then(
        (m) => {
          this.oauth =
            c.grantType === 'client_credentials'
              ? m.clientCredentialsClient({
                  clientId,
                  ...(clientSecret ? { clientSecret } : {}),
                  ...(clientPrivateKey ? { privateKey: clientPrivateKey } : {}),
                  ...(clientSigningAlgorithm ? { algorithm: clientSigningAlgorithm } : {}),
                  ...name,
                })
              : m.idJagClient({
                  clientId,
                  ...(clientSecret ? { clientSecret } : {}),
                  idpTokenEndpoint: idp!.tokenEndpoint,
                  idpClientId: idp!.clientId,
                  idToken: idp!.idToken,
                  ...name,
                });
        },
        (e: unknown) => this.log.error(`cannot load the machine OAuth client: ${errorMessage(e)}`),
      );
      return undefined;
    }
    if (!this.deps.secrets) return undefined;
    const oauth = new McpOAuthProvider({
      server: this.name,
      url: c.url,
      store: this.deps.secrets,
      log: this.log,
      ...(c.clientId ? { clientId: c.clientId } : {}),
      ...(c.clientSecret ? { clientSecret: c.clientSecret } : {}),
      ...(c.clientName ? { clientName: c.clientName } : {}),
      ...(c.clientMetadataUrl ? { clientMetadataUrl: c.clientMetadataUrl } : {}),
      lockPath: oauthLockPath(this.deps.secrets, this.deps.env, this.name),
      // Called inside a request of the session: the state changes once that request has failed.
      unattended: () => setImmediate(() => this.authLost()),
    });
    oauth.user = this.deps.oauthUser?.(this.name);
    return oauth;
  }

  /** A running server wants a sign-in nobody can do now (a scope step-up): it waits for signIn(). */
  private authLost(): void {
    if (this.state.kind !== 'running') return;
    this.log.info('requires authorization again (more scope): connect it from the editor');
    const session = this.state.session;
    this.gen++;
    this.setState({ kind: 'requires-auth' });
    void session.close().catch(() => {});
  }

  /** Stops without reporting: patchbay is shutting down. */
  async dispose(): Promise<void> {
    await this.halt(false);
  }

  /** Ends the session or the attempt in flight; resolves when the child is gone. */
  private async halt(report: boolean): Promise<void> {
    this.firstStartDone();
    // A user at the authorization page: the listener closes and whoever waits for the code stops waiting.
    const run = this.signInNow;
    if (run?.user) {
      run.cancelled = true;
      await run.user.close();
    }
    const session = this.session;
    if (this.state.kind === 'starting') this.state.abort.abort();
    this.gen++;
    this.clearRetry();
    if (report) this.setState({ kind: 'stopped' });
    else {
      this.state = { kind: 'stopped' };
      this.unregister();
    }
    await Promise.all([session?.close(), this.attempt]);
  }

  resources(): McpResourceContext[] {
    const s = this.session;
    return s ? [...s.resources, ...s.templates].map((r) => toResourceContext(this.name, r)) : [];
  }

  private connect(): Promise<void> {
    const attempt = this.attemptConnect().finally(() => {
      if (this.attempt === attempt) this.attempt = undefined;
      this.firstStartDone();
    });
    this.attempt = attempt;
    return attempt;
  }

  private async attemptConnect(): Promise<void> {
    if (!this.entry.ok) {
      this.setState({ kind: 'failed', error: this.entry.error });
      return;
    }
    const gen = ++this.gen;
    const abort = new AbortController();
    this.setState({ kind: 'starting', gen, abort });
    let plan: SandboxPlan | undefined;
    try {
      await this.machineOAuth;
      // A step-up: the token held still opens the connection, so the SDK is asked for the wider scope first.
      const oauth = this.oauth;
      if (this.signingIn && oauth instanceof McpOAuthProvider && oauth.wantedScope && this.entry.config.kind === 'remote') {
        await oauth.stepUp(this.entry.config.url, oauth.wantedScope);
      }
      plan = this.entry.config.kind === 'stdio' ? await this.deps.sandbox?.(this.name) : undefined;
      if (this.gen !== gen) return;
      if (plan?.kind === 'refuse') {
        // Not retried: it cannot start until the sandbox can run (or the config changes, which restarts it).
        const error = `not started: its entry comes from the workspace's own config, which runs only in the OS sandbox, and ${plan.why}`;
        this.log.error(error);
        this.lastError = error;
        this.setState({ kind: 'failed', error });
        return;
      }
      const session = await McpSession.open({
        signal: abort.signal,
        name: this.name,
        config: this.entry.config,
        env: this.deps.env,
        roots: this.deps.roots,
        timeoutMs: this.deps.timeoutSeconds * 1000,
        // The first request waits while the user signs in.
        ...(this.signingIn ? { connectTimeoutMs: this.deps.timeoutSeconds * 1000 + SIGN_IN_TIMEOUT_MS } : {}),
        ...(this.oauth ? { oauth: this.oauth } : {}),
        logLevel: this.deps.logLevel,
        log: this.log,
        onClosed: (reason) => this.died(gen, reason),
        onListChanged: () => this.listChanged(gen),
        ...(this.deps.ask ? { ask: this.deps.ask } : {}),
        ...(plan?.kind === 'sandboxed' ? { wrap: plan.wrap } : {}),
      });
      // Stopped, or died during the initial listing, while we waited.
      if (this.gen !== gen || this.state.kind !== 'starting') {
        await session.close();
        return;
      }
      this.log.info(
        `running (${session.transport}${session.pid ? `, pid ${session.pid}` : ''}): ${session.tools.length} tools, ${session.prompts.length} prompts, ${session.resources.length + session.templates.length} resources`,
      );
      this.setState({ kind: 'running', gen, session });
    } catch (e) {
      if (this.gen !== gen) return;
      if (isAuthError(e) && isUnattended(e)) {
        // lastError stays: after a failed sign-in it says why the next one is needed.
        this.log.info('requires authorization (connect it from the editor)');
        this.setState({ kind: 'requires-auth' });
        return;
      }
      // Room for the stderr tail (at most 600 characters) after the error itself.
      const why = oneLine(errorMessage(e), 1000);
      this.fail(`failed to start: ${why}${plan?.kind === 'sandboxed' ? sandboxHint(why, plan, this.entry.config) : ''}`);
    }
  }

  private died(gen: number, reason: string): void {
    if (this.gen !== gen) return;
    this.fail(reason);
  }

  private fail(reason: string): void {
    // Transports quote the URL they could not reach, user info and query tokens included; this
    // text goes to logs, the editor (tool/serverUpdated `error`), doctor and the model.
    const error = redact(scrubUrls(reason));
    const session = this.session;
    this.gen++;
    this.log.warn(error);
    this.lastError = error;
    const canRetry = this.restarts < this.deps.restart.maxRestarts;
    const retry = canRetry ? setTimeout(() => this.retry(), this.deps.restart.baseDelayMs * 2 ** this.restarts) : undefined;
    retry?.unref();
    if (!canRetry) this.log.error(`giving up after ${this.restarts} restarts; start it again by hand`);
    this.setState({ kind: 'failed', error, retry });
    // Whatever is left of the connection (e.g. an HTTP session) is closed in the background.
    void session?.close().catch(() => {});
  }

  private retry(): void {
    if (this.state.kind !== 'failed') return;
    this.state = { kind: 'failed', error: this.state.error };
    this.restarts++;
    this.log.info(`restart ${this.restarts}/${this.deps.restart.maxRestarts}`);
    void this.connect();
  }

  private clearRetry(): void {
    if (this.state.kind === 'failed' && this.state.retry) clearTimeout(this.state.retry);
  }

  private listChanged(gen: number): void {
    if (this.state.kind !== 'running' || this.state.gen !== gen) return;
    this.register(this.state.session);
    // tool/serverUpdated carries every list (tools, prompts, resources): each change is sent.
    this.deps.changed(this.info());
  }

  private setState(state: ServerState): void {
    this.state = state;
    if (state.kind === 'running') this.register(state.session);
    else this.unregister();
    this.deps.changed(this.info());
  }

  private register(s: McpSession): void {
    const call = (tool: string, args: Record<string, unknown>, ctx: ToolContext) => this.callTool(tool, args, ctx);
    const tools: Tool[] = s.tools.map((t) => toTool(this.name, t, call));
    const commands: Command[] = s.prompts.map((p) =>
      toCommand(this.name, p, (prompt, args, signal) => {
        const live = this.session;
        if (!live) return Promise.reject(new Error(`MCP server "${this.name}" is ${this.state.kind}`));
        return live.getPrompt(prompt, args, signal);
      }),
    );
    // A tool the model could not be offered (name too long, taken by another source) is skipped.
    const refused = this.deps.tools.set(this.source, tools);
    this.skipped = new Set(refused.map((r) => r.tool.slice(this.name.length + 2)));
    for (const r of refused) this.log.warn(`tool skipped: ${r.reason}`);
    this.deps.commands.set(this.source, commands);
  }

  private unregister(): void {
    this.deps.tools.set(this.source, []);
    this.deps.commands.set(this.source, []);
  }

  /** Goes to whichever session is live now, so Tool objects survive restarts. */
  private callTool(tool: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const s = this.session;
    if (!s) return Promise.resolve(textResult(`${this.name}__${tool}: the MCP server "${this.name}" is ${this.state.kind}${this.lastError ? ` (${this.lastError})` : ''}`, true));
    return s.callTool(tool, args, ctx);
  }
}

/** Launchers that fetch the server before they run it (`npx -y pkg`, `uvx pkg`, `pnpm dlx pkg`). */
function downloads(config: ServerConfig): string | undefined {
  if (config.kind !== 'stdio') return undefined;
  const base = config.command.split(/[\\/]/).pop() ?? '';
  if (/^(npx|bunx|pnpx|uvx|pipx)(\.cmd|\.exe)?$/.test(base)) return base;
  const sub = config.args[0];
  if ((/^(pnpm|yarn)$/.test(base) && sub === 'dlx') || (base === 'npm' && sub === 'exec') || (base === 'bun' && sub === 'x')) return `${base} ${sub}`;
  return undefined;
}

/**
 * What a server that failed to start in the OS sandbox is told with its error: that it ran there,
 * what the sandbox stopped when its output says so, and, for a launcher that downloads the server
 * first with the network off, that it cannot.
 */
export function sandboxHint(output: string, plan: Extract<SandboxPlan, { kind: 'sandboxed' }>, config: ServerConfig): string {
  const launcher = plan.policy.network ? undefined : downloads(config);
  const why = launcher
    ? `it has no network (sandbox.network is false), so \`${launcher}\` cannot download the server: install the server beforehand and name its own command, or set "sandbox": {"network": true}`
    : (sandboxFailure(output, plan.policy) ?? `it may write only in ${plan.policy.writable.join(', ') || 'no folder'} and /tmp${plan.policy.network ? '' : ', and has no network'}`);
  return ` (its entry comes from the workspace's own config, so it runs in the OS sandbox: ${why})`;
}

/** The server wants a sign-in and nobody was there to do it (not a sign-in that went wrong). */
function isUnattended(e: unknown): boolean {
  return e instanceof AuthorizationRequired || (e instanceof Error && e.cause instanceof AuthorizationRequired);
}

/**
 * Every configured MCP server of one workspace session. Servers start in parallel and in the
 * background; their tools, prompts and resources reach the rest of patchbay only through the
 * registries and the McpHost interface (types.ts).
 */
import type { AskUser } from '../../shapes/ask.js';
import type { CommandSink } from '../../shapes/registry.js';
import type { ToolSink } from '../../shapes/registry.js';
import type { ResourceContext as McpResourceContext } from '../../shapes/context.js';
import { errorMessage, logger, type LogLevel } from '../../util/log.js';
import { killTreesNow } from '../../util/process-tree.js';
import { McpServerHandle, type RestartPolicy } from './server.js';
import type { McpHost, McpHostEvents, McpServerInfo } from './types.js';
import { storedCredentialKeys, type OAuthUser } from './oauth-provider.js';
import type { SecretStore } from '../../util/secrets.js';
import type { SandboxPlan } from '../../util/sandbox.js';

const log = logger('mcp');

export interface McpHostOptions {
  /** `mcpServers` from the config, unvalidated: each entry is checked on its own. */
  servers: Record<string, unknown>;
  timeoutSeconds: number;
  logLevel: LogLevel;
  /** Workspace folders, answered to `roots/list`. */
  roots: string[];
  env: NodeJS.ProcessEnv;
  tools: ToolSink;
  commands: CommandSink;
  events: McpHostEvents;
  /** The front end's way to ask the user: servers may then elicit input (form mode). */
  ask?: AskUser;
  /** Defaults: 1 s, doubling, at most 5 restarts. */
  restart?: Partial<RestartPolicy>;
  /** Where remote servers' OAuth credentials are kept; without it, remote servers get no OAuth. */
  secrets?: SecretStore;
  /** Someone always there to sign in (the conformance driver); else the browser on signIn(). */
  oauthUser?: (server: string) => OAuthUser;
  /** A sign-in page was opened (or could not be): the front end may show its URL. */
  signInOpened?(server: string, url: string, browserStarted: boolean): void;
  /** How a stdio server's process starts (PeerHost.sandbox): sandboxed, refused, or as it is. */
  sandbox?(server: string): Promise<SandboxPlan | undefined>;
}

export class McpHostImpl implements McpHost {
  private readonly handles = new Map<string, McpServerHandle>();
  /** Each handle's config entry as it was built from (JSON), to tell a changed entry on reload. */
  private readonly entries = new Map<McpServerHandle, string>();
  /** The stops and starts of the last reconcile(). */
  private reconciling: Promise<void> = Promise.resolve();
  private roots: string[];
  private disposed = false;
  /**
   * Set once the servers task began (the front end is ready: ECA `initialized`; allowStarts) or by
   * startAll. Before it, an entry a reload adds or changes is only registered: startAll starts the
   * entries configured by then, so no server starts early, nor after its entry (its folder) went.
   */
  private startsAllowed = false;
  /** Handles started (or reported) once starts were allowed: startAll does not do them again. */
  private readonly launched = new WeakSet<McpServerHandle>();

  private readonly opts: McpHostOptions & { restart: RestartPolicy };

  constructor(opts: McpHostOptions) {
    this.roots = [...opts.roots];
    this.opts = { ...opts, restart: { baseDelayMs: 1000, maxRestarts: 5, ...opts.restart } };
    for (const [name, raw] of Object.entries(opts.servers)) this.handles.set(name, this.newHandle(name, raw));
  }

  private newHandle(name: string, raw: unknown): McpServerHandle {
    const opts = this.opts;
    const h = new McpServerHandle(name, raw, {
      env: opts.env,
      roots: () => this.roots,
      timeoutSeconds: opts.timeoutSeconds,
      logLevel: opts.logLevel,
      tools: opts.tools,
      commands: opts.commands,
      restart: opts.restart,
      ...(opts.ask ? { ask: opts.ask } : {}),
      ...(opts.secrets ? { secrets: opts.secrets } : {}),
      ...(opts.oauthUser ? { oauthUser: opts.oauthUser } : {}),
      ...(opts.signInOpened ? { signInOpened: opts.signInOpened } : {}),
      ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
      changed: (info) => {
        if (this.disposed) return;
        try {
          opts.events.serverUpdated(info);
        } catch (e) {
          log.warn(`serverUpdated listener: ${errorMessage(e)}`);
        }
      },
    });
    this.entries.set(h, entryKey(raw));
    return h;
  }

  /** Starts a handle configured to start; reports the others (disabled, invalid) as they are. */
  private launch(h: McpServerHandle): void {
    if (this.disposed || this.handles.get(h.name) !== h) return;
    if (!this.startsAllowed) {
      // Registered only; a disabled or invalid entry is shown as it is.
      if (!h.autoStart) h.report();
      return;
    }
    if (this.launched.has(h)) return;
    this.launched.add(h);
    if (!h.autoStart) h.report();
    else void h.start().catch((e: unknown) => log.error(`${h.name}: ${errorMessage(e)}`));
  }

  /** Stops a handle that is being replaced or removed: a live one reports `stopped`, the others go quietly. */
  private async retire(h: McpServerHandle): Promise<void> {
    this.entries.delete(h);
    const live = h.status === 'running' || h.status === 'starting';
    await (live ? h.stop() : h.dispose()).catch((e: unknown) => log.warn(`${h.name}: ${errorMessage(e)}`));
  }

  /**
   * The config was reloaded (a file changed, an editor's mcp/addServer…, a folder trusted): servers
   * whose entry is new start, those whose entry changed restart with it, those no longer configured
   * stop and are reported removed. An unchanged entry is left as it is (a server the user stopped
   * stays stopped). Returns at once with the names; `reconciled()` settles once the stops are done
   * and the starts have begun.
   */
  reconcile(servers: Record<string, unknown>): { added: string[]; changed: string[]; removed: string[] } {
    const out = { added: [] as string[], changed: [] as string[], removed: [] as string[] };
    if (this.disposed) return out;
    const work: Array<Promise<void>> = [];
    for (const [name, old] of [...this.handles]) {
      if (!Object.hasOwn(servers, name)) {
        out.removed.push(name);
        this.handles.delete(name);
        work.push(
          this.retire(old).then(() => {
            if (!this.disposed) this.opts.events.serverRemoved?.(name);
          }),
        );
      } else if (this.entries.get(old) !== entryKey(servers[name])) {
        out.changed.push(name);
        const next = this.newHandle(name, servers[name]);
        this.handles.set(name, next);
        // The old process is gone before the new one starts: they may hold the same resources.
        work.push(this.retire(old).then(() => this.launch(next)));
      }
    }
    for (const [name, raw] of Object.entries(servers)) {
      if (this.handles.has(name)) continue;
      out.added.push(name);
      const h = this.newHandle(name, raw);
      this.handles.set(name, h);
      this.launch(h);
    }
    const before = this.reconciling;
    this.reconciling = Promise.all([before, ...work]).then(() => {});
    return out;
  }

  /** Settles once the last reconcile()'s stops are done and its starts have begun. */
  reconciled(): Promise<void> {
    return this.reconciling;
  }

  /** The servers task began: entries added or changed from now on start at once (startAll does the rest). */
  allowStarts(): void {
    this.startsAllowed = true;
  }

  startAll(): void {
    this.startsAllowed = true;
    // One server per event-loop turn: spawning and building a client take ~10 ms each, and a
    // burst of them would hold up whatever else is due (e.g. config/updated to the editor).
    const queue = [...this.handles.values()];
    const next = () => {
      const h = queue.shift();
      if (!h || this.disposed) return;
      // Invalid and disabled entries are reported once, as they are. An entry removed or
      // replaced since the queue was taken is skipped (launch checks it is still the current one).
      this.launch(h);
      if (queue.length) setImmediate(next);
    };
    next();
  }

  async start(name: string): Promise<void> {
    if (this.disposed) throw new Error('MCP host is shut down');
    await this.handle(name).start();
  }

  async stop(name: string): Promise<void> {
    await this.handle(name).stop();
  }

  async signIn(name: string): Promise<void> {
    if (this.disposed) throw new Error('MCP host is shut down');
    await this.handle(name).signIn();
  }

  async logout(name: string): Promise<void> {
    if (this.disposed) throw new Error('MCP host is shut down');
    await this.handle(name).logout();
  }

  /**
   * For `mcp/removeServer` (ECA `remove-server!`): the server's tokens and registration go with it.
   * By then the reconcile has usually dropped its handle, so the stored entries go by name too.
   */
  async forgetServerCredentials(name: string): Promise<void> {
    await this.handles.get(name)?.forgetCredentials();
    const store = this.opts.secrets;
    if (store) for (const key of storedCredentialKeys(name)) await store.delete(key);
  }

  servers(): McpServerInfo[] {
    return [...this.handles.values()].map((h) => h.info());
  }

  starting(): string[] {
    return [...this.handles.values()].filter((h) => h.inFirstStart).map((h) => h.name);
  }

  async firstStarts(): Promise<void> {
    await Promise.all([...this.handles.values()].map((h) => h.firstStart));
  }

  resources(): McpResourceContext[] {
    return [...this.handles.values()].flatMap((h) => h.resources());
  }

  async readResource(ctx: Pick<McpResourceContext, 'server' | 'uri'>, signal: AbortSignal): Promise<string> {
    const h = this.handle(ctx.server);
    const s = h.session;
    if (!s) throw new Error(`MCP server "${ctx.server}" is ${h.status}`);
    return s.readResource(ctx.uri, signal);
  }

  updatedSince(resources: Array<Pick<McpResourceContext, 'server' | 'uri'>>): McpResourceContext[] {
    const out: McpResourceContext[] = [];
    for (const r of resources) {
      const h = this.handles.get(r.server);
      if (!h?.session?.isUpdated(r.uri)) continue;
      const known = h.resources().find((k) => k.uri === r.uri);
      out.push(known ?? { type: 'resource', uri: r.uri, name: r.uri, description: '', mimeType: '', server: r.server });
    }
    return out;
  }

  instructions(): string[] {
    return [...this.handles.values()].flatMap((h) => {
      const text = h.session?.instructions?.trim();
      return text ? [`Instructions from MCP server ${h.name}:\n${text}`] : [];
    });
  }

  /** The workspace folders changed: tell every running server (`notifications/roots/list_changed`). */
  async setRoots(roots: string[]): Promise<void> {
    this.roots = [...roots];
    await Promise.all([...this.handles.values()].map((h) => h.session?.rootsChanged()));
  }

  /** The child's pid of a running stdio server (diagnostics and tests). */
  pid(name: string): number | undefined {
    return this.handles.get(name)?.session?.pid;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.handles.values()].map((h) => h.dispose().catch((e: unknown) => log.warn(`${h.name}: ${errorMessage(e)}`))));
  }

  /** At once: SIGKILL to every stdio server's process tree (its workspace's shutdown ran past its deadline). */
  forceClose(): void {
    this.disposed = true;
    killTreesNow([...this.handles.values()].map((h) => h.session?.pid));
  }

  private handle(name: string): McpServerHandle {
    const h = this.handles.get(name);
    if (!h) throw new Error(`No MCP server named "${name}" is configured`);
    return h;
  }
}

/**
 * What an entry is compared by in reconcile: its JSON with keys sorted (a file saved with its keys
 * in another order is the same server) and `disabled: false` as if absent (what enable may write).
 */
function entryKey(raw: unknown): string {
  const stable = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      return `{${Object.keys(o)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${stable(o[k])}`)
        .join(',')}}`;
    }
    return JSON.stringify(v) ?? 'undefined';
  };
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && (raw as Record<string, unknown>).disabled === false) {
    const { disabled: _off, ...rest } = raw as Record<string, unknown>;
    return stable(rest);
  }
  return stable(raw);
}

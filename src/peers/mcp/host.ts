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
import { McpServerHandle, type RestartPolicy } from './server.js';
import type { McpHost, McpHostEvents, McpServerInfo } from './types.js';
import type { OAuthUser } from './oauth-provider.js';
import type { SecretStore } from '../../util/secrets.js';

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
}

export class McpHostImpl implements McpHost {
  private readonly handles = new Map<string, McpServerHandle>();
  private roots: string[];
  private disposed = false;

  private readonly opts: McpHostOptions & { restart: RestartPolicy };

  constructor(opts: McpHostOptions) {
    this.roots = [...opts.roots];
    this.opts = { ...opts, restart: { baseDelayMs: 1000, maxRestarts: 5, ...opts.restart } };
    for (const [name, raw] of Object.entries(opts.servers)) this.handles.set(name, this.newHandle(name, raw));
  }

  private newHandle(name: string, raw: unknown): McpServerHandle {
    const opts = this.opts;
    return new McpServerHandle(name, raw, {
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
      changed: (info) => {
        if (this.disposed) return;
        try {
          opts.events.serverUpdated(info);
        } catch (e) {
          log.warn(`serverUpdated listener: ${errorMessage(e)}`);
        }
      },
    });
  }

  add(servers: Record<string, unknown>): string[] {
    if (this.disposed) return [];
    const added: string[] = [];
    for (const [name, raw] of Object.entries(servers)) {
      if (this.handles.has(name)) continue;
      const h = this.newHandle(name, raw);
      this.handles.set(name, h);
      added.push(name);
      if (!h.autoStart) h.report();
      else void h.start().catch((e: unknown) => log.error(`${h.name}: ${errorMessage(e)}`));
    }
    return added;
  }

  startAll(): void {
    // One server per event-loop turn: spawning and building a client take ~10 ms each, and a
    // burst of them would hold up whatever else is due (e.g. config/updated to the editor).
    const queue = [...this.handles.values()];
    const next = () => {
      const h = queue.shift();
      if (!h || this.disposed) return;
      // Invalid and disabled entries are reported once, as they are.
      if (!h.autoStart) h.report();
      else void h.start().catch((e: unknown) => log.error(`${h.name}: ${errorMessage(e)}`));
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

  /** For `mcp/removeServer`: the server's tokens and registration go with it. */
  async forgetServerCredentials(name: string): Promise<void> {
    await this.handles.get(name)?.forgetCredentials();
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

  private handle(name: string): McpServerHandle {
    const h = this.handles.get(name);
    if (!h) throw new Error(`No MCP server named "${name}" is configured`);
    return h;
  }
}

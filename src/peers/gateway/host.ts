/**
 * The provider gateway (specs/tap-provider-gateway.md, core profile): a loopback WebSocket
 * server that binds tool providers to patchbay chats. Owns the token, the listener, the
 * heartbeat and the chat → providers map; each connection runs its own state machine.
 */
import { join, resolve } from 'node:path';
import type { WebSocket } from 'ws';
import { SHUTDOWN_DEADLINE_MS } from '../../protocol/gateway/index.js';
import { errorMessage, logger, type Logger } from '../../util/log.js';
import { ProviderConnection, type Binding, type ConnectionHost, type ConnectionTimings } from './connection.js';
import { listen, type Listener } from './server.js';
import { GatewayPublication } from './publish.js';
import { newToken } from './token.js';
import type { GatewayChats, GatewayConfig, GatewayHost } from './types.js';

/** Intervals and deadlines; the defaults are the spec's, tests shorten them. */
export interface GatewayTimings extends ConnectionTimings {
  /** `shutdown.pending` deadline announced to providers and enforced (spec: 10 s). */
  shutdownDeadlineMs: number;
  pingIntervalMs: number;
  /** A peer silent (no pong, no frame) for longer is terminated at the next tick: within timeout + interval. */
  pongTimeoutMs: number;
}

export interface GatewayHostOptions {
  config: GatewayConfig;
  /** PATCHBAY_HOME: the run file goes to `<home>/gateway/run/<pid>.json`, the older pair beside `run/`. */
  home: string;
  /** The workspace folders served, published in the run file (providers may choose by workspace). */
  roots?: () => string[];
  chats: GatewayChats;
  timings?: Partial<GatewayTimings>;
  /** Server names other tool sources own (configured MCP servers): providers may not use them. */
  reservedNames?: () => Iterable<string>;
}

const DEFAULT_MAX_UNAUTHENTICATED = 256;

/** The port the spec's examples use; preferred, not required. */
const DEFAULT_PORT = 9400;

const DEFAULT_TIMINGS: Omit<GatewayTimings, 'rateLimitPerSecond'> = {
  authTimeoutMs: 5_000,
  defaultToolTimeoutMs: 60_000,
  shutdownDeadlineMs: SHUTDOWN_DEADLINE_MS,
  pingIntervalMs: 20_000,
  pongTimeoutMs: 40_000,
};

export class GatewayHostImpl implements GatewayHost {
  /** The older shared token file (`<home>/gateway/provider-token`). */
  readonly tokenFile: string;
  /** This gateway's own run file (`<home>/gateway/run/<pid>.json`). */
  readonly runFile: string;
  private readonly publication: GatewayPublication;
  private currentToken = newToken();
  private readonly log: Logger = logger('gateway');
  private readonly timings: GatewayTimings;
  private readonly connections = new Set<ProviderConnection>();
  /** chatId → provider name → its connection (Bound only). */
  private readonly bindings = new Map<string, Map<string, ProviderConnection>>();
  private listener: Listener | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private stopping = false;
  /** Set by stop(): the next start makes a new token. */
  private stale = false;

  constructor(private readonly opts: GatewayHostOptions) {
    this.publication = new GatewayPublication(join(opts.home, 'gateway'));
    this.tokenFile = this.publication.tokenFile;
    this.runFile = this.publication.runFile;
    this.timings = { ...DEFAULT_TIMINGS, rateLimitPerSecond: opts.config.rateLimitPerSecond || 200, ...opts.timings };
    this.connectionHost = this.makeConnectionHost();
  }

  /** Fresh per start (the first one is made with the host, so it can be published before start). */
  get token(): string {
    return this.currentToken;
  }

  async start(): Promise<{ url: string; port: number }> {
    if (this.listener) throw new Error('gateway already started');
    if (this.stale) this.currentToken = newToken();
    this.stale = false;
    this.stopping = false;
    const host = this.opts.config.host || '127.0.0.1';
    const preferred = this.opts.config.port ?? DEFAULT_PORT;
    const options = {
      host,
      port: preferred,
      maxConnections: this.opts.config.maxConnections || 2000,
      connections: () => this.authenticated(),
      accepting: () => !this.stopping,
      onConnection: (ws: WebSocket) => this.accept(ws),
      onRefused: (status: number, reason: string) => this.log.warn(`refused a connection (${status}): ${reason}`),
    };
    let listener: Listener;
    try {
      listener = await listen(options);
    } catch (e) {
      // The preferred port is a convenience (providers find the real one in the address file):
      // a second patchbay (an editor and a terminal) must still get a gateway.
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || preferred === 0) throw e;
      listener = await listen({ ...options, port: 0 });
      this.log.info(`port ${preferred} is in use (another patchbay?); listening on port ${listener.port} instead`);
    }
    this.listener = listener;
    const url = `ws://${host.includes(':') ? `[${host}]` : host}:${listener.port}`;
    try {
      this.publication.publish({ url, port: listener.port, token: this.token, roots: this.roots() });
    } catch (e) {
      this.publication.withdraw();
      await listener.close();
      this.listener = undefined;
      throw new Error(`cannot write the gateway's run file ${this.runFile}: ${errorMessage(e)}`);
    }
    this.heartbeat = setInterval(() => {
      const now = Date.now();
      for (const c of this.connections) c.heartbeat(now, this.timings.pongTimeoutMs);
    }, this.timings.pingIntervalMs);
    this.heartbeat.unref();
    this.log.info(`listening on ${url}`);
    return { url, port: listener.port };
  }

  private accept(ws: WebSocket): void {
    // Sockets waiting to authenticate have their own cap: the oldest makes room for the newest.
    const waiting = [...this.connections].filter((c) => c.state.kind === 'AwaitAuth');
    const cap = this.opts.config.maxUnauthenticated || DEFAULT_MAX_UNAUTHENTICATED;
    for (const old of waiting.slice(0, Math.max(0, waiting.length - cap + 1))) {
      old.fatal('AUTH_FAILED', `too many connections waiting to authenticate (${cap}); the oldest are closed first`);
    }
    const conn = new ProviderConnection(ws, this.connectionHost);
    this.connections.add(conn);
  }

  /** Connections past auth (AwaitHello or Bound): what `maxConnections` limits. */
  private authenticated(): number {
    let n = 0;
    for (const c of this.connections) if (c.state.kind === 'AwaitHello' || c.state.kind === 'Bound') n++;
    return n;
  }

  chatStarted(chatId: string): void {
    for (const c of this.inChat(chatId)) c.lifecycle('started');
  }

  chatIdle(chatId: string): void {
    for (const c of this.inChat(chatId)) c.lifecycle('idle');
  }

  async chatEnded(chatId: string): Promise<void> {
    await Promise.all(this.inChat(chatId).map((c) => c.shutdown(this.timings.shutdownDeadlineMs)));
  }

  providers(): Array<{ name: string; providerId: string; chatId: string; tools: number }> {
    const out: Array<{ name: string; providerId: string; chatId: string; tools: number }> = [];
    for (const c of this.connections) {
      const b = c.binding;
      if (b) out.push({ name: b.name, providerId: b.providerId, chatId: b.chatId, tools: b.tools.length });
    }
    return out;
  }

  async stop(): Promise<void> {
    const listener = this.listener;
    if (!listener) return;
    this.stopping = true;
    clearInterval(this.heartbeat);
    await Promise.all([...this.connections].map((c) => c.shutdown(this.timings.shutdownDeadlineMs)));
    // Peers that never answered the close handshake.
    for (const ws of listener.wss.clients) ws.terminate();
    await listener.close();
    this.listener = undefined;
    this.publication.withdraw();
    this.stale = true;
    this.log.info('stopped');
  }

  /** The workspace folders changed: the run file says so (providers choosing by workspace). */
  rootsChanged(): void {
    try {
      this.publication.setRoots(this.roots());
    } catch (e) {
      this.log.warn(`updating the gateway's run file: ${errorMessage(e)}`);
    }
  }

  /** The process is ending without a stop(): our files go anyway (synchronous). */
  forceClose(): void {
    try {
      this.publication.withdraw();
    } catch (e) {
      this.log.warn(`removing the gateway's run file: ${errorMessage(e)}`);
    }
  }

  private roots(): string[] {
    return (this.opts.roots?.() ?? []).map((r) => resolve(r));
  }

  private inChat(chatId: string): ProviderConnection[] {
    return [...(this.bindings.get(chatId)?.values() ?? [])];
  }

  private announce(chatId: string): void {
    const providers = this.inChat(chatId).flatMap((c) => {
      const b = c.binding;
      return b ? [{ name: b.name, providerId: b.providerId, tools: b.tools }] : [];
    });
    this.opts.chats.providersChanged(chatId, providers);
  }

  /** Calls into patchbay are a boundary too: a throw there must not take a connection down. */
  private guarded(what: string, f: () => void): void {
    try {
      f();
    } catch (e) {
      this.log.error(`gateway → ${what}: ${errorMessage(e)}`);
    }
  }

  private readonly connectionHost: ConnectionHost;

  /** The gateway as its connections see it. */
  private makeConnectionHost(): ConnectionHost {
    // The token changes on restart: a getter, so connections read the current one.
    const gateway = this;
    return {
      log: this.log,
      timings: this.timings,
      get token() {
        return gateway.token;
      },
      authenticatedFull: () => this.authenticated() >= (this.opts.config.maxConnections || 2000),
      nameReserved: (name: string) => {
        const lower = name.toLowerCase();
        for (const n of this.opts.reservedNames?.() ?? []) if (n.toLowerCase() === lower) return 'is the name of an MCP server in your config';
        return undefined;
      },
      sessions: () => {
        try {
          return this.opts.chats.active();
        } catch (e) {
          this.log.error(`gateway → chats.active: ${errorMessage(e)}`);
          return [];
        }
      },
      bind: (conn: ProviderConnection, b: Binding) => {
        const chat = this.bindings.get(b.chatId) ?? new Map<string, ProviderConnection>();
        const holder = chat.get(b.name);
        if (holder && holder !== conn) return false;
        chat.set(b.name, conn);
        this.bindings.set(b.chatId, chat);
        return true;
      },
      toolsChanged: (b: Binding) => {
        let refused: string | undefined;
        this.guarded('setTools', () => (refused = this.opts.chats.setTools(b.chatId, b.name, b.tools)));
        if (refused) return refused;
        this.guarded('providersChanged', () => this.announce(b.chatId));
        return undefined;
      },
      unbind: (conn: ProviderConnection, b: Binding) => {
        const chat = this.bindings.get(b.chatId);
        if (chat?.get(b.name) !== conn) return;
        chat.delete(b.name);
        if (!chat.size) this.bindings.delete(b.chatId);
        this.guarded('setTools', () => this.opts.chats.setTools(b.chatId, b.name, []));
        this.guarded('providersChanged', () => this.announce(b.chatId));
      },
      push: (entry) => this.guarded('push', () => this.opts.chats.push(entry)),
      closed: (conn: ProviderConnection) => {
        this.connections.delete(conn);
      },
    };
  }
}

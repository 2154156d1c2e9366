/**
 * The workspace runtime: everything a front end (the ECA server, `patchbay doctor`, later ACP or
 * an MCP-server façade) works with: config, store, tool and command registries, the LLM layer,
 * the chats, and the peers (src/peers/index.ts). Built from plain options; nothing here knows a
 * wire protocol. Disposing it stops every turn and peer and closes the store.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/schema.js';
import { formatConfigError, heldBack, patchbayHome, userConfigPath, type ConfigError, type WorkspaceConfigTrust } from '../config/load.js';
import { heldBackMessage } from '../config/held-back.js';
import { isTrustedFolder } from '../config/trust.js';
import { trustHeldBack } from './trust.js';
import { loadWorkspaceConfig, type WorkspaceConfig } from './workspace-config.js';
import { ChatService } from '../core/chats.js';
import { CommandRegistry } from '../core/commands.js';
import type { ChatDeps } from '../core/deps.js';
import type { ChatEvents } from '../core/events.js';
import { nativeCommands } from '../core/native-commands.js';
import { ToolRegistry } from '../core/tool-registry.js';
import { nativeTools, storedTaskLists } from '../core/tools/native/index.js';
import { FileIndex, queryContexts, renderContexts, buildRepoMap } from '../core/context/index.js';
import type { EditorBridge, EditorDiagnostic } from '../shapes/tool.js';
import type { AskUser } from '../shapes/ask.js';
import type { LlmClient, ModelEntry } from '../shapes/llm.js';
import type { Context, OfferedContext, ResourceContext } from '../shapes/context.js';
import type { Peer, PeerHost, ToolServerStatus } from '../shapes/peer.js';
import { PEERS } from '../peers/index.js';
import { computeCost, createClient, pickDefaultModel, resolveModels, streamWithRetry } from '../peers/llm/index.js';
import { SqliteStore } from '../store/sqlite.js';
import { errorMessage, logToFile, logger, setLogLevel } from '../util/log.js';
import { killDescendantsNow } from '../util/process-tree.js';
import { resolvePath } from '../util/paths.js';
import { ensurePrivateDir } from '../util/private-dir.js';
import { doctorReport } from './doctor.js';
import { safely } from '../util/guards.js';

const log = logger('workspace');

/** What the front end can do; the runtime adapts to it. */
export interface FrontEnd {
  /** It can ask the user to approve a tool call (else a call that would ask is refused). */
  canAsk: boolean;
  /** It shows diffs of file changes (`details`) before approval. */
  canShowDiffs: boolean;
  /** Its editor's diagnostics, when it has an editor that offers them. */
  diagnostics?: (uri?: string) => Promise<EditorDiagnostic[]>;
  /** Puts a question to the user mid-turn; the `ask_user` tool is offered only when it is set. */
  ask?: AskUser;
}

export interface WorkspaceOptions {
  /** Absolute workspace folders; the first is the default for relative paths. */
  roots: string[];
  env: NodeJS.ProcessEnv;
  /** A config layer the front end was given (ECA `initializationOptions`). */
  initializationOptions?: unknown;
  configFile?: string;
  logLevel?: Config['logLevel'];
  /** The config already loaded for these roots (a front end that answers its handshake first). */
  loaded?: WorkspaceConfig;
  frontEnd: FrontEnd;
  /** Where core's chat events go (the front end translates them). */
  events: ChatEvents;
  /** A tool server (MCP server, language server, gateway provider) changed status or tools. */
  onToolServer?: (status: ToolServerStatus) => void;
  /** Models changed after start (a trusted workspace's providers). */
  onModelsChanged?: (workspace: Workspace) => void;
  /** A start-up task began or ended (a front end may show them; each `started` gets one `finished`). */
  onTask?: (task: StartupTask) => void;
}

/**
 * The work a workspace does once at start-up, which a front end may show while it runs:
 * `models` (configured and discovered models), `servers` (the processes peers run: MCP servers).
 */
export type StartupTaskId = 'models' | 'servers';
export interface StartupTask {
  id: StartupTaskId;
  title: string;
  state: 'started' | 'finished';
}

/** How long the `servers` task waits for servers still starting (they go on; their status is reported on its own). */
const SERVERS_TASK_MAX_MS = 60_000;

export class Workspace {
  readonly roots: string[];
  readonly home: string;
  config: Config;
  configErrors: ConfigError[];
  configSources: string[];
  /** Workspace config files and their trust (src/config/trust.ts). */
  workspaces: WorkspaceConfigTrust[];
  models: ModelEntry[] = [];
  defaultModel: ModelEntry | undefined;
  readonly tools = new ToolRegistry();
  readonly commands = new CommandRegistry();
  readonly store: SqliteStore;
  readonly chats: ChatService;
  readonly indexes: FileIndex[];
  /** The peers, by name, in the order of src/peers/index.ts. */
  private readonly peers = new Map<string, Peer>();
  /** What tools see of the editor: its diagnostics merged with the peers' (language servers). */
  private readonly editor: EditorBridge;
  private readonly clients = new Map<string, Promise<LlmClient>>();
  /** Resolves once models are known (Ollama discovery may take a moment). */
  modelsReady: Promise<void>;

  /** Builds a workspace: loads the peers' code, then starts nothing but what is lazy. */
  static async create(opts: WorkspaceOptions): Promise<Workspace> {
    const makers = await Promise.all(PEERS.map(async (p) => ({ name: p.name, make: (await p.load()) as (host: PeerHost<unknown>) => Peer })));
    return new Workspace(opts, makers);
  }

  private constructor(
    private readonly opts: WorkspaceOptions,
    makers: Array<{ name: string; make: (host: PeerHost<unknown>) => Peer }>,
  ) {
    const loaded = opts.loaded ?? this.loadConfig();
    this.roots = loaded.roots;
    this.config = loaded.config;
    this.configErrors = loaded.errors;
    this.configSources = loaded.sources;
    this.workspaces = loaded.workspaces;
    setLogLevel(opts.logLevel ?? this.config.logLevel);
    this.home = patchbayHome(opts.env);
    ensurePrivateDir(this.home);
    logToFile(join(this.home, 'logs', 'server.log'));
    for (const e of loaded.errors) log.warn(formatConfigError(e));
    for (const m of this.heldBackMessages()) log.warn(m);
    this.store = SqliteStore.open(this.home);
    const recovered = this.store.recoverInterrupted();
    if (recovered.length) log.info(`marked ${recovered.length} interrupted chat(s): ${recovered.join(', ')}`);
    this.indexes = this.roots.map((r) => new FileIndex(r));
    this.editor = this.mergedEditor();
    const native = nativeTools({
      shellTimeoutSeconds: this.config.toolCall.shellCommand?.timeoutSeconds,
      maxOutputChars: this.config.toolCall.shellCommand?.maxOutputChars,
      events: this.store,
      ask: this.opts.frontEnd.ask,
      // The chat's messages in memory: no store read per task call.
      taskLists: storedTaskLists((chatId) => this.chats.messages(chatId)),
    });
    // Native tools come first in every list the model sees; peers may wrap them (below).
    this.tools.set('native', native);
    this.commands.set('native', nativeCommands({ doctor: () => this.doctor(), repoMap: (signal) => this.repoMap(signal), trust: () => this.trust() }));
    this.chats = new ChatService(this.deps(), this.commands);
    for (const { name, make } of makers) this.peers.set(name, make(this.peerHost(name)));
    this.tools.set(
      'native',
      native.map((t) => this.all().reduce((tool, p) => p.wrapTool?.(tool) ?? tool, t)),
    );
    // Off the front end's handshake: discovery loads the HTTP stack and may probe Ollama.
    this.modelsReady = new Promise<void>((r) => setImmediate(r)).then(() => this.task('models', 'Syncing models', () => this.refreshModels()));
  }

  private loadConfig(): WorkspaceConfig {
    const { roots, env, initializationOptions, configFile } = this.opts;
    return loadWorkspaceConfig({ roots, env, initializationOptions, configFile });
  }

  private all(): Peer[] {
    return [...this.peers.values()];
  }

  /** What one peer may use of the workspace. */
  private peerHost(name: string): PeerHost<unknown> {
    const keys = Object.keys(PEERS.find((p) => p.name === name)!.config);
    return {
      // Read anew each time: `/trust` may replace the config.
      config: () => Object.fromEntries(keys.map((k) => [k, (this.config as Record<string, unknown>)[k]])),
      roots: this.roots,
      home: this.home,
      env: this.opts.env,
      log: logger(name),
      logLevel: () => this.config.logLevel,
      tools: this.tools,
      commands: this.commands,
      events: this.store,
      db: this.store.db,
      trustedFolder: (root) => isTrustedFolder(this.home, root),
      userConfigDir: () => dirname(this.opts.configFile ? resolve(this.opts.configFile) : userConfigPath(this.opts.env)),
      toolServer: (status) => this.opts.onToolServer?.(status),
      chats: {
        active: () => this.chats.active(),
        setTools: (chatId, source, tools) => {
          const refused = this.tools.check(source, tools, chatId);
          if (refused.length) return refused.map((r) => r.reason).join('; ');
          this.tools.setForChat(chatId, source, tools);
          return undefined;
        },
        surface: (chatId, text) => this.chats.surface(chatId, text),
        inject: (chatId, text, startTurn) => this.chats.inject(chatId, text, startTurn),
      },
      queryFiles: (q) => queryContexts(this.indexes, q, { roots: this.roots }).flatMap((c) => (c.type === 'file' ? [c.path] : [])),
      editorDiagnostics: async (uri) => (await this.opts.frontEnd.diagnostics?.(uri)) ?? [],
      reservedServerNames: () => [...this.peers].flatMap(([n, p]) => (n === name ? [] : (p.serverNames?.() ?? []))),
      resources: () => this.all().flatMap((p) => p.resources?.() ?? []),
      readResource: (ctx, signal) => this.readResource(ctx, signal),
      ...(this.opts.frontEnd.ask ? { ask: this.opts.frontEnd.ask } : {}),
    };
  }

  private deps(): ChatDeps {
    return {
      store: this.store,
      events: this.opts.events,
      frontEnd: { canAsk: this.opts.frontEnd.canAsk, canShowDiffs: this.opts.frontEnd.canShowDiffs },
      tools: this.tools,
      editor: this.editor,
      config: () => this.config,
      roots: () => this.roots,
      models: () => this.models,
      defaultModel: () => this.defaultModel,
      clientFor: (entry) => this.clientFor(entry),
      stream: (client, req, o) => streamWithRetry(client, req, o),
      cost: (entry, usage) => computeCost(entry, usage),
      renderContexts: (contexts, signal) => {
        // An @-mentioned file is touched: its language server starts and opens it.
        for (const c of contexts) {
          if (c.type !== 'file') continue;
          const path = safely(() => resolvePath(c.path, this.roots));
          // A bad path: the renderer reports it.
          if (path) for (const p of this.all()) p.fileTouched?.(path);
        }
        return renderContexts(contexts, {
          roots: this.roots,
          signal,
          webMaxChars: this.config.context.webMaxChars,
          repoMapMaxEntries: this.config.context.repoMapMaxEntries,
          readResource: (ctx, s) => this.readResource(ctx, s),
          annotate: async (path, content, s) => (await Promise.all(this.all().map((p) => p.annotate?.(path, content, s) ?? ''))).filter(Boolean).join('\n'),
        });
      },
      messageContext: async (message, signal) => (await Promise.all(this.all().map((p) => p.messageContext?.(message, signal) ?? ''))).filter(Boolean).join('\n\n'),
      instructions: () => this.all().flatMap((p) => p.instructions?.() ?? []),
      toolsReady: async (chatId, signal) => {
        const report = {
          progress: (text: string) => this.opts.events.event(chatId, { type: 'progress', text }),
          notice: (text: string) => this.opts.events.event(chatId, { type: 'notice', text }),
        };
        await Promise.all(this.all().map((p) => p.toolsReady?.(signal, report)));
      },
      lifecycle: {
        created: (id) => this.all().forEach((p) => p.chatStarted?.(id)),
        idle: (id) => this.all().forEach((p) => p.chatIdle?.(id)),
        ended: (id) => {
          for (const p of this.all()) p.chatEnded?.(id);
          for (const c of this.clients.values()) void c.then((client) => client.release?.(id)).catch(() => {});
        },
      },
      updatedContexts: (refs) => {
        const resources = refs.flatMap((c) => (c.type === 'resource' ? [c] : []));
        return this.all().flatMap((p) => p.updatedContexts?.(resources) ?? []);
      },
    };
  }

  /** A resource context read through the peer that offers it. */
  private readResource(ctx: Pick<ResourceContext, 'server' | 'uri'>, signal: AbortSignal): Promise<string> {
    for (const p of this.all()) {
      const read = p.readContext?.(ctx, signal);
      if (read) return read;
    }
    return Promise.reject(new Error(`No server named "${ctx.server}" offers resources (no MCP server or OpenCtx provider by that name is configured)`));
  }

  /** The front end's diagnostics (when it has them) merged with the peers' own (language servers). */
  private mergedEditor(): EditorBridge {
    const theirs = this.opts.frontEnd.diagnostics;
    return {
      getDiagnostics: async (uri?: string) => {
        const path = uri ? fileURLToPath(uri) : undefined;
        const own: EditorDiagnostic[] = this.all().flatMap((p) => p.diagnostics?.(path) ?? []);
        const editor = theirs ? await theirs(uri).catch(() => []) : [];
        const key = (d: EditorDiagnostic) => `${d.uri}|${d.range.start.line}|${d.range.start.character}|${d.message}`;
        const seen = new Set(editor.map(key));
        return [...editor, ...own.filter((d) => !seen.has(key(d)))];
      },
    };
  }

  /** Starts what peers serve (listeners: the gateway, the OpenCtx host). A failure is the peer's to report. */
  startListeners(): Array<{ peer: string; started: Promise<void> }> {
    // A peer that throws at once fails only its own start, as one that rejects does.
    return [...this.peers].map(([peer, p]) => ({ peer, started: Promise.resolve().then(() => p.start?.()) }));
  }

  /**
   * Starts the processes peers run (MCP servers) once `after` resolves, as the `servers` task:
   * it begins now and ends when each has started or failed (at most SERVERS_TASK_MAX_MS, or on dispose).
   */
  startServers(after: Promise<void> = Promise.resolve()): Promise<void> {
    return this.task('servers', 'Initializing MCP servers', async () => {
      await after;
      if (this.disposed) return;
      const running = this.all().filter((p) => p.startServers);
      for (const p of running) p.startServers?.();
      const signal = AbortSignal.any([this.stopping.signal, AbortSignal.timeout(SERVERS_TASK_MAX_MS)]);
      await Promise.all(running.map((p) => p.settle?.(signal)));
    });
  }

  /** Runs one start-up task, telling the front end it started and, whatever happens, that it finished. */
  private async task(id: StartupTaskId, title: string, work: () => Promise<void>): Promise<void> {
    const tell = (state: StartupTask['state']) => {
      try {
        this.opts.onTask?.({ id, title, state });
      } catch (e) {
        log.warn(`start-up task ${id}: ${errorMessage(e)}`);
      }
    };
    tell('started');
    try {
      await work();
    } catch (e) {
      log.warn(`start-up task ${id} failed: ${errorMessage(e)}`);
    } finally {
      tell('finished');
    }
  }

  /** Waits, bounded, until every peer's state is real (servers started or failed): for one-shot runs. */
  async settle(signal: AbortSignal): Promise<void> {
    await Promise.all(this.all().map((p) => p.settle?.(signal).catch((e: unknown) => log.warn(errorMessage(e)))));
  }

  /** Starts or stops a tool server by name; false when no peer has one by that name. */
  async toggleServer(name: string, on: boolean): Promise<boolean> {
    for (const p of this.all()) {
      const done = on ? p.startServer?.(name) : p.stopServer?.(name);
      if (done) {
        await done;
        return true;
      }
    }
    return false;
  }

  /** Signs in to a tool server (OAuth), or out of it; false when no peer has one by that name. */
  async serverSignIn(name: string, what: 'connect' | 'logout'): Promise<boolean> {
    for (const p of this.all()) {
      const done = what === 'connect' ? p.connectServer?.(name) : p.logoutServer?.(name);
      if (done) {
        await done;
        return true;
      }
    }
    return false;
  }

  async refreshModels(): Promise<void> {
    try {
      this.models = await resolveModels(this.config, this.opts.env);
    } catch (e) {
      log.error(`resolving models failed: ${(e as Error).message}`);
      this.models = [];
    }
    this.defaultModel = pickDefaultModel(this.models, this.config.defaultModel);
    if (this.config.defaultModel && this.defaultModel?.id !== this.config.defaultModel) {
      log.warn(`defaultModel "${this.config.defaultModel}" is not among the available models`);
    }
  }

  private clientFor(entry: ModelEntry): Promise<LlmClient> {
    let c = this.clients.get(entry.id);
    if (!c) {
      c = Promise.resolve(createClient(entry, { home: this.home }));
      c.catch(() => this.clients.delete(entry.id));
      this.clients.set(entry.id, c);
    }
    return c;
  }

  /** The @-mention search: files, directories and the like, every peer's resources, and what peers matched themselves. */
  async queryContext(query: string, exclude: Context[] = []): Promise<OfferedContext[]> {
    const mentions = await Promise.all(this.all().map((p) => p.mentions?.(query) ?? []));
    const resources = this.all().flatMap((p) => p.resources?.() ?? []);
    return queryContexts(this.indexes, query, { roots: this.roots, exclude, resources, mentions: mentions.flat() });
  }

  /** What an untrusted workspace config asked for and did not get, one message per file. */
  heldBackMessages(): string[] {
    return heldBack(this).map(heldBackMessage);
  }

  /** `/trust`: trust the folders whose settings were held back, and apply them. */
  trust(): Promise<string> {
    return trustHeldBack({
      home: this.home,
      workspaces: this.workspaces,
      reload: () => this.loadConfig(),
      apply: (loaded) => {
        this.config = loaded.config;
        this.configErrors = loaded.errors;
        this.configSources = loaded.sources;
        this.workspaces = loaded.workspaces;
      },
      reconfigurePeers: () => this.all().flatMap((p) => p.reconfigure?.() ?? []),
      modelsChanged: async (providers) => {
        // Clients were built with the old URL and key: the next turn builds new ones.
        for (const id of [...this.clients.keys()]) if (providers.some((p) => id.startsWith(`${p}/`))) this.clients.delete(id);
        await this.refreshModels();
        this.opts.onModelsChanged?.(this);
      },
    });
  }

  repoMap(signal: AbortSignal): Promise<string> {
    return buildRepoMap(this.roots, { signal, maxEntries: this.config.context.repoMapMaxEntries });
  }

  async doctor(): Promise<string> {
    const sections = await Promise.all(this.all().map((p) => p.doctor?.().catch((e: unknown) => ({ lines: [`(failed: ${errorMessage(e)})`] }))));
    return doctorReport({
      home: this.home,
      dbPath: this.store.path,
      roots: this.roots,
      configSources: this.configSources,
      configErrors: this.configErrors.map(formatConfigError),
      heldBack: this.heldBackMessages(),
      models: this.models,
      defaultModel: this.defaultModel,
      tools: this.tools.all(),
      peers: sections.flatMap((s) => s?.lines ?? []),
    });
  }

  private disposed: Promise<void> | undefined;
  /** Aborted on dispose: start-up tasks stop waiting. */
  private readonly stopping = new AbortController();

  /** Stops every turn and peer, then closes indexes and the store. Safe to call more than once. */
  dispose(): Promise<void> {
    this.stopping.abort();
    this.disposed ??= (async () => {
      // Turns wind down (up to 2 s) while the peers stop: a peer's clean stop never waits behind
      // them, and a turn waiting on a tool call ends as soon as its peer is gone.
      await Promise.all([
        this.chats.dispose().catch((e: unknown) => log.error(`stopping chats: ${errorMessage(e)}`)),
        ...[...this.peers].map(([name, p]) => p.dispose().catch((e: unknown) => log.error(`stopping ${name}: ${errorMessage(e)}`))),
        ...[...this.clients.values()].map((c) => c.then((client) => client.dispose?.()).catch(() => {})),
      ]);
      this.close();
    })();
    return this.disposed;
  }

  /**
   * Shutdown ran past its deadline (the front end is gone and the process is about to end): kill
   * every process patchbay started and close the store now, so nothing outlives us or is left open.
   */
  forceClose(): void {
    killDescendantsNow();
    for (const p of this.all()) {
      try {
        p.forceClose?.();
      } catch (e) {
        log.warn(errorMessage(e));
      }
    }
    this.close();
  }

  /** The store and the indexes. Idempotent. */
  private close(): void {
    for (const ix of this.indexes) ix.dispose();
    try {
      this.store.close();
    } catch {
      /* already closed */
    }
  }
}

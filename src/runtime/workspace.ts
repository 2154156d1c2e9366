/**
 * Everything one editor connection owns once initialized: config, models, tools, file
 * indexes, the store and the chats. Disposing it stops every turn and closes the store.
 */
import { resolvePath } from '../util/paths.js';
import { readContainedText } from '../util/contained.js';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { formatConfigError, heldBack, patchbayHome, userConfigPath, type ConfigError, type WorkspaceConfigTrust } from '../config/load.js';
import { heldBackMessage } from '../config/held-back.js';
import { trustHeldBack } from './trust.js';
import { isTrustedFolder } from '../config/trust.js';
import { loadSessionConfig, type SessionConfig } from './workspace-config.js';
import { ChatService } from '../core/chats.js';
import { CommandRegistry } from '../core/commands.js';
import type { ChatDeps } from '../core/deps.js';
import type { ChatEvents } from '../core/events.js';
import { nativeCommands } from '../core/native-commands.js';
import type { EditorBridge } from '../shapes/tool.js';
import { ToolRegistry } from '../core/tool-registry.js';
import { nativeTools } from '../core/tools/native/index.js';
import { FileIndex, queryContexts, renderContexts, buildRepoMap } from '../core/context/index.js';
import type { LlmClient, ModelEntry } from '../shapes/llm.js';
import { computeCost, createClient, pickDefaultModel, resolveModels, streamWithRetry } from '../peers/llm/index.js';
import { SqliteStore } from '../store/sqlite.js';
import { errorMessage, logToFile, logger, setLogLevel } from '../util/log.js';
import { killDescendantsNow } from '../util/process-tree.js';
import type { InitializeParams } from '../protocol/eca/lifecycle.js';
import { chatContextSchema } from '../protocol/eca/context.js';
import { doctorReport } from './doctor.js';
import { waitForMcpStarts } from './mcp-start-wait.js';
import { McpHostImpl, type McpHost } from '../peers/mcp/index.js';
import { GatewayHostImpl, type GatewayChats, type GatewayHost } from '../peers/gateway/index.js';
import { LspHostImpl, SqliteXCache, type LspHost } from '../peers/lsp/index.js';
import type { EditorDiagnostic } from '../shapes/tool.js';
import { OpenCtxClient, renderAnnotations, type ClientMention } from '../peers/openctx/client/index.js';
import { OpenCtxHost, diagnostics as diagnosticsProvider, eventStreams, mcpResources, moduleProvider, workspaceFiles, type OpenCtxProviderImpl } from '../peers/openctx/host/index.js';
import { defineNativeTool } from '../core/tools/native/index.js';
import { textResult, type Tool } from '../shapes/tool.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { ensurePrivateDir } from '../util/private-dir.js';
import { LogBudget } from '../util/log-budget.js';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { ToolServerUpdated } from '../protocol/eca/lifecycle.js';

const log = logger('session');

export interface SessionOptions {
  params: InitializeParams;
  events: ChatEvents;
  editor: EditorBridge;
  env: NodeJS.ProcessEnv;
  configFile?: string;
  logLevel?: Config['logLevel'];
  /** The config `initialize` already loaded; loaded here when absent. */
  loaded?: SessionConfig;
  /** A tool server (MCP server, gateway provider) changed status or tools: `tool/serverUpdated`. */
  onToolServer?: (params: ToolServerUpdated) => void;
  /** Models changed after start (a trusted workspace's providers): `config/updated`. */
  onModelsChanged?: (session: Session) => void;
}

export class Session {
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
  readonly mcp: McpHost;
  readonly gateway: GatewayHost | undefined;
  readonly openctx: OpenCtxClient;
  readonly lsp: LspHost;
  /** What the editor's tools see: its own bridge, with diagnostics merged with the language servers'. */
  private readonly editor: EditorBridge;
  openctxHost: OpenCtxHost | undefined;
  /** Set once the gateway listens. */
  gatewayUrl: string | undefined;
  /** Provider names per chat, to report the ones that went away. */
  private readonly providerNames = new Map<string, Set<string>>();
  /** Per chat and provider: how many pushed events may reach the chat and the model (pushBudgets). */
  private readonly budgets = new Map<string, { surface: LogBudget; inject: LogBudget }>();
  private readonly clients = new Map<string, Promise<LlmClient>>();
  /** Resolves once models are known (Ollama discovery may take a moment). */
  modelsReady: Promise<void>;

  constructor(private readonly opts: SessionOptions) {
    const loaded = opts.loaded ?? loadSessionConfig(opts.params, opts.env, opts.configFile);
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
    this.lsp = new LspHostImpl({
      servers: this.config.languageServers,
      roots: this.roots,
      env: opts.env,
      xcache: new SqliteXCache(this.store.db),
      onStatusChange: () => this.reportLspChanges(),
      trustedFolder: (root) => isTrustedFolder(this.home, root),
    });
    this.editor = this.mergedEditor();
    this.tools.set(
      'native',
      nativeTools({
        shellTimeoutSeconds: this.config.toolCall.shellCommand?.timeoutSeconds,
        maxOutputChars: this.config.toolCall.shellCommand?.maxOutputChars,
        events: this.store,
      }).map((t) => this.withLanguageServers(t)),
    );
    this.tools.set('lsp', this.lsp.tools());
    this.openctx = new OpenCtxClient({ config: this.config.openctx, roots: this.roots, moduleBase: this.moduleBase(), log: logger('openctx') });
    if (Object.keys(this.config.openctx.providers).length) this.tools.set('openctx', [this.annotationsTool()]);
    this.gateway = this.config.gateway.enabled ? new GatewayHostImpl({ config: this.config.gateway, home: this.home, chats: this.gatewayChats(), reservedNames: () => Object.keys(this.config.mcpServers) }) : undefined;
    if (this.gateway) {
      // Published to every process patchbay starts (MCP servers, shell commands): they may be providers.
      process.env.PATCHBAY_PROVIDER_TOKEN = this.gateway.token;
      process.env.TAP_PROVIDER_TOKEN = this.gateway.token;
    }
    this.commands.set('native', nativeCommands({ doctor: () => this.doctor(), repoMap: (signal) => this.repoMap(signal), trust: () => this.trust() }));
    this.mcp = new McpHostImpl({
      servers: this.config.mcpServers,
      timeoutSeconds: this.config.mcpTimeoutSeconds,
      logLevel: this.config.logLevel,
      roots: this.roots,
      env: opts.env,
      tools: this.tools,
      commands: this.commands,
      events: {
        serverUpdated: (info) =>
          opts.onToolServer?.({ type: 'mcp', name: info.name, command: info.command, args: info.args, status: info.status, tools: info.tools, ...(info.lastError ? { error: info.lastError } : {}) }),
      },
    });
    this.chats = new ChatService(this.deps(), this.commands);
    // Off the `initialize` path: discovery loads the HTTP stack and may probe Ollama.
    this.modelsReady = new Promise<void>((r) => setImmediate(r)).then(() => this.refreshModels());
  }

  private deps(): ChatDeps {
    return {
      store: this.store,
      events: this.opts.events,
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
          try {
            if (c.type === 'file') this.lsp.fileRead(resolvePath(c.path, this.roots));
          } catch {
            // A bad path: the renderer reports it.
          }
        }
        return renderContexts(contexts, {
          roots: this.roots,
          signal,
          webMaxChars: this.config.context.webMaxChars,
          repoMapMaxEntries: this.config.context.repoMapMaxEntries,
          // OpenCtx mentions travel as mcpResource contexts with server `openctx:<provider>`.
          resolveMcpResource: (ctx, s) => (ctx.server.startsWith('openctx:') ? this.openctx.itemsForMention(ctx, s) : this.mcp.readResource(ctx, s)),
          annotate: (path, content, s) => this.annotationsText(path, content, s),
        });
      },
      messageContext: (message, signal) => this.openctx.itemsForMessage(message, signal),
      instructions: () => this.mcp.instructions(),
      toolsReady: (chatId, signal) => waitForMcpStarts(this.mcp, this.opts.events, chatId, signal, this.config.mcpStartWaitSeconds),
      lifecycle: {
        created: (id) => this.gateway?.chatStarted(id),
        idle: (id) => this.gateway?.chatIdle(id),
        ended: (id) => {
          void this.gateway?.chatEnded(id);
          for (const c of this.clients.values()) void c.then((client) => client.release?.(id)).catch(() => {});
        },
      },
      updatedContexts: (refs) => this.mcp.updatedSince(refs.flatMap((c) => (c.type === 'mcpResource' ? [c] : []))),
    };
  }

  /** The status each language server was last announced with. */
  private readonly lspReported = new Map<string, string>();

  /**
   * Native file tools talk to the language servers: a read opens the file in its server, and a
   * write or edit waits (bounded) for fresh diagnostics and hands new errors to the model.
   */
  private withLanguageServers(tool: Tool): Tool {
    if (!['read_file', 'write_file', 'edit_file'].includes(tool.name)) return tool;
    return {
      ...tool,
      call: async (args, ctx) => {
        const path = typeof args.path === 'string' ? safely(() => resolvePath(args.path as string, ctx.roots)) : undefined;
        // Touched: its language server starts now, while the tool runs, not when diagnostics are wanted.
        if (path) this.lsp.touch(path);
        const result = await tool.call(args, ctx);
        if (result.error || !path) return result;
        if (tool.name === 'read_file') {
          this.lsp.fileRead(path);
          return result;
        }
        const { note } = await this.lsp.afterFileChange(path, ctx.signal).catch((e: unknown) => ({ note: `Diagnostics: not available — ${(e as Error).message}` }));
        if (!note) return result;
        return { ...result, outputs: [...result.outputs, { type: 'text', text: note }] };
      },
    };
  }

  /** Language servers start lazily: tell the editor when one changed status. */
  private reportLspChanges(): void {
    for (const s of this.lsp.servers()) {
      if (this.lspReported.get(s.name) === s.status) continue;
      this.lspReported.set(s.name, s.status);
      this.opts.onToolServer?.({
        type: 'lsp',
        name: s.name,
        command: s.command,
        args: s.args,
        status: s.status,
        tools: [],
        ...(s.lastError ? { error: s.lastError } : {}),
      });
    }
  }

  /** The editor's `editor/getDiagnostics` (when it offers it) merged with the language servers' own. */
  private mergedEditor(): EditorBridge {
    const editor = this.opts.editor;
    return {
      getDiagnostics: async (uri?: string) => {
        const own: EditorDiagnostic[] = this.lsp.diagnostics(uri ? fileURLToPath(uri) : undefined);
        const theirs = editor.getDiagnostics ? await editor.getDiagnostics(uri).catch(() => []) : [];
        const key = (d: EditorDiagnostic) => `${d.uri}|${d.range.start.line}|${d.range.start.character}|${d.message}`;
        const seen = new Set(theirs.map(key));
        return [...theirs, ...own.filter((d) => !seen.has(key(d)))];
      },
    };
  }

  /** Starts the gateway (on a free port when the configured one is taken); a failure is reported and the rest of patchbay goes on. */
  async startGateway(): Promise<void> {
    if (!this.gateway) return;
    try {
      const { url } = await this.gateway.start();
      this.gatewayUrl = url;
      process.env.PATCHBAY_GATEWAY_URL = url;
      // Beside the token file, so providers started elsewhere (and `patchbay doctor`) find it.
      writeFileSync(join(dirname(this.gateway.tokenFile), 'address'), `${url}\n`, { mode: 0o600 });
      log.info(`provider gateway listening on ${url}`);
    } catch (e) {
      log.error(`provider gateway could not start: ${(e as Error).message}`);
      throw e;
    }
  }

  private runningGatewayAddress(): string | undefined {
    try {
      return readFileSync(join(dirname(this.gateway!.tokenFile), 'address'), 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  }

  /** What the gateway needs from this session: chats as sessions, per-chat tools, pushes. */
  private gatewayChats(): GatewayChats {
    return {
      active: () => this.chats.active().map((c) => ({ id: c.id, label: c.title ?? 'New chat', cwd: this.roots[0] })),
      setTools: (chatId, provider, tools) => {
        const refused = this.tools.check(`provider:${provider}`, tools, chatId);
        if (refused.length) return refused.map((r) => r.reason).join('; ');
        this.tools.setForChat(chatId, `provider:${provider}`, tools);
        return undefined;
      },
      push: (e) => {
        this.store.queueEvent({ stream: e.stream, source: e.provider, chatId: e.chatId, level: e.level, text: e.text, metadata: e.metadata });
        if (e.level === 'keep') return;
        // Every event stays in its stream; what reaches the chat and the model has a budget per
        // provider and chat, so a flooding provider cannot bury the chat or the model's context.
        const budgets = this.pushBudgets(e.chatId, e.provider);
        budgets.surface.log('info', () => `[${e.stream}] ${e.provider}: ${e.text}`);
        if (e.level === 'inject') budgets.inject.log('info', () => `Event from tool provider "${e.provider}" (stream "${e.stream}"):\n${e.text}`);
      },
      providersChanged: (chatId, providers) => {
        const before = this.providerNames.get(chatId) ?? new Set<string>();
        const now = new Set(providers.map((p) => p.name));
        this.providerNames.set(chatId, now);
        for (const gone of before) {
          if (now.has(gone)) continue;
          const key = `${chatId}\u0000${gone}`;
          this.budgets.get(key)?.surface.flush();
          this.budgets.get(key)?.inject.flush();
          this.budgets.delete(key);
        }
        for (const p of providers) {
          this.opts.onToolServer?.({
            type: 'provider',
            name: p.name,
            status: 'running',
            command: this.gatewayUrl ?? 'gateway',
            args: [p.providerId, chatId],
            tools: ToolRegistry.toSpecs(p.tools),
          });
        }
        for (const name of before) {
          if (!now.has(name)) this.opts.onToolServer?.({ type: 'provider', name, status: 'stopped', command: this.gatewayUrl ?? 'gateway', args: [chatId], tools: [] });
        }
      },
    };
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

  /**
   * `chat/queryContext`; contexts the prompt already has are left out. OpenCtx mentions are
   * collected per provider as each answers, until all have or the deadline passes: a slow
   * provider costs at most the deadline and never holds back what the fast ones returned.
   */
  async queryContext(query: string, already: unknown[] = []) {
    const exclude = already.flatMap((c) => {
      const r = chatContextSchema.safeParse(c);
      return r.success ? [r.data] : [];
    });
    const mentions = await this.openCtxMentions(query);
    // Offered in the mcpResource shape so today's ECA plugins show them.
    const offered = mentions.map((m) => ({ type: 'mcpResource' as const, uri: m.uri, name: m.name, description: m.description ?? '', mimeType: m.mimeType, server: m.server }));
    return queryContexts(this.indexes, query, { roots: this.roots, exclude, mcpResources: this.mcp.resources(), mentions: offered });
  }

  private async openCtxMentions(query: string): Promise<ClientMention[]> {
    if (!Object.keys(this.config.openctx.providers).length) return [];
    const arrived: ClientMention[][] = [];
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((r) => (timer = setTimeout(r, this.config.openctx.timeoutMs)));
    const all = this.openctx.mentionsStreaming(query, (b) => (arrived[b.index] = b.mentions), abort.signal).then(() => undefined);
    await Promise.race([all, deadline]);
    clearTimeout(timer);
    abort.abort();
    return arrived.flat().filter(Boolean);
  }

  /** OpenCtx annotations of a file, as text beside its content ('' when none). */
  private async annotationsText(path: string, content: string, signal: AbortSignal): Promise<string> {
    if (!Object.keys(this.config.openctx.providers).length) return '';
    const list = await this.openctx.annotations(pathToFileURL(path).href, content, signal);
    return list.length ? renderAnnotations(list) : '';
  }

  /** `openctx_annotations`: what OpenCtx providers say about a file (issues, owners, docs…). */
  private annotationsTool(): Tool {
    return defineNativeTool({
      name: 'openctx_annotations',
      description: 'Annotations OpenCtx providers have for a file (linked issues, docs, owners, warnings…), with the line ranges they refer to.',
      schema: z.object({ path: z.string().min(1).describe('Path of the file (absolute or relative to the workspace).') }),
      readOnly: true,
      mutates: false,
      pathArgs: ['path'],
      summary: (a) => (a.path ? `Annotations of "${a.path}"` : 'Annotations'),
      run: async (args, ctx) => {
        const path = resolvePath(args.path, ctx.roots);
        const content = await readContainedText(path, { roots: ctx.roots, confined: ctx.confined });
        const text = await this.annotationsText(path, content, ctx.signal);
        return textResult(text || `No annotations for ${path}.`);
      },
    });
  }

  /** The surface and inject budgets of one provider in one chat (see `push` in gatewayChats). */
  private pushBudgets(chatId: string, provider: string): { surface: LogBudget; inject: LogBudget } {
    const key = `${chatId}\u0000${provider}`;
    let b = this.budgets.get(key);
    if (!b) {
      const notice = (line: string) => this.chats.surface(chatId, line);
      const source = `provider "${provider}"`;
      b = {
        surface: new LogBudget(source, (_level, line) => notice(line), { perSecond: 10, burst: 50, maxLineChars: 4000, unit: 'events', note: 'all are kept in their streams' }),
        inject: new LogBudget(source, (level, line) => (level === 'warn' ? notice(line) : this.chats.inject(chatId, line, this.config.gateway.injectStartsTurn)), {
          perSecond: 20,
          burst: 200,
          maxLineChars: 16_000,
          unit: 'events for the model',
          note: 'the model can read them with patchbay__read_event_stream',
        }),
      };
      this.budgets.set(key, b);
    }
    return b;
  }

  /** Serves patchbay's own OpenCtx providers (and the user's modules) on loopback, token-protected. */
  async startOpenCtxHost(): Promise<void> {
    const cfg = this.config.openctx.host;
    if (!cfg.enabled) return;
    const providers: Record<string, OpenCtxProviderImpl> = {
      files: workspaceFiles({
        query: (q) => queryContexts(this.indexes, q, { roots: this.roots }).flatMap((c) => (c.type === 'file' ? [{ type: 'file', path: c.path }] : [])),
        roots: this.roots,
      }),
      diagnostics: diagnosticsProvider({
        get: async (uri) => ((await this.opts.editor.getDiagnostics?.(uri)) ?? []).map((d) => ({ ...d, source: d.source ?? undefined })),
      }),
      'mcp-resources': mcpResources({ list: () => this.mcp.resources(), read: (server, uri) => this.mcp.readResource({ server, uri }, AbortSignal.timeout(30_000)) }),
      'event-streams': eventStreams({ streams: () => this.store.streams(), query: (f) => this.store.queryEvents(f) }),
    };
    for (const [name, path] of Object.entries(cfg.providers)) providers[name] = moduleProvider(resolve(this.moduleBase(), path));
    const token = `octx-${randomBytes(16).toString('hex')}`;
    const host = new OpenCtxHost({ host: '127.0.0.1', port: cfg.port, token, providers, log: logger('openctx-host') });
    const { url } = await host.start();
    this.openctxHost = host;
    const dir = join(this.home, 'openctx');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'token'), `${token}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'address'), `${url}\n`, { mode: 0o600 });
    log.info(`OpenCtx host serving ${Object.keys(providers).join(', ')} on ${url}`);
  }

  /**
   * Where the user's OpenCtx module providers resolve from: the workspace when trusted, else the
   * folder of the user's own config file (an untrusted clone must not shadow their modules).
   */
  private moduleBase(): string {
    const root = this.roots[0];
    if (root && isTrustedFolder(this.home, root)) return root;
    return dirname(this.opts.configFile ? resolve(this.opts.configFile) : userConfigPath(this.opts.env));
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
      reload: () => loadSessionConfig(this.opts.params, this.opts.env, this.opts.configFile),
      apply: (loaded) => {
        this.config = loaded.config;
        this.configErrors = loaded.errors;
        this.configSources = loaded.sources;
        this.workspaces = loaded.workspaces;
      },
      addMcpServers: (servers) => this.mcp.add(servers),
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
      mcpServers: this.mcp.servers(),
      // `patchbay doctor` does not listen itself: it shows the address a running server wrote.
      openctx: { providers: await this.openctx.health(), host: this.openctxHost?.url },
      languageServers: this.lsp.servers(),
      gateway: this.gateway ? { url: this.gatewayUrl ?? this.runningGatewayAddress(), providers: this.gateway.providers() } : undefined,
    });
  }

  private disposed: Promise<void> | undefined;

  /** Stops every turn, then closes indexes and the store. Safe to call more than once. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      try {
        this.openctx.dispose();
      } catch (e) {
        log.error(`stopping OpenCtx providers: ${errorMessage(e)}`);
      }
      // Turns wind down (up to 2 s) while the peers stop: a peer's clean stop never waits behind
      // them, and a turn waiting on a tool call ends as soon as its peer is gone.
      await Promise.all([
        this.chats.dispose().catch((e: unknown) => log.error(`stopping chats: ${errorMessage(e)}`)),
        this.lsp.dispose().catch((e: unknown) => log.error(`stopping language servers: ${errorMessage(e)}`)),
        Promise.resolve(this.openctxHost?.stop()).catch((e: unknown) => log.error(`stopping the OpenCtx host: ${errorMessage(e)}`)),
        this.mcp.dispose().catch((e: unknown) => log.error(`stopping MCP servers: ${errorMessage(e)}`)),
        ...[...this.clients.values()].map((c) => c.then((client) => client.dispose?.()).catch(() => {})),
        this.gateway?.stop().catch((e: unknown) => log.error(`stopping the gateway: ${errorMessage(e)}`)),
      ]);
      this.close();
    })();
    return this.disposed;
  }

  /**
   * Shutdown ran past its deadline (the editor is gone and the process is about to end): kill
   * every process patchbay started and close the store now, so nothing outlives us or is left open.
   */
  forceClose(): void {
    killDescendantsNow();
    this.close();
  }

  /** The store, the indexes, and the files that tell others where our listeners are. Idempotent. */
  private close(): void {
    for (const ix of this.indexes) ix.dispose();
    try {
      this.store.close();
    } catch {
      /* already closed */
    }
    try {
      // Only our own files: a second server sharing this home may have written its own since.
      const dir = join(this.home, 'openctx');
      if (this.openctxHost && safely(() => readFileSync(join(dir, 'address'), 'utf8').trim()) === this.openctxHost.url) {
        rmSync(join(dir, 'token'), { force: true });
        rmSync(join(dir, 'address'), { force: true });
      }
      if (this.gateway && this.gatewayUrl && this.runningGatewayAddress() === this.gatewayUrl) rmSync(join(dirname(this.gateway.tokenFile), 'address'), { force: true });
    } catch (e) {
      log.warn(`removing the listener files: ${errorMessage(e)}`);
    }
  }
}

function safely<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

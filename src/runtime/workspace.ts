/**
 * The workspace runtime: everything a front end (the ECA server, `patchbay doctor`, later ACP or
 * an MCP-server façade) works with: config, store, tool and command registries, the LLM layer,
 * the chats, and the peers (src/peers/index.ts). Built from plain options; nothing here knows a
 * wire protocol. Disposing it stops every turn and peer and closes the store.
 */
import { InlineCompleter, Rewriter } from '../core/assist/index.js';
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/schema.js';
import { formatConfigError, heldBack, userConfigPath, type ConfigError, type WorkspaceConfigTrust } from '../config/load.js';
import { heldBackMessage } from '../config/held-back.js';
import { heldModelMessages } from '../config/held-model.js';
import { fileTrust, fileTrustWhy, isTrustedFolder } from '../config/trust.js';
import { trustHeldBack } from './trust.js';
import { coveredFilesNow } from '../config/trusted-files.js';
import { configFiles, loadWorkspaceConfig, type WorkspaceConfig } from './workspace-config.js';
import { planRootsChange, type RootsPlan, type RootsRequest } from './roots.js';
import { RootsNotifier } from './roots-notify.js';
import { underDeadline, within } from '../util/deadline.js';
import { ChatService } from '../core/chat/chats.js';
import { CommandRegistry } from '../core/chat/commands.js';
import type { ChatDeps } from '../core/deps.js';
import type { ChatEvents } from '../core/events.js';
import { nativeCommands } from '../core/chat/native-commands.js';
import { ToolRegistry } from '../core/tool-calls/tool-registry.js';
import { nativeTools, storedTaskLists } from '../core/tools/native/index.js';
import { JobRegistry, jobEndedText } from '../core/jobs/index.js';
import { FileIndex, queryContexts, renderContexts, buildRepoMap } from '../core/context/index.js';
import type { EditorBridge, EditorDiagnostic } from '../shapes/tool.js';
import type { AskUser } from '../shapes/ask.js';
import type { LlmClient, ModelEntry } from '../shapes/llm.js';
import type { Context, OfferedContext, ResourceContext } from '../shapes/context.js';
import type { Peer, PeerHost, RootsChange, ToolServerStatus } from '../shapes/peer.js';
import { PEERS } from '../peers/index.js';
import { BUILTIN_PROVIDER_IDS, keyOverridingLogin, computeCost, createClient, findKey, pickDefaultModel, resolveModels, streamWithRetry } from '../peers/llm/index.js';
import { ProviderLogins } from './provider-logins.js';
import { PromptSources } from '../core/turn/prompt-sections.js';
import { RuntimeBoard } from '../core/agent-files/runtime-board.js';
import { ProjectInstructions } from './instructions.js';
import { CustomCommands } from './custom-commands.js';
import { SkillCatalog } from './skills.js';
import { workspaceHooks } from './hooks.js';
import { StatusHooks, type Hooks } from '../core/hooks/index.js';
import { AgentDefs } from './agent-defs.js';
import { spawnAgentTool } from '../core/tools/spawn-agent.js';
import { providerAuth, providerAuthLine, type ProviderAuth } from './provider-status.js';
import { openSecretStore } from '../util/secrets.js';
import type { SqliteStore } from '../store/sqlite.js';
import { errorMessage, logger } from '../util/log.js';
import { HostCore } from './host-core.js';
import { startWorkspace, type ConfigProblems, type StartPolicy } from './start.js';
import { resolvePath } from '../util/paths.js';
import { doctorReport } from './doctor.js';
import { LiveConfig, type ConfigReload } from './config-reload.js';
import { McpManager } from './mcp-manage.js';
import { ChatServers } from './chat-servers.js';
import type { ChatMcpServer } from '../shapes/chat-servers.js';
import { isRecord, safely } from '../util/guards.js';
import { WorkspaceMemory } from './memory.js';
import { WorkspaceSandbox } from './sandbox.js';
import { spawnSandbox, type SpawnSandbox } from './spawn-sandbox.js';
import type { WorkspaceOrigins } from '../config/origin.js';
import { xcacheFor } from '../store/xcache.js';
import { FrontEndPort, hasLegacySinks, legacyFrontEnd, type LegacySinks, type WorkspaceNotice } from './front-end-port.js';
import type { Attachment } from '../core/chat/port.js';

const log = logger('workspace');
/** A hook script bigger than this is not read to check its trust (nor recorded: config/trusted-files.ts). */
const MAX_SCRIPT_BYTES = 4 * 1024 * 1024;

/** What `changeRoots` did: the plan, and the held-back messages of the added folders' config files. */
export interface RootsChangeResult extends RootsPlan {
  heldBack: string[];
}

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
  /** The editor reads and writes files for the file tools (its unsaved buffers), when it can (ACP `fs/*`). */
  files?: Pick<EditorBridge, 'readTextFile' | 'writeTextFile'>;
  /** The editor runs `shell_command` in a terminal it shows, when it can (ACP `terminal/*`). */
  terminal?: EditorBridge['runInTerminal'];
}

/** Also the old sink and callbacks (LegacySinks), which become one front end of the port: for tests, `patchbay doctor` and the bench. */
export interface WorkspaceOptions extends LegacySinks {
  /** Absolute workspace folders; the first is the default for relative paths. */
  roots: string[];
  env: NodeJS.ProcessEnv;
  /** The process's host (./host.ts): its store, environment, reaper and shared listeners. None: a private one, disposed with the workspace. */
  host?: HostCore;
  /** A config layer the front end was given (ECA `initializationOptions`). */
  initializationOptions?: unknown;
  configFile?: string;
  logLevel?: Config['logLevel'];
  /** The config already loaded for these roots (a front end that answers its handshake first). */
  loaded?: WorkspaceConfig;
  frontEnd: FrontEnd;
  /**
   * The port front ends attach to (./front-end-port.ts): core's chat events and this workspace's
   * notices go there. None: the workspace makes its own (`workspace.port`).
   */
  port?: FrontEndPort;
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
/**
 * How long shutdown waits for a workspace folder change in progress (its config reload) before
 * stopping peers, chats and jobs. Short: the server gives all of shutdown 600 ms before killing
 * everything, and the change stops on its own (applyRoots checks `disposed` after each wait).
 */
const ROOTS_CHANGE_DISPOSE_MS = 100;
/** How long creating a workspace, or a turn, waits for the agent files to be read. */
const AGENT_FILES_WAIT_MS = 2_000;

export class Workspace {
  /** The workspace folders now; `changeRoots` replaces the list (never mutated in place). */
  private currentRoots: string[];
  readonly home: string;
  config: Config;
  configErrors: ConfigError[];
  configSources: string[];
  /** Workspace config files and their trust (src/config/trust.ts). */
  workspaces: WorkspaceConfigTrust[];
  /** The hooks and MCP servers a workspace's own config set: they run sandboxed (./spawn-sandbox.ts). */
  private fromWorkspace: WorkspaceOrigins | undefined;
  private readonly spawns: SpawnSandbox;
  models: ModelEntry[] = [];
  defaultModel: ModelEntry | undefined;
  readonly tools = new ToolRegistry();
  readonly commands = new CommandRegistry();
  /** The system prompt's sections (core/turn/prompt-sections.ts): MCP servers' instructions, and what the agent runtime adds. */
  readonly prompt = new PromptSources();
  /** Bad rule, skill, command, agent and hook files, and each feature's doctor lines. */
  readonly board = new RuntimeBoard();
  /** AGENTS.md and rules (./instructions.ts): prompt sections, `fetch_rule`, `/rules`, enforce. */
  readonly instructions: ProjectInstructions;
  /** ECA's hooks (core/hooks/, ./hooks.ts). */
  readonly hooks: Hooks;
  private readonly statusHooks: StatusHooks;
  /** The subagents there are (./agent-defs.ts). */
  readonly agentDefs: AgentDefs;
  readonly store: SqliteStore;
  readonly chats: ChatService;
  /** The @-mention file index of each root, by root. */
  private readonly indexByRoot = new Map<string, FileIndex>();
  /** Inline completion and rewrite (core/assist/): one-shot LLM calls outside any chat. */
  readonly completer: InlineCompleter;
  readonly rewriter: Rewriter;
  /** Background jobs (`shell_command` `background`), stopped with their process trees on dispose. */
  readonly jobs: JobRegistry;
  /** The OS sandbox commands run in (./sandbox.ts). */
  readonly sandbox: WorkspaceSandbox;
  /** The peers, by name, in the order of src/peers/index.ts. */
  private readonly peers = new Map<string, Peer>();
  /** What tools see of the editor: its diagnostics merged with the peers' (language servers). */
  private readonly editor: EditorBridge;
  private readonly clients = new Map<string, Promise<LlmClient>>();
  /** Resolves once models are known (Ollama discovery may take a moment). */
  modelsReady: Promise<void>;
  /** `mcp/addServer` and the rest: edits the entry's config file, then reloadConfig() (./mcp-manage.ts). */
  readonly mcpServers: McpManager;
  /** MCP servers a front end brings for one chat (runtime/chat-servers.ts). */
  readonly chatServers: ChatServers;
  /** Logins to providers from the editor (./provider-logins.ts); their keys feed model resolution. */
  readonly logins: ProviderLogins;
  /** Durable memory (./memory.ts): off until `memory.enabled`. */
  readonly memory: WorkspaceMemory;
  /** Where front ends attach (./front-end-port.ts). */
  readonly port: FrontEndPort;
  /** The sink core's events go to: the port's, for this workspace's chats. */
  private readonly events: ChatEvents;
  /** `events` and the callbacks of the options, attached as one front end. */
  private readonly legacy: Attachment | undefined;

  /** Builds a workspace: loads the peers' code, then starts nothing but what is lazy. */
  static async create(opts: WorkspaceOptions): Promise<Workspace> {
    const makers = await Promise.all(PEERS.map(async (p) => ({ name: p.name, make: (await p.load()) as (host: PeerHost<unknown>) => Peer })));
    // A workspace without a host (tests, `patchbay doctor`) has its own, disposed with it.
    const own = opts.host ? undefined : HostCore.openCore({ env: opts.env, configFile: opts.configFile, ...(opts.logLevel ? { logLevel: opts.logLevel } : {}) });
    const host = opts.host ?? own!;
    let ws: Workspace;
    try {
      ws = new Workspace({ ...opts, host, env: host.env }, makers, own);
    } catch (e) {
      await own?.dispose();
      throw e;
    }
    // The first prompt sees the agent files (and is told of bad ones); bounded, as a slow disk must not hold the handshake.
    await ws.agentDefs.settled(AGENT_FILES_WAIT_MS);
    return ws;
  }

  /** The process's host; `ownHost`: the private one made for this workspace (disposed with it). */
  readonly host: HostCore;

  private constructor(
    private readonly opts: WorkspaceOptions,
    makers: Array<{ name: string; make: (host: PeerHost<unknown>) => Peer }>,
    private readonly ownHost: HostCore | undefined,
  ) {
    this.host = opts.host!;
    const loaded = opts.loaded ?? this.loadConfig(opts.roots);
    this.currentRoots = loaded.roots;
    this.config = loaded.config;
    this.configErrors = loaded.errors;
    this.configSources = loaded.sources;
    this.workspaces = loaded.workspaces;
    this.fromWorkspace = loaded.fromWorkspace;
    // The store, logging, crash recovery and the job reaper are the host's (once per process).
    this.host.configLogLevel(this.config.logLevel);
    this.home = this.host.home;
    for (const e of loaded.errors) log.warn(formatConfigError(e));
    for (const m of this.heldBackMessages()) log.warn(m);
    this.store = this.host.store;
    // The host's port (one per process, logging into its store) unless the options bring their own.
    this.port = opts.port ?? this.host.port;
    this.events = this.port.chatEvents({ approve: (c, id, s) => this.chats.approve(c, id, s), reject: (c, id, s) => this.chats.reject(c, id, s) }, this);
    this.legacy = hasLegacySinks(opts) ? this.port.attach(legacyFrontEnd(opts, () => this)) : undefined;
    this.hooks = workspaceHooks({
      config: () => this.config,
      roots: () => this.roots,
      untrustedFile: (root, path) => this.untrustedFile(root, path),
      dbPath: this.store.path,
      env: opts.env,
      board: this.board,
      prompt: this.prompt,
      sandbox: (name, roots) => this.spawns.hook(name, roots),
    });
    this.statusHooks = new StatusHooks(this.hooks);
    for (const r of this.roots) this.indexByRoot.set(resolve(r), new FileIndex(r));
    this.editor = this.mergedEditor();
    this.sandbox = new WorkspaceSandbox({ env: opts.env, homeDir: opts.env.HOME || homedir(), config: () => this.config, ...(opts.configFile ? { configFile: opts.configFile } : {}) });
    this.spawns = spawnSandbox({ sandbox: this.sandbox, origins: () => this.fromWorkspace, roots: () => this.roots });
    this.jobs = new JobRegistry({
      onChange: () => this.tell({ type: 'jobsChanged', workspace: this }),
      // The model learns of it at its chat's next model step, or its next prompt when idle (ECA chat.clj
      // `consume-pending-job-notifications!`); an idle chat gets no turn of its own for it.
      onEnded: (job, tail) => this.chats.notifyJob(job.chatId, jobEndedText(job, tail)),
      // Jobs run detached: if this server is SIGKILLed, the host's reaper still stops them.
      reaper: this.host.reaperFor(),
      env: opts.env,
    });
    const native = nativeTools({
      shellTimeoutSeconds: this.config.toolCall.shellCommand?.timeoutSeconds,
      maxOutputChars: this.config.toolCall.shellCommand?.maxOutputChars,
      events: this.store,
      ask: this.opts.frontEnd.ask,
      // The chat's messages in memory: no store read per task call.
      taskLists: storedTaskLists((chatId) => this.chats.messages(chatId)),
      jobs: this.jobs,
      // The host's environment (with the gateway's address and token), not the process's.
      env: opts.env,
    });
    // Native tools come first in every list the model sees; peers may wrap them (below).
    this.tools.set('native', native);
    // MCP servers' `instructions` (and any peer's): stable while the servers are.
    this.prompt.set('peers', () => [...this.peers].flatMap(([name, p]) => (p.instructions?.() ?? []).map((text, i) => ({ id: `${name}:${i}`, text, stable: true, order: 80 }))));
    this.commands.set('native', nativeCommands({ doctor: () => this.doctor(), repoMap: (signal) => this.repoMap(signal), trust: () => this.trust() }));
    this.instructions = new ProjectInstructions({
      roots: () => this.roots,
      config: () => this.config,
      env: opts.env,
      // The folder, not its config's content: whether links in its files may be followed out of it.
      trusted: (root) => isTrustedFolder(this.home, root),
      board: this.board,
      stored: (chatId) => this.chats.messages(chatId),
      // ECA fetch_rule.clj `:enabled-fn`: offered only while there are path-scoped rules.
      pathScopedChanged: (any) => void this.tools.set('rules', any ? [this.instructions.tool] : []),
    });
    this.prompt.set('instructions', (scope) => this.instructions.sections(scope));
    this.memory = new WorkspaceMemory({
      config: () => this.config,
      roots: () => this.roots,
      env: opts.env,
      prompt: this.prompt,
      commands: this.commands,
      onIndex: (report) => this.tell({ type: 'memoryIndex', workspace: this, report }),
      parentOf: (id) => this.chats.parentOf(id),
    });
    this.memory.install();
    // Read once off the start-up path, so doctor and the first prompt find the files (and their problems) known.
    setImmediate(() => safely(() => this.instructions.current()));
    this.commands.set('rules', [this.instructions.command()]);
    // Custom commands and skills from their files, read at each use (mtime-cached): config reloads,
    // folder changes and edits apply at the next prompt. A command file wins a name a skill also uses (ECA).
    const agentFiles = {
      roots: () => this.roots,
      config: () => this.config,
      fileTrust: (root: string, path: string, bytes: Buffer) => fileTrust(this.home, root, path, bytes),
      pureConfig: () => isRecord(opts.initializationOptions) && opts.initializationOptions.pureConfig === true,
      env: opts.env,
      homeDir: opts.env.HOME || homedir(),
      board: this.board,
      tools: this.tools,
      commands: this.commands,
      prompt: this.prompt,
    };
    new CustomCommands(agentFiles).install();
    new SkillCatalog(agentFiles).install();
    this.chats = new ChatService(this.deps(), this.commands);
    // Subagents (core/subagents/): their definitions, and the tool that spawns them as child chats.
    this.agentDefs = new AgentDefs({ roots: () => this.roots, config: () => this.config, env: opts.env, fileTrust: (root, path, bytes) => fileTrust(this.home, root, path, bytes), board: this.board });
    void this.agentDefs.refresh();
    this.tools.set('subagents', [spawnAgentTool({ defs: () => this.agentDefs.list(), chats: this.chats, maxParallel: () => this.config.subagents.maxParallel })]);
    this.completer = new InlineCompleter(this.deps());
    this.rewriter = new Rewriter(this.deps());
    for (const { name, make } of makers) this.peers.set(name, make(this.peerHost(name)));
    this.chatServers = new ChatServers({
      setForChat: (chatId, source, tools) => this.tools.setForChat(chatId, source, tools),
      env: opts.env,
      roots: () => this.roots,
      timeoutSeconds: () => this.config.mcpTimeoutSeconds,
      startWaitSeconds: () => this.config.mcpStartWaitSeconds,
      logLevel: () => this.config.logLevel,
      reservedNames: () => this.all().flatMap((p) => p.serverNames?.() ?? []),
      ...(opts.frontEnd.ask ? { ask: opts.frontEnd.ask } : {}),
      status: (status) => this.tell({ type: 'toolServer', workspace: this, status }),
      removed: (name) => this.tell({ type: 'toolServerRemoved', workspace: this, name }),
    });
    this.tools.set(
      'native',
      native.map((t) => this.all().reduce((tool, p) => p.wrapTool?.(tool) ?? tool, this.memory.wrapTool(this.instructions.wrapTool(t)))),
    );
    this.live = new LiveConfig(
      {
        files: () => this.configFiles(),
        current: () => ({ config: this.config, errors: this.configErrors, held: this.heldBackMessages() }),
        load: () => this.loadConfig(),
        apply: (loaded) => this.applyConfig(loaded),
        reconfigurePeers: async () => {
          // One peer that throws must not leave the others unreconciled (the fingerprint has moved on).
          for (const p of this.all()) {
            try {
              p.reconfigure?.();
            } catch (e) {
              log.warn(`reconfiguring a peer: ${errorMessage(e)}`);
            }
          }
          await Promise.all(this.all().map((p) => p.reconfigured?.().catch((e: unknown) => log.warn(`reconfiguring: ${errorMessage(e)}`))));
        },
        modelsChanged: (providers) => this.providersChanged(providers),
        report: (message) => {
          log.warn(message);
          this.events.showMessage('warning', message);
        },
      },
      // The files as loaded: the baseline a reload compares with (what changed since is applied).
      loaded.fingerprint,
    );
    this.mcpServers = new McpManager({
      home: this.home,
      roots: () => this.roots,
      servers: () => (this.config as { mcpServers?: Record<string, unknown> }).mcpServers ?? {},
      userConfigFile: () => this.userConfigFile(),
      pureConfig: () => isRecord(this.opts.initializationOptions) && this.opts.initializationOptions.pureConfig === true,
      reload: () => this.reloadConfig(),
      status: (name) => this.all().reduce<ToolServerStatus | undefined>((found, p) => found ?? p.serverStatus?.(name), undefined),
      restart: async (name) => {
        await this.toggleServer(name, false);
        await this.toggleServer(name, true);
      },
      forget: async (name) => void (await Promise.all(this.all().map((p) => p.forgetServer?.(name)))),
    });
    this.logins = new ProviderLogins({
      store: openSecretStore({ env: opts.env, home: this.home }),
      indexFile: join(this.home, 'logins.json'),
      providers: () => this.config.providers,
      known: () => this.providerIds(),
      overriddenBy: (id) => {
        const winner = keyOverridingLogin(id, this.config.providers[id], this.opts.env);
        return winner?.envVar ? `the ${winner.envVar} environment variable` : winner ? 'a "key" in the config' : undefined;
      },
      changed: (id, models) => this.providerChanged(id, models),
      notice: (level, message) => this.tell({ type: 'notice', workspace: this, level, message }),
    });
    // Off the front end's handshake: discovery loads the HTTP stack and may probe Ollama.
    this.modelsReady = new Promise<void>((r) => setImmediate(r)).then(() =>
      this.task('models', 'Syncing models', async () => {
        await this.logins.load();
        await this.refreshModels();
      }),
    );
  }

  /** The workspace folders (absolute; the first is the default for relative paths). They change with `changeRoots`. */
  get roots(): string[] {
    return this.currentRoots;
  }

  /** The file index of each root, in the roots' order. */
  get indexes(): FileIndex[] {
    return this.roots.flatMap((r) => this.indexByRoot.get(resolve(r)) ?? []);
  }

  /** The config for `roots` (the folders of now, or at construction those of the options). */
  private loadConfig(roots: string[] = this.roots): WorkspaceConfig {
    const { env, initializationOptions, configFile } = this.opts;
    return loadWorkspaceConfig({ roots, env, initializationOptions, configFile });
  }

  /** The user config file: `--config-file` when given. */
  private userConfigFile(): string {
    return this.opts.configFile ? resolve(this.opts.configFile) : userConfigPath(this.opts.env);
  }

  /** Every config file this workspace reads (what the watcher watches and a reload compares). */
  private configFiles(): string[] {
    return configFiles({ roots: this.roots, env: this.opts.env, configFile: this.opts.configFile });
  }

  /** The config files watched and reloaded (./config-reload.ts). */
  private readonly live: LiveConfig;

  /**
   * Reads the config files again and takes up what changed, live: MCP servers whose entry changed
   * restart, removed ones stop (`onToolServerRemoved`), new ones start; models are listed again
   * when providers changed (`onModelsChanged`); new problems are reported (`events.showMessage`).
   * A file that is not JSON keeps the last good config (and is reported). Calls are serialized,
   * and a call that finds every file as it was does nothing, so calling it after an own write and
   * again from the watcher restarts nothing twice. Call it after changing `roots` too.
   */
  reloadConfig(): Promise<ConfigReload> {
    return this.live.reload();
  }

  /** Watches the config files and reloads on a change (stops on dispose; never keeps the process alive). */
  watchConfig(): void {
    this.live.watch();
  }

  private applyConfig(loaded: WorkspaceConfig): void {
    this.config = loaded.config;
    this.configErrors = loaded.errors;
    this.configSources = loaded.sources;
    this.workspaces = loaded.workspaces;
    this.fromWorkspace = loaded.fromWorkspace;
    this.hooks.publish();
    // The `agent` key, and the folders' agent files when folders changed.
    void this.agentDefs.refresh();
  }

  /**
   * Workspace folders added and removed at run time. Entries that make no sense (a folder not
   * open, one already open, one that does not exist, the last one) are skipped with a warning;
   * the rest follows: containment and contexts at once, file indexes, the folders' own config
   * files (trust rules as at start), then the peers (language servers, OpenCtx, MCP roots).
   */
  changeRoots(req: RootsRequest): Promise<RootsChangeResult> {
    // One change at a time, in arrival order: each is planned against the folders the last one left.
    const next = this.rootsChanging.then(() => this.applyRoots(req));
    this.rootsChanging = next.catch(() => undefined);
    return next;
  }

  private rootsChanging: Promise<unknown> = Promise.resolve();
  private readonly rootsNotifier = new RootsNotifier({ warn: (m) => log.warn(m), stopped: () => this.disposed !== undefined });

  private async applyRoots(req: RootsRequest): Promise<RootsChangeResult> {
    if (this.disposed) return { roots: this.roots, added: [], removed: [], warnings: [], heldBack: [] };
    const plan = planRootsChange(this.roots, req);
    for (const w of plan.warnings) log.warn(w);
    if (!plan.added.length && !plan.removed.length) return { ...plan, heldBack: [] };
    this.currentRoots = plan.roots;
    for (const r of plan.removed) {
      this.indexByRoot.get(r)?.dispose();
      this.indexByRoot.delete(r);
    }
    for (const r of plan.added) {
      const ix = new FileIndex(r);
      this.indexByRoot.set(r, ix);
      void ix.warm().catch((e: unknown) => log.warn(`indexing ${r}: ${errorMessage(e)}`));
    }
    // The folders' config first: peers then decide with it (which language servers an untrusted folder allows).
    await this.reloadConfig();
    if (this.disposed) return { ...plan, heldBack: [] };
    // Peers follow in the background, each bounded: a peer that hangs holds back no later change.
    this.rootsNotifier.tell(
      [
        ...[...this.peers].map(([name, p]) => ({ name, rootsChanged: p.rootsChanged && ((c: RootsChange) => p.rootsChanged!(c)) })),
        { name: 'chat MCP servers', rootsChanged: () => this.chatServers.setRoots(this.roots) },
      ],
      { added: plan.added, removed: plan.removed },
    );
    const held = heldBack({ workspaces: this.workspaces.filter((w) => plan.added.includes(resolve(w.root))) }).map(heldBackMessage);
    // Logged once the change is applied (peers follow on their own): tests wait for this line.
    log.info(`workspace folders: ${this.roots.join(', ')}${plan.added.length ? ` (added ${plan.added.join(', ')})` : ''}${plan.removed.length ? ` (removed ${plan.removed.join(', ')})` : ''}`);
    return { ...plan, heldBack: held };
  }

  /** Clients were built with the old URL and key: the next turn builds new ones; models are listed again. */
  private async providersChanged(providers: string[]): Promise<void> {
    for (const id of [...this.clients.keys()]) if (providers.some((p) => id.startsWith(`${p}/`))) this.clients.delete(id);
    await this.refreshModels();
    this.tell({ type: 'modelsChanged', workspace: this });
  }

  /** A notice to the front ends attached to the port. */
  private tell(n: WorkspaceNotice): void {
    this.port.notify(n);
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
      roots: () => this.roots,
      home: this.home,
      env: this.opts.env,
      log: logger(name),
      logLevel: () => this.config.logLevel,
      tools: this.tools,
      commands: this.commands,
      events: this.store,
      xcache: () => xcacheFor(this.store.db),
      trustedFolder: (root) => isTrustedFolder(this.home, root),
      userConfigDir: () => dirname(this.opts.configFile ? resolve(this.opts.configFile) : userConfigPath(this.opts.env)),
      toolServer: (status) => this.tell({ type: 'toolServer', workspace: this, status }),
      toolServerRemoved: (name) => this.tell({ type: 'toolServerRemoved', workspace: this, name }),
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
      setEnv: (vars) => this.host.setEnv(vars),
      share: (key, make) => this.host.shared.use(key, make),
      sandbox: (server) => this.spawns.mcpServer(server),
    };
  }

  private deps(): ChatDeps {
    return {
      store: this.store,
      // chatStatusChanged hooks follow each chat's status from the events it emits.
      events: this.statusHooks.observe(this.events),
      frontEnd: { canAsk: this.opts.frontEnd.canAsk, canShowDiffs: this.opts.frontEnd.canShowDiffs },
      tools: this.tools,
      editor: this.editor,
      config: () => this.config,
      roots: () => this.roots,
      homeDir: this.opts.env.HOME || homedir(),
      models: () => this.models,
      defaultModel: () => this.defaultModel,
      clientFor: (entry, signal) => this.clientFor(entry, signal),
      stream: (client, req, o) => streamWithRetry(client, req, o),
      cost: (entry, usage) => computeCost(entry, usage),
      // `roots`: the chat's folders (core/chat/chat-roots.ts).
      renderContexts: (contexts, signal, roots = this.roots) => {
        // An @-mentioned file is touched: its language server starts and opens it.
        for (const c of contexts) {
          if (c.type !== 'file') continue;
          const path = safely(() => resolvePath(c.path, roots));
          // A bad path: the renderer reports it.
          if (path) for (const p of this.all()) p.fileTouched?.(path);
        }
        return renderContexts(contexts, {
          roots,
          signal,
          webMaxChars: this.config.context.webMaxChars,
          repoMapMaxEntries: this.config.context.repoMapMaxEntries,
          readResource: (ctx, s) => this.readResource(ctx, s),
          annotate: async (path, content, s) => (await Promise.all(this.all().map((p) => p.annotate?.(path, content, s) ?? ''))).filter(Boolean).join('\n'),
        });
      },
      messageContext: async (message, signal) => (await Promise.all(this.all().map((p) => p.messageContext?.(message, signal) ?? ''))).filter(Boolean).join('\n\n'),
      // Rules and instructions files are looked at again first (a few stats), so a file broken since is told.
      problems: () => (safely(() => this.instructions.current()), this.board.problems()),
      heldModels: () => this.heldModelMessages(),
      hooks: this.hooks,
      memoryIndex: (chatId) => this.memory.indexFor(chatId),
      trustedFolders: (tool) => this.memory.trustedFolders(tool),
      sandbox: (roots) => this.sandbox.plan(roots),
      promptSections: (scope) => this.prompt.sections(scope, (source, e) => log.warn(`system prompt source ${source}: ${errorMessage(e)}`)),
      toolsReady: async (chatId, signal) => {
        // A scan of the agent files still running (a file just changed): its subagents count for this turn.
        await this.agentDefs.settled(AGENT_FILES_WAIT_MS);
        const report = {
          // A subagent's chat names its parent here too, as in everything else it tells.
          progress: (text: string) => this.events.event(chatId, { type: 'progress', text }, this.chats.parentOf(chatId)),
          notice: (text: string) => this.events.event(chatId, { type: 'notice', text }, this.chats.parentOf(chatId)),
        };
        await Promise.all([...this.all().map((p) => p.toolsReady?.(signal, report)), this.chatServers.ready(chatId, signal, report)]);
      },
      lifecycle: {
        created: (id) => this.all().forEach((p) => p.chatStarted?.(id)),
        idle: (id) => this.all().forEach((p) => p.chatIdle?.(id)),
        ended: (id) => {
          this.memory.forget(id);
          this.hooks.setChatContext(id, undefined);
          this.hooks.trigger('chatEnd', { chat: { chatId: id } }).catch((e: unknown) => log.warn(`chatEnd hooks: ${errorMessage(e)}`));
          for (const p of this.all()) p.chatEnded?.(id);
          // A deleted chat's own MCP servers go with it.
          void this.chatServers.remove(id);
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
    const { files, terminal } = this.opts.frontEnd;
    return {
      ...(files?.readTextFile ? { readTextFile: files.readTextFile } : {}),
      ...(files?.writeTextFile ? { writeTextFile: files.writeTextFile } : {}),
      ...(terminal ? { runInTerminal: terminal } : {}),
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

  /** Starts `servers` for one chat only, replacing its earlier set (ACP `session/new`/`load`); a failed start is reported, not thrown. */
  addChatServers(chatId: string, servers: ChatMcpServer[]): Promise<void> {
    return this.chatServers.add(chatId, servers);
  }

  /** Stops the servers `addChatServers` started for this chat. */
  removeChatServers(chatId: string): Promise<void> {
    return this.chatServers.remove(chatId);
  }

  private started = false;
  /**
   * Starts the workspace for a front end, in the one start-up order (./start.ts): config problems,
   * MCP servers, listeners, the session, models, indexes, config watch. Once; later calls do nothing.
   */
  start(policy: StartPolicy): void {
    if (this.started || this.disposed) return;
    this.started = true;
    startWorkspace(this, policy);
  }

  /** The config's errors (not warnings) and held-back settings, as messages to the user. */
  configProblems(): ConfigProblems {
    return {
      invalid: this.configErrors.flatMap((e) => (e.severity !== 'warning' ? [`Invalid config in ${e.source}${e.key ? ` at ${e.key}` : ''}: ${e.message}`] : [])),
      held: this.heldBackMessages(),
    };
  }

  /** Starts what peers serve (listeners: the gateway, the OpenCtx host). A failure is the peer's to report. */
  private sessionStarted = false;
  /**
   * The front end's session began (ECA: `initialized`): sessionStart hooks run, and sessionEnd
   * will at dispose. `patchbay doctor` and other one-off uses of a workspace run neither.
   */
  startSession(): void {
    if (this.sessionStarted || this.disposed) return;
    this.sessionStarted = true;
    this.hooks.trigger('sessionStart').catch((e: unknown) => log.warn(`sessionStart hooks: ${errorMessage(e)}`));
  }

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
      for (const p of this.all()) p.serversTaskBegan?.();
      await after;
      if (this.disposed) return;
      const running = this.all().filter((p) => p.startServers);
      for (const p of running) p.startServers?.();
      await underDeadline(SERVERS_TASK_MAX_MS, [this.stopping.signal], (signal) => Promise.all(running.map((p) => p.settle?.(signal))));
    });
  }

  /** Runs one start-up task, telling the front end it started and, whatever happens, that it finished. */
  private async task(id: StartupTaskId, title: string, work: () => Promise<void>): Promise<void> {
    const tell = (state: StartupTask['state']) => {
      try {
        this.tell({ type: 'task', workspace: this, task: { id, title, state } });
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

  /** Counts model resolutions: one that finishes after a newer one started is dropped (its keys may be stale). */
  private modelsGeneration = 0;
  private modelsRun: Promise<void> | undefined;

  /** Re-resolves the models; when it returns, the models reflect every key known when it was called. */
  async refreshModels(): Promise<void> {
    let run = this.resolveModelsOnce(++this.modelsGeneration);
    this.modelsRun = run;
    await run;
    // A newer resolution started meanwhile (a login, then its refresh): its models are the current ones.
    while (this.modelsRun !== run) {
      run = this.modelsRun;
      await run;
    }
  }

  private async resolveModelsOnce(generation: number): Promise<void> {
    let models: ModelEntry[];
    try {
      models = await resolveModels(this.config, this.opts.env, { loginKeys: this.logins.keys() });
    } catch (e) {
      if (generation !== this.modelsGeneration) return;
      log.error(`resolving models failed: ${(e as Error).message}`);
      models = [];
    }
    if (generation !== this.modelsGeneration) return;
    this.models = models;
    this.defaultModel = pickDefaultModel(this.models, this.config.defaultModel);
    if (this.config.defaultModel && this.defaultModel?.id !== this.config.defaultModel) {
      log.warn(`defaultModel "${this.config.defaultModel}" is not among the available models`);
    }
  }

  /** Every provider patchbay can talk to: the built-in ones and the configured ones. */
  providerIds(): string[] {
    return [...new Set([...BUILTIN_PROVIDER_IDS, ...Object.keys(this.config.providers)])];
  }

  /** How a provider is authenticated now (./provider-status.ts). */
  providerAuth(id: string): ProviderAuth {
    return providerAuth(id, this.config.providers[id], this.models, this.opts.env, this.logins.credential(id));
  }

  /** The provider's key now, by the same precedence as model resolution; a login's OAuth token is a bearer token. */
  private currentAuth(provider: string): { key?: string; bearer: boolean } {
    const found = findKey(provider, this.config.providers[provider], this.opts.env, this.logins.keys());
    return { key: found?.key, bearer: found?.source === 'login' && this.logins.credential(provider)?.type === 'oauth' };
  }

  /**
   * Takes logins another process stored since start-up (`patchbay login` run by an ACP client's
   * terminal auth): the models are re-resolved for each provider whose login changed. True when
   * a model is available now that was not before, or a provider with models gained a login (a
   * configured provider lists its models before it has a key).
   */
  async refreshLogins(): Promise<boolean> {
    await this.modelsReady;
    const before = new Set(this.models.map((m) => m.id));
    const changed = await this.logins.reload();
    const loggedIn = new Set(changed.filter((id) => this.logins.credential(id)));
    return changed.length > 0 && this.models.some((m) => !before.has(m.id) || loggedIn.has(m.provider));
  }

  /** A login changed a provider's key: its clients are rebuilt and its models re-resolved. */
  private async providerChanged(id: string, models: boolean): Promise<void> {
    if (models) {
      await this.refreshModels();
      // Clients hold the key they were built with: the next turn builds them with the new one.
      for (const key of [...this.clients.keys()]) if (key.startsWith(`${id}/`)) this.clients.delete(key);
    }
    this.tell({ type: 'providerChanged', workspace: this, provider: id, models });
  }

  private async clientFor(entry: ModelEntry, signal?: AbortSignal): Promise<LlmClient> {
    // A login about to expire is refreshed first (ECA's `maybe-renew-auth-token!`): its timer does not run while the laptop sleeps.
    await this.logins.ensureFresh(entry.provider, signal);
    let c = this.clients.get(entry.id);
    if (!c) {
      c = Promise.resolve(createClient(entry, { home: this.home }, () => this.currentAuth(entry.provider)));
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

  /** Why a script of a workspace folder (a hook file) may not run now; undefined: it may (config/trust.ts). */
  private untrustedFile(root: string, path: string): string | undefined {
    let state;
    try {
      // A FIFO would block the read; a script that big is no script (and is not hashed at trust).
      const st = statSync(path);
      if (!st.isFile() || st.size > MAX_SCRIPT_BYTES) return 'not a regular file of at most 4 MB';
      state = fileTrust(this.home, root, path, readFileSync(path));
    } catch {
      return undefined;
    }
    return state === 'trusted' ? undefined : fileTrustWhy(state, root);
  }

  /** What an untrusted workspace config asked for and did not get, one message per file. */
  heldBackMessages(): string[] {
    return heldBack(this).map(heldBackMessage);
  }

  /** The held-back settings that would set up a provider: why no model can be used yet (config/held-model.ts). */
  heldModelMessages(): string[] {
    return heldModelMessages(this);
  }

  /** `/trust`: trust the folders whose settings were held back, and apply them. */
  trust(): Promise<string> {
    return trustHeldBack({
      home: this.home,
      workspaces: this.workspaces,
      roots: this.roots,
      coveredFiles: (root) => coveredFilesNow(root, { env: this.opts.env, homeDir: this.opts.env.HOME || homedir(), config: this.config }),
      reload: () => this.loadConfig(),
      apply: (loaded) => this.applyConfig(loaded),
      reconfigurePeers: () => this.all().flatMap((p) => p.reconfigure?.() ?? []),
      modelsChanged: (providers) => this.providersChanged(providers),
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
      providers: [`Provider auth (secrets in ${this.logins.storeKind}):`, ...this.providerIds().map((id) => providerAuthLine(id, this.providerAuth(id)))],
      peers: sections.flatMap((s) => s?.lines ?? []),
      agentRuntime: [
        await this.sandbox.doctorLine(this.roots),
        this.jobs.doctorLine((await this.sandbox.plan(this.roots)).kind === 'sandboxed'),
        ...this.board.summary(),
        ...this.memory.doctorLines(),
        ...this.board.problems().map((p) => `Problem: ${p}`),
      ],
    });
  }

  private disposed: Promise<void> | undefined;
  /** Aborted on dispose: start-up tasks stop waiting. */
  private readonly stopping = new AbortController();

  /** Stops every turn and peer, then closes indexes and the store. Safe to call more than once. */
  dispose(): Promise<void> {
    this.stopping.abort();
    this.completer.dispose();
    this.rewriter.dispose();
    this.live.dispose();
    this.logins.dispose();
    this.disposed ??= (async () => {
      // A folder change in progress may end first, briefly (a slow reload must not eat shutdown's budget).
      await within(this.rootsChanging, ROOTS_CHANGE_DISPOSE_MS, () => log.warn('a workspace folder change was still in progress at shutdown'));
      // Turns wind down (up to 2 s) while the peers stop: a peer's clean stop never waits behind
      // them, and a turn waiting on a tool call ends as soon as its peer is gone.
      await Promise.all([
        this.chats.dispose().catch((e: unknown) => log.error(`stopping chats: ${errorMessage(e)}`)),
        this.jobs.dispose().catch((e: unknown) => log.error(`stopping background jobs: ${errorMessage(e)}`)),
        ...[...this.peers].map(([name, p]) => p.dispose().catch((e: unknown) => log.error(`stopping ${name}: ${errorMessage(e)}`))),
        this.chatServers.dispose().catch((e: unknown) => log.error(`stopping chats' MCP servers: ${errorMessage(e)}`)),
        ...[...this.clients.values()].map((c) => c.then((client) => client.dispose?.()).catch(() => {})),
        this.sessionStarted ? this.hooks.trigger('sessionEnd').catch((e: unknown) => log.error(`sessionEnd hooks: ${errorMessage(e)}`)) : undefined,
      ]);
      this.close();
      // A private host goes with its workspace (the store, the reaper, the listeners).
      await this.ownHost?.dispose();
    })();
    return this.disposed;
  }

  /**
   * Its shutdown ran past its deadline: kill the processes this workspace started (its jobs, its
   * peers' servers) now. Every process of patchbay is the host's to kill (`Host.forceClose`),
   * which a private host does here.
   */
  forceClose(): void {
    // Jobs first: their process groups may hold processes no longer our descendants (their parent exited).
    this.jobs.forceClose();
    this.chatServers.forceClose();
    for (const p of this.all()) {
      try {
        p.forceClose?.();
      } catch (e) {
        log.warn(errorMessage(e));
      }
    }
    this.close();
    this.ownHost?.forceClose();
  }

  /** The hooks' processes and the indexes (the store is the host's). Idempotent. */
  private close(): void {
    this.host.forget(this);
    this.hooks.killAll();
    // What is queued of the event log goes to the store before it closes.
    this.port.close();
    this.legacy?.detach();
    for (const ix of this.indexByRoot.values()) ix.dispose();
  }
}

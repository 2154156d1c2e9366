/**
 * The editor façade: ECA over one JSON-RPC connection (specs/eca-protocol.md). Validates
 * every inbound message, gates everything but `initialize` until the handshake, and turns
 * core's events into notifications.
 *
 * Lifecycle: awaitingInitialize ─initialize─► running ─shutdown─► shuttingDown ─exit─► (process ends)
 */
import { ResponseError, type CancellationToken, type MessageConnection } from 'vscode-jsonrpc';
import type { z } from 'zod';
import { createConnection } from '../../rpc/connection.js';
import { InvalidParams, InvalidRequest, MethodNotFound, ServerNotInitialized } from '../../rpc/errors.js';
import { request } from '../../rpc/request.js';
import type { ConfigUpdated, InitializeParams, ShowMessage } from '../../protocol/eca/lifecycle.js';
import type { ChatPromptParams, ChatPromptResult } from '../../protocol/eca/chat.js';
import { ECA, type ClientNotification, type ClientRequest, type ServerNotification } from '../../protocol/eca/methods.js';
import type { ChatEvents } from '../../core/events.js';
import type { PromptInput, TurnHandle, VariantSelection } from '../../core/chat/chats.js';
import { variantNames } from '../../shapes/variants.js';
import { toEcaNotifications } from './eca-events.js';
import { EarlyTasks } from './eca-tasks.js';
import { fromEcaContext, toEcaOffer } from './eca-contexts.js';
import { withMentions } from './eca-mentions.js';
import { ecaAsk } from './eca-ask.js';
import { openChat } from './eca-open.js';
import { chatHistory, forkChat } from './eca-history.js';
import { addFlag, removeFlag } from './eca-flags.js';
import { inlineRefusal, refusedInline } from './eca-inline.js';
import { rollbackChat } from './eca-rollback.js';
import { loginErrors, providerStatus, providerStatuses, toEcaLoginAction } from './eca-providers.js';
import { completeInline, startRewrite } from './eca-assist.js';
import { addServer, removeServer, setServerDisabled, updateServer } from './eca-mcp-manage.js';
import { ecaJobOutput, ecaJobs } from './eca-jobs.js';
import { listMemories } from './eca-memory.js';
import { NATIVE_SERVER_NAME, nativeToolServer, toEcaCommand, toEcaToolServer } from './eca-tool-servers.js';
import type { ToolServerStatus } from '../../shapes/peer.js';
import type { EditorBridge, EditorDiagnostic } from '../../shapes/tool.js';
import type { Workspace } from '../../runtime/workspace.js';
import type { Host } from '../../runtime/host.js';
import { loadWorkspaceConfig } from '../../runtime/workspace-config.js';
import { rootsRequest } from './eca-roots.js';
import { disposeWithin } from '../shared/dispose-within.js';
import type { ServerOptions } from '../shared/server-options.js';
import { RemoteAttachment } from './remote/attach.js';
import { errorMessage, logger } from '../../util/log.js';
import { isAlive } from '../../util/pid.js';
import { fileURLToPath } from 'node:url';
import { isAbsolute, resolve } from 'node:path';
import { chatContextSchema } from '../../protocol/eca/context.js';
import type { Context } from '../../shapes/context.js';
import { explainNativeLoadError, isNativeModuleMismatch } from '../../util/native-module.js';
import { FrontEndPort, sinkFrontEnd, type LegacySinks } from '../../runtime/front-end-port.js';
import type { Attachment } from '../../core/chat/port.js';

const log = logger('server');

/** How long the editor gets to answer our requests (`editor/getDiagnostics`). */
const EDITOR_REQUEST_TIMEOUT_MS = 10_000;

type State =
  | { kind: 'awaitingInitialize' }
  /** The session is built right after `initialize` is answered; handlers wait for it. */
  | { kind: 'running'; session: Promise<Workspace>; params: InitializeParams; initialized?: boolean }
  | { kind: 'shuttingDown'; session: Promise<Workspace> };

export type { ServerOptions };

export class EcaServer {
  private state: State = { kind: 'awaitingInitialize' };
  private readonly conn: MessageConnection;
  /** Notifications to the editor: one write each, no promise chain (rpc/writer.ts). */
  private readonly send: (method: string, params: unknown) => void;
  private parentWatch: NodeJS.Timeout | undefined;
  private exited = false;
  /** The runtime's messages to the user before `initialized`, said then (undefined once said). */
  private early: ShowMessage[] | undefined = [];
  /** Start-up tasks as `$/progress`, held until `initialized`. */
  private readonly tasks = new EarlyTasks((p) => this.notify(ECA.progress, p));
  /** Config errors, said once in the first chat that has an event (then cleared). */
  private configNotice: string | undefined;
  /** The process's host, opened at `initialize`: its one workspace is the session (disposing it stops everything). */
  private host: Promise<Host> | undefined;
  /** ECA's remote API, when `remote.enabled` (./remote/). */
  private readonly remote = new RemoteAttachment();
  /** This editor as a front end of the host's port (../../runtime/front-end-port.ts). */
  private attachment: Attachment | undefined;

  /** The port this editor's host reports to, once `initialize` opened it: another front end may attach to it. */
  get port(): FrontEndPort | undefined {
    return this.portMade;
  }
  private portMade: FrontEndPort | undefined;

  constructor(private readonly opts: ServerOptions) {
    const { rpc, notify } = createConnection(opts.input, opts.output);
    this.conn = rpc;
    this.send = notify;
    this.register();
    this.conn.onClose(() => this.exit(this.state.kind === 'shuttingDown' ? 0 : 1, 'editor closed the connection'));
    // A write to a closed pipe (EPIPE) means the editor can no longer hear us: it is gone.
    opts.output.on('error', (e: Error) => this.editorGone(`cannot write to the editor: ${errorMessage(e)}`));
    this.conn.listen();
  }

  /** The editor's end of stdio broke: shut down at once (exit code 1). */
  editorGone(why: string): void {
    this.exit(1, why);
  }

  private session(): Promise<Workspace> {
    if (this.state.kind === 'running') return this.state.session;
    if (this.state.kind === 'awaitingInitialize') throw new ResponseError(ServerNotInitialized, 'Server not initialized: send "initialize" first');
    throw new ResponseError(InvalidRequest, 'Server is shutting down');
  }

  /**
   * A request handler for a method of the ECA table, its params validated against the table's
   * schema (−32602 names the bad field); the handler's answer must fit the table's result type.
   */
  private request<E extends ClientRequest>(entry: E, fn: (p: z.output<E['params']>, session: Workspace, token: CancellationToken) => z.input<E['result']> | Promise<z.input<E['result']>>): void {
    const { method, params: schema } = entry;
    // `token` is cancelled by the editor's `$/cancelRequest` for this request.
    this.conn.onRequest(method, async (raw: unknown, token: CancellationToken) => {
      const session = this.session();
      // `schema` is E['params']: its output type is what `fn` takes (TS cannot follow the index).
      const params = parse(method, schema, raw) as z.output<E['params']>;
      return fn(params, await session, token);
    });
  }

  private notification<E extends ClientNotification>(entry: E, fn: (p: z.output<E['params']>, session: Workspace) => void): void {
    const { method, params: schema } = entry;
    this.conn.onNotification(method, (raw: unknown) => {
      if (this.state.kind !== 'running') return log.warn(`${method} ignored: server not running`);
      // Notifications run in arrival order: each waits on the same session promise.
      void this.state.session.then(
        (session) => {
          try {
            fn(parse(method, schema, raw) as z.output<E['params']>, session);
          } catch (e) {
            log.warn(errorMessage(e));
          }
        },
        () => log.warn(`${method} ignored: the session could not start`),
      );
    });
  }

  private register(): void {
    const c = this.conn;
    c.onRequest(ECA.initialize.method, async (raw: unknown): Promise<z.input<typeof ECA.initialize.result>> => {
      if (this.state.kind !== 'awaitingInitialize') throw new ResponseError(InvalidRequest, 'initialize was already received');
      const params = parse(ECA.initialize.method, ECA.initialize.params, raw);
      const env = this.opts.env ?? process.env;
      const loaded = loadWorkspaceConfig({ roots: rootsOf(params), env, initializationOptions: params.initializationOptions, configFile: this.opts.configFile });
      // The process's host (its store, logging, listeners, port, the environment children get), then its one workspace.
      const host = new Promise<void>((r) => setImmediate(r))
        .then(() => import('../../runtime/host.js'))
        .then(({ Host }) => Host.open({ env, configFile: this.opts.configFile, ...(this.opts.logLevel ? { logLevel: this.opts.logLevel } : {}) }));
      this.host = host;
      const ask = ecaAsk(this.conn, params);
      let ws: Workspace | undefined;
      const session: Promise<Workspace> = host.then(async (h) => {
        const port = (this.portMade = h.port);
        this.attachment = port.attach(
          sinkFrontEnd({
            name: 'eca',
            // ECA editors show images and approve calls; questions and elicitation only when the editor declared `askQuestion`.
            capabilities: { images: true, ask: true, elicitation: ask !== undefined, files: false, terminal: false },
            workspace: () => ws,
            ...(ask ? { ask } : {}),
            ...this.sinks(session),
          }),
        );
        return (ws = await h.acquire(loaded.roots, {
          initializationOptions: params.initializationOptions,
          loaded,
          // ECA editors ask the user and show diffs; diagnostics and questions only when the editor declared them.
          frontEnd: { canAsk: true, canShowDiffs: true, diagnostics: this.editorBridge(params).getDiagnostics, ...(ask ? { ask: port.askUser } : {}) },
        }));
      });
      session.then(
        (s) => log.info(`initialized by ${params.clientInfo?.name ?? 'unknown client'} for ${s.roots.join(', ')}`),
        (e: unknown) => {
          const unusable = isNativeModuleMismatch(e) ? e.message : explainNativeLoadError(e, 'better-sqlite3');
          if (unusable !== undefined) {
            // Nothing works without the store: said once (stderr and the editor), then exit 1.
            log.error(unusable);
            this.showMessage({ type: 'error', message: unusable });
            return this.exit(1, 'the SQLite module cannot load');
          }
          log.error(`could not start the session: ${errorMessage(e)}`);
          this.showMessage({ type: 'error', message: `patchbay could not start: ${errorMessage(e)}` });
        },
      );
      this.state = { kind: 'running', session, params };
      this.watchParent(params.processId ?? null);
      const cfg = loaded.config;
      // bin/patchbay saves its V8 code cache now: the start-up path, nothing more.
      (globalThis as { __patchbayStartupDone?: () => void }).__patchbayStartupDone?.();
      return {
        chatWelcomeMessage: cfg.welcomeMessage,
        // Older ECA plugins read these from the initialize result.
        chatBehaviors: ['agent', 'plan'],
        chatDefaultBehavior: cfg.chat.defaultAgent === 'plan' ? 'plan' : 'agent',
      };
    });
    c.onNotification(ECA.initialized.method, () => {
      if (this.state.kind !== 'running') return;
      // Once per session: a repeated `initialized` must not open more listeners or start peers twice.
      if (this.state.initialized) return log.warn('ignoring a repeated "initialized" notification');
      this.state.initialized = true;
      void this.state.session.then(
        // The runtime's start-up order (runtime/start.ts), told the ECA way.
        (session) => {
          session.start({
            tell: ({ invalid, held }) => {
              for (const message of invalid) this.showMessage({ type: 'warning', message });
              // VS Code and the desktop app never show $/showMessage: the first chat says it too.
              if (invalid.length) this.configNotice = invalid.join('\n');
              for (const message of held) this.showMessage({ type: 'warning', message });
              // What the runtime said before (a folder change's reload): once, and not what was just said.
              const early = (this.early ?? []).filter((m) => !held.includes(m.message) && !invalid.includes(m.message));
              this.early = undefined;
              for (const m of early) this.showMessage(m);
            },
            // MCP servers start once config/updated is out, or after 250 ms if model discovery is slow.
            servers: 'afterModels',
            // The servers task has begun: tasks held until now go out, starts first (./eca-tasks.ts).
            serversBegan: () => this.tasks.release(),
            // Listeners (the OpenCtx host, the provider gateway): a peer that cannot listen says why.
            listenerFailed: (_peer, e) => this.showMessage({ type: 'warning', message: errorMessage(e) }),
            modelsReady: () => {
              this.sendConfig(session);
              this.sendNativeTools(session);
            },
          });
          // ECA's remote API (./remote/), a second front end on the host's port.
          void this.remote.start(session).catch((e: unknown) => this.showMessage({ type: 'warning', message: errorMessage(e) }));
        },
        () => {},
      ); // a session that could not start was reported where it failed (initialize)
    });
    c.onRequest(ECA.shutdown.method, async (): Promise<z.input<typeof ECA.shutdown.result>> => {
      const session = this.session();
      this.state = { kind: 'shuttingDown', session };
      // The editor waits for this answer: a clean stop gets longer than when the editor is gone.
      await disposeWithin(this.host ?? session, 1_500);
      return null;
    });
    c.onNotification(ECA.exit.method, () => this.exit(this.state.kind === 'shuttingDown' ? 0 : 1, 'exit'));

    // A prompt may arrive before model discovery (e.g. Ollama) has finished: wait for it.
    this.request(ECA.chatPrompt, async (p, s) => (await s.modelsReady, promptResult(s.chats.prompt(promptInput(p, s.roots)))));
    // An inline prompt (./eca-inline.ts): ECA's checks first, answered in the result; the variant only when named.
    this.request(ECA.chatInlinePrompt, async (p, s) => {
      const refused = inlineRefusal(p);
      if (refused) return refusedInline(p, refused, (message) => this.showMessage({ type: 'warning', message }));
      await s.modelsReady;
      return promptResult(s.chats.inlinePrompt({ ...promptInput(p, s.roots), variant: p.variant, sourceChatId: p.sourceChatId }));
    });
    // Through the port: the first answer from any front end wins, the others are told.
    this.notification(ECA.chatToolCallApprove, (p, s) => s.port.answer(p.chatId, p.toolCallId, { kind: 'approval', approved: true, forSession: p.save === 'session' }, this.attachment));
    this.notification(ECA.chatToolCallReject, (p, s) => s.port.answer(p.chatId, p.toolCallId, { kind: 'approval', approved: false }, this.attachment));
    this.notification(ECA.chatPromptStop, (p, s) => s.chats.stop(p.chatId));
    this.request(ECA.chatUpdate, (p, s) => (s.chats.update(p.chatId, { title: p.title, trust: p.trust }), {}));
    this.request(ECA.chatDelete, (p, s) => {
      if (p.chatId) s.chats.delete(p.chatId);
      return {};
    });
    this.request(ECA.chatQueryContext, async (p, s) => ({ chatId: p.chatId, contexts: (await s.queryContext(p.query, alreadyAttached(p.contexts))).map(toEcaOffer) }));
    this.request(ECA.chatQueryCommands, (p, s) => ({ chatId: p.chatId, commands: s.commands.query(p.query).map(toEcaCommand) }));
    this.notification(ECA.chatSelectedBehaviorChanged, (p, s) => s.chats.selectAgent(p.chatId, p.behavior));
    this.notification(ECA.chatSelectedAgentChanged, (p, s) => s.chats.selectAgent(p.chatId, p.agent));
    // Answered with the model's variants (eca handlers.clj `chat-selected-model-changed`), once models are known.
    this.notification(ECA.chatSelectedModelChanged, (p, s) => void s.modelsReady.then(() => this.notify(ECA.configUpdated, variantsUpdate(s.chats.selectModel(p.chatId, p.model, p.variant)))));
    this.request(ECA.chatQueryFiles, async (p, s) => ({
      chatId: p.chatId,
      files: (await s.queryContext(p.query)).filter((c) => c.type === 'file'),
    }));
    this.request(ECA.chatClear, (p, s) => (s.chats.clear(p.chatId), {}));
    this.notification(ECA.chatPromptSteer, (p, s) => s.chats.steer(p.chatId, p.message));
    this.notification(ECA.chatPromptSteerRemove, (p, s) => s.chats.removeSteer(p.chatId));
    // Folders added and removed at run time (eca-emacs); an added folder's held-back settings are said as at start.
    this.notification(ECA.workspaceDidChangeWorkspaceFolders, (p, s) => {
      const warn = (message: string) => (log.warn(message), this.showMessage({ type: 'warning', message }));
      const req = rootsRequest(p, warn);
      void s.changeRoots(req).then(
        // The added folders' held-back settings were said by the config reload (Workspace.reloadConfig).
        (r) => r.warnings.forEach((message) => this.showMessage({ type: 'warning', message })),
        (e: unknown) => log.warn(`workspace/didChangeWorkspaceFolders: ${errorMessage(e)}`),
      );
    });
    this.notification(ECA.mcpStartServer, (p, s) => void this.toggleServer(s, p.name, true));
    this.notification(ECA.mcpStopServer, (p, s) => void this.toggleServer(s, p.name, false));
    // The MCP panel's management (./eca-mcp-manage.ts): persisted to the entry's config file.
    this.request(ECA.mcpAddServer, (p, s) => addServer(s, p));
    this.request(ECA.mcpUpdateServer, (p, s) => updateServer(s, p));
    this.request(ECA.mcpRemoveServer, (p, s) => removeServer(s, p.name));
    for (const [entry, disabled] of [
      [ECA.mcpEnableServer, false],
      [ECA.mcpDisableServer, true],
    ] as const) {
      this.notification(entry, (p, s) => void setServerDisabled(s, p.name, disabled).then((refused) => refused && this.showMessage({ type: 'warning', message: refused })));
    }
    this.notification(ECA.mcpConnectServer, (p, s) => void this.signIn(s, p.name, 'connect'));
    this.notification(ECA.mcpLogoutServer, (p, s) => void this.signIn(s, p.name, 'logout'));
    // An ACP session never prompted is stored empty; ECA never lists a chat with nothing in it.
    this.request(ECA.chatList, (p, s) => ({ chats: s.chats.list({ ...p, ...(p.folder !== undefined ? { folder: listedFolder(p.folder) } : {}), withEmpty: false }) }));
    // After model discovery, like a prompt: the chat's model is only restored if it is known.
    this.request(ECA.chatOpen, async (p, s) => (await s.modelsReady, openChat(s.chats, p.chatId, (c) => this.notify(ECA.configUpdated, c), windowOf(p))));
    this.request(ECA.chatHistory, (p, s) => chatHistory(s.chats, p.chatId, p));
    this.request(ECA.chatFork, (p, s) => forkChat(s.chats, p.chatId, p.contentId));
    this.request(ECA.chatAddFlag, (p, s) => addFlag(s.chats, p));
    this.request(ECA.chatRemoveFlag, (p, s) => removeFlag(s.chats, p));
    this.request(ECA.chatRollback, (p, s) => rollbackChat(s.chats, p));
    // The settings panels (eca-emacs `eca-settings`): providers after model discovery.
    this.request(ECA.providersList, async (_p, s) => (await s.modelsReady, { providers: providerStatuses(s) }));
    // Logins wait for model discovery too: it loads the stored logins they replace.
    this.request(ECA.providersLogin, (p, s) => loginErrors(async () => (await s.modelsReady, toEcaLoginAction(await s.logins.login(p.provider, p.method)))));
    this.request(ECA.providersLoginInput, (p, s) => loginErrors(async () => (await s.modelsReady, await s.logins.input(p.provider, p.data), { action: 'done' as const })));
    this.request(ECA.providersLogout, (p, s) => loginErrors(async () => (await s.modelsReady, await s.logins.logout(p.provider), {})));
    // Background jobs (./eca-jobs.ts). A kill that happened is announced by the registry (`jobs/updated`), as ECA's `jobs-kill`.
    this.request(ECA.jobsList, (_p, s) => jobsOf(s));
    this.request(ECA.memoryList, (_p, s) => listMemories(s));
    this.request(ECA.jobsKill, (p, s) => ({ killed: s.jobs.kill(p.jobId) }));
    this.request(ECA.jobsReadOutput, (p, s) => ecaJobOutput(s.jobs, p.jobId));
    // Inline completion and rewrite (./eca-assist.ts), once models are known.
    this.request(ECA.completionInline, async (p, s, token) => (await s.modelsReady, completeInline(s, p, token)));
    this.request(ECA.rewritePrompt, async (p, s) => (await s.modelsReady, startRewrite(s, p, (c) => this.notify(ECA.rewriteContentReceived, c))));

    // Anything else: −32002 before initialize, −32601 after (unknown notifications are ignored).
    c.onRequest((method: string) => {
      // Called for its throw (−32002 before initialize); the session promise is awaited elsewhere.
      void this.session();
      throw new ResponseError(MethodNotFound, `Unhandled method ${method}`);
    });
    c.onNotification((method: string) => log.debug(`ignored notification ${method}`));
  }

  /** `mcp/startServer` / `mcp/stopServer`: any peer's server by that name. */
  private async toggleServer(s: Workspace, name: string, on: boolean): Promise<void> {
    try {
      if (!(await s.toggleServer(name, on))) log.warn(`${on ? 'start' : 'stop'}: no server named "${name}"`);
    } catch (e) {
      log.warn(errorMessage(e));
    }
  }

  /** `mcp/connectServer` / `mcp/logoutServer`: the outcome reaches the editor as `tool/serverUpdated`. */
  private async signIn(s: Workspace, name: string, what: 'connect' | 'logout'): Promise<void> {
    try {
      if (!(await s.serverSignIn(name, what))) log.warn(`${what}: no server named "${name}"`);
    } catch (e) {
      log.warn(`${what} ${name}: ${errorMessage(e)}`);
    }
  }

  /** What this editor is sent: core's events and the workspace's notices as ECA notifications. */
  private sinks(session: Promise<Workspace>): LegacySinks {
    return {
      events: this.events(),
      onToolServer: (status) => this.sendToolServer(status),
      onModelsChanged: (s) => this.sendConfig(s),
      onToolServerRemoved: (name) => this.notify(ECA.toolServerRemoved, { name }),
      // As ECA's `sync-and-notify!`: the models first (when they may have changed), then the provider.
      onProviderChanged: (s, id, models) => {
        if (models) this.sendConfig(s);
        this.notify(ECA.providersUpdated, providerStatus(s, id));
      },
      onNotice: (type, message) => this.showMessage({ type, message }),
      onTask: (t) => this.tasks.report(t),
      onJobsChanged: () => void session.then((s) => this.notify(ECA.jobsUpdated, jobsOf(s))),
      onMemoryIndex: (report) => this.notify(ECA.memoryIndexLoaded, report),
    };
  }

  /** Core's events as ECA notifications (./eca-events.ts translates). */
  private events(): ChatEvents {
    return {
      event: (chatId, e, parentChatId) => {
        if (this.configNotice !== undefined) {
          const text = this.configNotice;
          this.configNotice = undefined;
          this.notify(ECA.chatContentReceived, { chatId, role: 'system', content: { type: 'text', text } });
        }
        for (const x of toEcaNotifications(chatId, e, parentChatId)) this.sendRaw(x.method, x.params);
      },
      opened: (chatId, title) => this.notify(ECA.chatOpened, { chatId, ...(title ? { title } : {}) }),
      cleared: (chatId) => this.notify(ECA.chatCleared, { chatId, messages: true }),
      deleted: (chatId) => this.notify(ECA.chatDeleted, { chatId }),
      showMessage: (type, message) => {
        // Before `initialized` (a folder change's config reload) they wait: `initialized` says them.
        if (this.early) this.early.push({ type, message });
        else this.showMessage({ type, message });
      },
      together: (fn) => {
        const out = this.opts.output;
        out.cork();
        try {
          fn();
        } finally {
          out.uncork();
        }
      },
    };
  }

  /** A notification of the ECA table to the editor (nothing once we are exiting). */
  private notify<E extends ServerNotification>(entry: E, params: z.input<E['params']>): void {
    this.sendRaw(entry.method, params);
  }

  private sendRaw(method: string, params: unknown): void {
    if (!this.exited) this.send(method, params);
  }

  private showMessage(p: ShowMessage): void {
    this.notify(ECA.showMessage, p);
  }

  private editorBridge(params: InitializeParams): EditorBridge {
    if (!params.capabilities.codeAssistant?.editor?.diagnostics) return {};
    return {
      getDiagnostics: async (uri) => {
        // On the deadline the editor is sent $/cancelRequest, so it can stop computing them.
        const res = await request<{ diagnostics?: unknown[] } | null>(this.conn, ECA.editorGetDiagnostics.method, uri ? { uri } : {}, {
          timeoutMs: EDITOR_REQUEST_TIMEOUT_MS,
          cancel: 'lsp',
        });
        return Array.isArray(res?.diagnostics) ? res.diagnostics.flatMap((d) => normalizeDiagnostic(d) ?? []) : [];
      },
    };
  }

  /** As ECA's `notify-chat-config-state!` (src/eca/handlers.clj), with the fields patchbay can fill. */
  private sendConfig(session: Workspace): void {
    const agent = session.config.chat.defaultAgent;
    const behavior = agent === 'code' ? 'agent' : 'plan';
    const model = session.defaultModel;
    const params: ConfigUpdated = {
      chat: {
        models: session.models.map((m) => m.id),
        agents: ['code', 'plan'],
        behaviors: ['agent', 'plan'],
        ...(model ? { selectModel: model.id, defaultModel: model.id } : {}),
        selectAgent: agent,
        defaultAgent: agent,
        selectBehavior: behavior,
        defaultBehavior: behavior,
        // The default model's variants; none selected (ECA selects the agent's configured one, which patchbay has not).
        variants: variantNames(model),
        selectVariant: null,
        welcomeMessage: session.config.welcomeMessage,
      },
    };
    this.notify(ECA.configUpdated, params);
  }

  private sendNativeTools(session: Workspace): void {
    const tools = session.tools.all().filter((t) => t.origin === 'native');
    this.notify(ECA.toolServerUpdated, nativeToolServer(tools, session.config.chat.defaultAgent));
  }

  /** One tool server's status and lists (specs/eca-protocol.md "Tool updated"; ./eca-tool-servers.ts). */
  private sendToolServer(status: ToolServerStatus): void {
    // The plugins key servers by name: a (refused) MCP server named "ECA" would replace the native
    // entry. Its refusal is already in $/showMessage and doctor.
    if (status.name === NATIVE_SERVER_NAME) return log.debug(`tool/serverUpdated for a ${status.type} server named ${NATIVE_SERVER_NAME} not sent`);
    this.notify(ECA.toolServerUpdated, toEcaToolServer(status));
  }

  /** LSP: if the parent process is gone, exit. */
  private watchParent(pid: number | null): void {
    if (!pid) return;
    this.parentWatch = setInterval(() => {
      if (!isAlive(pid)) this.exit(1, `editor process ${pid} is gone`);
    }, 1_000);
    this.parentWatch.unref();
  }

  private exit(code: number, why: string): void {
    if (this.exited) return;
    this.exited = true;
    log.info(`exiting (${why}) with code ${code}`);
    if (this.parentWatch) clearInterval(this.parentWatch);
    // A server whose editor is gone must not linger: at most the dispose deadline, then the process ends.
    const done = Promise.all([this.state.kind !== 'awaitingInitialize' ? disposeWithin(this.host ?? this.state.session) : undefined, this.remote.close()]);
    void done.finally(() => {
      this.conn.dispose();
      this.opts.onExit(code);
    });
  }
}

/**
 * ECA's prompt params as core's input: `behavior` is the older name of `agent`, the request id the
 * content id, and `@path`s in the text are contexts (eca-mentions.ts).
 */
/** ECA's `config/updated` after a model change: scoped to the chat when it was for one. */
function variantsUpdate(sel: VariantSelection): ConfigUpdated {
  return { ...(sel.chatId ? { chatId: sel.chatId } : {}), chat: { variants: sel.variants, selectVariant: sel.variant } };
}

/**
 * `chat/list`'s `folder` as the store compares it: absolute (a relative one would silently match
 * nothing, and "" every folder), normalized as the recorded folders are (`/a/b/` and `/a/./b` name `/a/b`).
 */
function listedFolder(folder: string): string {
  if (!isAbsolute(folder)) throw new ResponseError(InvalidParams, `chat/list: folder must be an absolute path, got ${JSON.stringify(folder)}`);
  return resolve(folder);
}

function promptInput(p: ChatPromptParams, roots: string[]): PromptInput {
  const contexts = withMentions(p.contexts ?? [], p.message, roots);
  // Not the client's `requestId`: a webview numbers requests from 0 again after a reload, and the
  // plugins learn the user message's id from its echo (`contentReceived` … `contentId`), as with ECA.
  const contentId = p.contentId;
  const agent = p.agent ?? p.behavior;
  return {
    message: p.message,
    ...(p.chatId ? { chatId: p.chatId } : {}),
    ...(p.model ? { model: p.model } : {}),
    ...(agent ? { agent } : {}),
    ...(contexts.length ? { contexts: contexts.map(fromEcaContext) } : {}),
    ...(contentId !== undefined ? { contentId } : {}),
    ...(p.trust !== undefined ? { trust: p.trust } : {}),
    // ECA clients send the variant they show with every prompt; none sent is none selected.
    variant: p.variant ?? null,
  };
}

/** The turn handle as ECA's `chat/prompt` result (the turn's end is the `progress finished` content). */
function promptResult(h: TurnHandle): ChatPromptResult {
  const status = h.status === 'started' ? 'prompting' : h.status === 'noModel' ? 'login' : 'error';
  return { chatId: h.chatId, model: h.model, status };
}

/** The workspace folders an ECA editor names (none: the current directory). */
function rootsOf(params: InitializeParams): string[] {
  return (params.workspaceFolders ?? []).map((f) => (f.uri.startsWith('file:') ? fileURLToPath(f.uri) : f.uri));
}

/** Contexts the prompt already has, left out of `chat/queryContext` answers; what does not parse is ignored. */
function alreadyAttached(contexts: unknown[] | undefined): Context[] {
  return (contexts ?? []).flatMap((c) => {
    const r = chatContextSchema.safeParse(c);
    return r.success ? [fromEcaContext(r.data)] : [];
  });
}

function parse<S extends z.ZodType>(method: string, schema: S, raw: unknown): z.output<S> {
  const r = schema.safeParse(camelKeys(withoutNulls(raw ?? {})));
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue.path.length ? issue.path.join('.') : '(params)';
  throw new ResponseError(InvalidParams, `Invalid params for ${method}: ${field}: ${issue.message}`, { field, issues: r.error.issues.length });
}

/** Emacs' ECA client sends every unset field as `null`; treat null as absent, at any depth. */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = withoutNulls(x);
  return out;
}

/**
 * eca-emacs writes some params in kebab case (`:job-id`, `:doc-text`, `:doc-version`: eca-jobs.el,
 * eca-completion.el), which ECA's server reads as the camelCase names because it keywordizes every
 * key. The top level only: nested maps hold user keys (env vars, headers, login fields) kept as sent.
 * A camelCase key already present wins.
 */
function camelKeys(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const src = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(src)) {
    const camel = k.includes('-') ? k.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : k;
    if (camel === k || !(camel in src)) out[camel] = x;
  }
  return out;
}

/** Editors report severities their own way ('information', 1-4, missing); map them onto ECA's four. */
function normalizeDiagnostic(d: unknown): EditorDiagnostic | undefined {
  if (!d || typeof d !== 'object') return undefined;
  const x = d as Record<string, unknown>;
  const sev = String(x.severity ?? '').toLowerCase();
  const severity: EditorDiagnostic['severity'] = sev === 'error' || sev === '1' ? 'error' : sev === 'warning' || sev === '2' ? 'warning' : sev === 'hint' || sev === '4' ? 'hint' : 'info';
  const range = x.range as EditorDiagnostic['range'] | undefined;
  if (typeof x.uri !== 'string' || !range?.start || !range.end) return undefined;
  return {
    uri: x.uri,
    severity,
    range,
    message: typeof x.message === 'string' ? x.message : '',
    ...(typeof x.source === 'string' ? { source: x.source } : {}),
    ...(x.code !== undefined && x.code !== null ? { code: String(x.code) } : {}),
  };
}

/** The jobs list of `jobs/list` and `jobs/updated`, each labelled with its chat's title. */
function jobsOf(s: Workspace): ReturnType<typeof ecaJobs> {
  return ecaJobs(s.jobs, (chatId) => s.chats.active().find((c) => c.id === chatId)?.title);
}

/** ECA windows `chat/open` only when one of `limit`/`before`/`after` is given. */
function windowOf(p: { limit?: number; before?: string; after?: string }): { limit?: number; before?: string; after?: string } | undefined {
  return p.limit !== undefined || p.before !== undefined || p.after !== undefined ? p : undefined;
}

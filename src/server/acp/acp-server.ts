/**
 * The ACP façade (Agent Client Protocol v1, newline-delimited JSON-RPC over stdio): `patchbay acp`
 * for Zed, JetBrains, Neovim and Emacs agent-shell. A translator over the workspace runtime and
 * core's chat events, as the ECA façade (../server.ts) is: the same chats, tools, peers and store,
 * so a chat started over ECA is a session here (its id is the session id) and the other way round.
 *
 * The SDK (`@agentclientprotocol/sdk`) owns the wire: framing, validation of every inbound params
 * object against ACP's schema (−32602 before a handler runs), the initialize gate (−32600 before
 * it), unknown methods (−32601). This file owns the sessions.
 *
 * Sessions: one workspace per process, made for the first session's folders (see `workspace`),
 * whose folders then follow the open sessions' (session-roots.ts); a session is a chat id with
 * the agent/model/variant the client chose. A session is stored from `session/new` on (empty
 * until its first prompt), so it can be loaded or resumed after a restart.
 */
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  agent,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type AgentConnection,
  type AuthMethod,
  type ClientCapabilities,
  type InitializeRequest,
  type InitializeResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type McpServer,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  type ResumeSessionRequest,
  type ResumeSessionResponse,
  type RequestPermissionRequest,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import type { ChatEvent, ChatEvents, ToolCallEvent } from '../../core/events.js';
import { randomUUID as newId } from 'node:crypto';
import { noModelMessage } from '../../core/no-model.js';
import { runningElsewhereText } from '../../core/persistence.js';
import type { Workspace, FrontEnd } from '../../runtime/workspace.js';
import type { ServerOptions } from '../server.js';
import type { ChatMcpServer } from '../../shapes/chat-servers.js';
import { errorMessage, logger } from '../../util/log.js';
import { AcpTranslator, toolCallFields, toolCallIdOf } from './updates.js';
import { promptParts } from './prompt-content.js';
import { applyOption, choiceOf, configOptions, modeState, type SessionChoice } from './session-options.js';
import { availableCommands } from './commands.js';
import { disposeWithin } from '../dispose-within.js';
import { runTerminal, sdkTerminalClient } from './terminal.js';
import { acpAsk } from './ask.js';
import { logoutAll } from './logout.js';
import { patchbayVersion } from '../../util/version.js';
import { agentFolder, sessionRoots, workspaceFolders, SessionRootsLedger, type SessionRootParams, type SessionRootSet } from './session-roots.js';
import { cappedLines } from './line-cap.js';
import { FrontEndPort, sinkFrontEnd } from '../../runtime/front-end-port.js';
import type { Attachment } from '../../core/port.js';

const log = logger('acp');

/** How long the client gets to answer a file read or write before the tool reports it. */
const FS_REQUEST_TIMEOUT_MS = 30_000;
/** Sessions per `session/list` page. */
const LIST_PAGE = 50;

/** The permission choices offered for every call that needs approval (ACP `PermissionOption`). */
const PERMISSION_OPTIONS = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'allow-always', name: 'Always allow in this session', kind: 'allow_always' },
  { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject-always', name: 'Always reject in this session', kind: 'reject_always' },
] as const;

const AUTH_METHOD_IDS = new Set(['login', 'configured']);

/**
 * How a user gets a model (ACP registry AUTHENTICATION.md): `patchbay login` run by the client in
 * a terminal, offered only to clients that declare terminal auth (ACP `AuthMethodTerminal`); and
 * for every client, picking up a key or login made outside (config, environment, another window).
 */
function authMethods(caps: ClientCapabilities): AuthMethod[] {
  return [
    // `_meta["terminal-auth"]`: how clients declared it before ACP had `auth.terminal` (the registry's own validator still does).
    ...(caps.auth?.terminal || caps._meta?.['terminal-auth'] === true
      ? [
          {
            type: 'terminal' as const,
            id: 'login',
            name: 'Log in to a model provider',
            description: 'Runs `patchbay login` in a terminal: pick a provider, then log in or paste an API key.',
            args: ['login'],
          },
        ]
      : []),
    {
      id: 'configured',
      name: 'Use a configured provider',
      description: 'Set a provider key (e.g. ANTHROPIC_API_KEY or OPENAI_API_KEY, or `providers` in ~/.config/patchbay/config.json) or run `patchbay login` in a terminal, then continue.',
    },
  ];
}

/** As the ECA server's: the stdio to speak on, the config to read, and what to call once everything has stopped. */
export type AcpServerOptions = ServerOptions;

interface Session {
  id: string;
  cwd: string;
  /** Its `additionalDirectories` (resolved): inside the workspace while it is open. */
  additional: string[];
  ws: Workspace;
  choice: SessionChoice;
  translator: AcpTranslator;
  /** Ids of the user messages this client sent (not echoed back). */
  own: Set<string>;
  /** A `session/prompt` is being answered. */
  running: boolean;
  /** A cancel came while the prompt's turn may not have started yet: stop it when it does. */
  cancelPending: boolean;
  /** `session/load` is replaying the stored chat. */
  replaying: boolean;
  /** Permission requests waiting for the client (aborted by a cancel). */
  asks: Set<AbortController>;
  /** The last commands list sent, to send it again only when it changed. */
  commands?: string;
  /** The client gave this session MCP servers (a reload without them stops them). */
  hadServers?: boolean;
}

export class AcpServer {
  private readonly conn: AgentConnection;
  private caps: ClientCapabilities = {};
  private initialized = false;
  /** The workspace, once a session needed one. */
  private ws: Promise<Workspace> | undefined;
  /** The folders of the open sessions: the workspace's folders follow them (session-roots.ts). */
  private readonly roots = new SessionRootsLedger();
  /** The last workspace folder change: one at a time, each from the sessions open when it runs. */
  private rootsChange: Promise<void> = Promise.resolve();
  private readonly sessions = new Map<string, Session>();
  /** The last notification written: a prompt is answered only after every update before it. */
  private lastWrite: Promise<void> = Promise.resolve();
  private exited = false;
  /** The workspace's config problems were told (once, in the first prompt's answer). */
  private toldConfig = false;

  constructor(private readonly opts: AcpServerOptions) {
    const app = agent({ name: 'patchbay' })
      .onRequest(methods.agent.initialize, ({ params }) => this.initialize(params))
      .onRequest(methods.agent.authenticate, ({ params }) => this.authenticate(params.methodId))
      .onRequest(methods.agent.session.new, ({ params }) => this.newSession(params))
      .onRequest(methods.agent.session.load, ({ params }) => this.loadSession(params))
      .onRequest(methods.agent.session.list, ({ params }) => this.listSessions(params))
      .onRequest(methods.agent.session.close, ({ params }) => this.closeSession(params.sessionId))
      .onRequest(methods.agent.session.resume, ({ params }) => this.resumeSession(params))
      .onRequest(methods.agent.session.delete, ({ params }) => this.deleteSession(params.sessionId))
      .onRequest(methods.agent.logout, async () => (await logoutAll(await this.storeWorkspace()), {}))
      .onRequest(methods.agent.session.prompt, ({ params, signal }) => this.prompt(params, signal))
      .onRequest(methods.agent.session.setMode, ({ params }) => (this.choose(params.sessionId, 'mode', params.modeId), {}))
      .onRequest(methods.agent.session.setConfigOption, ({ params }) => ({ configOptions: this.choose(params.sessionId, params.configId, params.value) }))
      // Handled at once (the SDK runs notifications concurrently): a stop must not wait behind anything.
      .onNotification(methods.agent.session.cancel, ({ params }) => this.cancel(params.sessionId));
    // Our own line splitter caps each line before the SDK's framing sees it: an over-long line is
    // answered with an error and dropped, and the connection lives on (line-cap.ts).
    const framed = cappedLines(Writable.toWeb(opts.output) as WritableStream<Uint8Array>, Readable.toWeb(opts.input) as ReadableStream<Uint8Array>);
    const stream = ndJsonStream(framed.output, framed.input, { maxMessageBytes: framed.sdkMaxBytes });
    this.conn = app.connect(stream);
    void this.conn.closed.then(() => this.exit(0, 'the client closed the connection'));
    // A write to a closed pipe (EPIPE) means the client can no longer hear us: it is gone.
    opts.output.on('error', (e: Error) => this.exit(1, `cannot write to the client: ${errorMessage(e)}`));
  }

  /** The client's end of stdio broke, or a signal came: shut down at once. */
  clientGone(why: string): void {
    this.exit(1, why);
  }

  private initialize(params: InitializeRequest): InitializeResponse {
    if (this.initialized) throw RequestError.invalidRequest(undefined, 'initialize was already received');
    this.initialized = true;
    this.caps = params.clientCapabilities ?? {};
    log.info(`initialized by ${params.clientInfo?.name ?? 'unknown client'} (protocol ${params.protocolVersion})`);
    // bin/patchbay saves its V8 code cache now: the start-up path, nothing more.
    (globalThis as { __patchbayStartupDone?: () => void }).__patchbayStartupDone?.();
    return {
      // ACP: the client's version when supported, else the agent's latest; v1 is the only one.
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, close: {}, resume: {}, delete: {}, additionalDirectories: {} },
        auth: { logout: {} },
      },
      authMethods: authMethods(this.caps),
      agentInfo: { name: 'patchbay', title: 'patchbay', version: patchbayVersion() },
    };
  }

  /**
   * `authenticate`: the user logged in elsewhere (`patchbay login` in a terminal the client ran,
   * or a key set in the config or environment): pick that up. Answers once some model is usable.
   */
  private async authenticate(methodId: string): Promise<Record<string, never>> {
    if (!AUTH_METHOD_IDS.has(methodId)) throw RequestError.invalidParams({ methodId }, `unknown auth method "${methodId}" (offered: ${[...AUTH_METHOD_IDS].join(', ')})`);
    const ws = await this.ws?.catch(() => undefined);
    let usable = false;
    if (ws) {
      await ws.refreshLogins();
      if (ws.models.length) usable = true;
    }
    // No session yet: nothing is loaded to check against; the next session/new reads the logins afresh.
    if (!usable && ws) throw RequestError.authRequired({ authMethods: authMethods(this.caps) }, noModelMessage(ws.heldModelMessages()));
    return {};
  }

  // ── sessions ────────────────────────────────────────────────────────────────

  private async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const roots = this.sessionRoots(params);
    const ws = await this.workspace(roots);
    const s = this.addSession(newId(), ws, roots, { agent: ws.config.chat.defaultAgent === 'plan' ? 'plan' : 'code', variant: null });
    this.roots.set(s.id, roots);
    await this.followRoots(ws);
    await ws.modelsReady;
    // Stored now, so it can be loaded or resumed after a restart before its first prompt.
    ws.chats.create(s.id, { agent: s.choice.agent, folder: roots.cwd, ...(roots.additional.length ? { additionalFolders: roots.additional } : {}) });
    this.sessionServers(s, params.mcpServers);
    setImmediate(() => this.sendCommands(s));
    return { sessionId: s.id, modes: modeState(s.choice.agent), configOptions: this.options(s) };
  }

  private async loadSession(params: LoadSessionRequest): Promise<LoadSessionResponse> {
    const roots = this.sessionRoots(params);
    const ws = await this.workspace(roots);
    await ws.modelsReady;
    const prior = this.sessions.get(params.sessionId);
    if (prior?.running) throw RequestError.invalidRequest({ sessionId: params.sessionId }, 'this session has a prompt running: cancel it before loading it again');
    const s = this.addSession(params.sessionId, ws, roots, { agent: 'code', variant: null });
    // The servers the session had are the reload's to keep or stop.
    if (prior?.hadServers) s.hadServers = true;
    // core replays the stored chat through the events before `open` returns (core/chats.ts `open`).
    s.replaying = true;
    let opened;
    try {
      opened = ws.chats.open(params.sessionId);
    } finally {
      s.replaying = false;
    }
    if (!opened) {
      this.sessions.delete(params.sessionId);
      // A session loaded before keeps nothing of it: its folders leave with it.
      if (this.roots.delete(params.sessionId)) await this.followRoots(ws);
      throw RequestError.sessionNotFound(params.sessionId);
    }
    // Its folders are inside from now on; a chat from before folders were recorded gets this one.
    // ACP: the additional list given is the whole list now (none when omitted), as session/list reports it.
    this.roots.set(s.id, roots);
    ws.chats.recordFolders(s.id, { folder: roots.cwd, additionalFolders: roots.additional });
    await this.followRoots(ws);
    s.choice = choiceOf(opened);
    this.sessionServers(s, params.mcpServers);
    setImmediate(() => this.sendCommands(s));
    // ACP: the answer comes once the whole conversation has been streamed.
    await this.lastWrite;
    return { modes: modeState(s.choice.agent), configOptions: this.options(s) };
  }

  /**
   * `session/list` reads the store only: it never changes the workspace's folders or any trust
   * (it makes the workspace when none exists yet, in the agent's own folder, which the first
   * session's folders replace). With a `cwd`, the chats whose recorded folder is it or lies
   * inside it; a chat from before folders were recorded has none, so it is listed only without a
   * `cwd`, under the workspace's first folder with `_meta.patchbay.folderRecorded: false`
   * (`session/load` records the folder it is loaded in).
   */
  private async listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    if (params.cwd && !isAbsolute(params.cwd)) throw RequestError.invalidParams({ cwd: params.cwd }, `cwd must be an absolute path, got ${JSON.stringify(params.cwd)}`);
    const ws = await this.storeWorkspace();
    const offset = params.cursor ? Number.parseInt(params.cursor, 10) : 0;
    if (!Number.isInteger(offset) || offset < 0) throw RequestError.invalidParams({ cursor: params.cursor }, `cursor ${JSON.stringify(params.cursor)} is not one this agent gave`);
    const chats = ws.chats.list({ limit: offset + LIST_PAGE + 1, sortBy: 'updatedAt', ...(params.cwd ? { folder: resolve(params.cwd) } : {}) });
    const page = chats.slice(offset, offset + LIST_PAGE);
    const unrecorded = ws.roots[0]!;
    return {
      sessions: page.map((c) => ({
        sessionId: c.id,
        cwd: c.folder ?? unrecorded,
        ...(c.additionalFolders?.length ? { additionalDirectories: c.additionalFolders } : {}),
        ...(c.title ? { title: c.title } : {}),
        ...(c.updatedAt ? { updatedAt: new Date(c.updatedAt).toISOString() } : {}),
        ...(c.folder ? {} : { _meta: { patchbay: { folderRecorded: false } } }),
      })),
      ...(chats.length > offset + LIST_PAGE ? { nextCursor: String(offset + LIST_PAGE) } : {}),
    };
  }

  /**
   * `session/close`: its turn is stopped (as by `session/cancel`), its own MCP servers stopped, and
   * it is forgotten here. The chat stays in the store: `session/load` opens it again.
   */
  private async closeSession(sessionId: string): Promise<Record<string, never>> {
    const s = this.session(sessionId);
    this.cancel(s.id);
    this.sessionServers(s, []);
    this.sessions.delete(s.id);
    // Its folders leave the workspace unless another open session uses them.
    this.roots.delete(s.id);
    await this.followRoots(s.ws);
    return {};
  }

  /** `session/resume`: the stored chat made live again without its replay (unlike `session/load`); the next prompt continues it. */
  private async resumeSession(params: ResumeSessionRequest): Promise<ResumeSessionResponse> {
    const roots = this.sessionRoots(params);
    const ws = await this.workspace(roots);
    await ws.modelsReady;
    const prior = this.sessions.get(params.sessionId);
    const opened = ws.chats.resume(params.sessionId);
    if (!opened) throw RequestError.sessionNotFound(params.sessionId);
    // A session live here already keeps what its client was told (its tool calls); resumed after a restart, it starts afresh.
    const s = prior ?? this.addSession(params.sessionId, ws, roots, { agent: 'code', variant: null });
    Object.assign(s, { cwd: roots.cwd, additional: roots.additional });
    // Its folders are inside from now on, as a load's are.
    this.roots.set(s.id, roots);
    ws.chats.recordFolders(s.id, { folder: roots.cwd, additionalFolders: roots.additional });
    await this.followRoots(ws);
    if (!s.running) s.choice = choiceOf(opened);
    this.sessionServers(s, params.mcpServers ?? []);
    setImmediate(() => this.sendCommands(s));
    return { modes: modeState(s.choice.agent), configOptions: this.options(s) };
  }

  /** `session/delete`: its turn stopped, its chat and its subagents' removed from the store (`session/list` no longer has it), its own MCP servers stopped. */
  private async deleteSession(sessionId: string): Promise<Record<string, never>> {
    const ws = this.sessions.get(sessionId)?.ws ?? (await this.storeWorkspace());
    // A subagent's chat is not a session (it is listed and loaded only inside its parent's).
    if (!ws.chats.resume(sessionId)) throw RequestError.sessionNotFound(sessionId);
    // Another editor's patchbay on the same store runs a turn in it: deleting it under that turn would fail it and every later prompt there.
    const elsewhere = ws.store.runningElsewhere(sessionId);
    if (elsewhere !== undefined) throw RequestError.invalidRequest({ sessionId, pid: elsewhere }, runningElsewhereText(sessionId, elsewhere));
    if (this.sessions.has(sessionId)) this.cancel(sessionId);
    // core's `deleted` event forgets the session here.
    ws.chats.delete(sessionId);
    return {};
  }

  private addSession(id: string, ws: Workspace, roots: SessionRootSet, choice: SessionChoice): Session {
    const s: Session = {
      id,
      cwd: roots.cwd,
      additional: roots.additional,
      ws,
      choice,
      translator: new AcpTranslator(),
      own: new Set(),
      running: false,
      cancelPending: false,
      replaying: false,
      asks: new Set(),
    };
    this.sessions.set(id, s);
    return s;
  }

  private session(id: string): Session {
    const s = this.sessions.get(id);
    if (!s) throw RequestError.sessionNotFound(id);
    return s;
  }

  private options(s: Session) {
    return configOptions(s.choice, s.ws.models, s.ws.defaultModel);
  }

  /** `set_mode` and `set_config_option`: the choice applies from the next prompt, as ECA's selection does. */
  private choose(sessionId: string, configId: string, value: unknown) {
    const s = this.session(sessionId);
    s.choice = applyOption(s.choice, configId, value, s.ws.models);
    if (configId === 'mode') {
      if (s.ws.chats.hasChat(s.id)) s.ws.chats.selectAgent(s.id, s.choice.agent);
      this.send(s, { sessionUpdate: 'current_mode_update', currentModeId: s.choice.agent });
    } else if (configId === 'model' && s.choice.model && s.ws.chats.hasChat(s.id)) {
      s.ws.chats.selectModel(s.id, s.choice.model, s.choice.variant ?? undefined);
    } else if (configId === 'variant' && s.ws.chats.hasChat(s.id)) {
      // Stored at once, as mode and model are, so a restart keeps it; with the model it is one of
      // (a session never prompted has none stored, and a variant read back without one is none).
      // That model is the session's from now on, here as in the store, so what is shown is what runs.
      const model = s.choice.model ?? s.ws.defaultModel?.id;
      if (model) {
        s.choice = { ...s.choice, model };
        s.ws.chats.selectModel(s.id, model, s.choice.variant);
      }
    }
    return this.options(s);
  }

  /**
   * The session's own MCP servers (`mcpServers`: the editor's, e.g. JetBrains' "Pass custom MCP
   * servers"): started for this chat only, beside the configured ones, never written to a config.
   * Not awaited: the first prompt waits for them as for configured servers; a failed start is logged.
   */
  private sessionServers(s: Session, servers: McpServer[]): void {
    if (!servers.length && !s.hadServers) return;
    s.hadServers = servers.length > 0;
    s.ws.addChatServers(s.id, servers.map(chatServer)).catch((e: unknown) => log.warn(`session ${s.id}: MCP servers: ${errorMessage(e)}`));
  }

  // ── prompts ─────────────────────────────────────────────────────────────────

  private async prompt(params: PromptRequest, signal: AbortSignal): Promise<PromptResponse> {
    const s = this.session(params.sessionId);
    if (s.running) throw RequestError.invalidRequest({ sessionId: s.id }, 'a prompt is already running in this session: wait for its answer or send session/cancel');
    if (!s.ws.store.getChat(s.id)) {
      // Deleted by another patchbay process on the same store: nothing is left to continue. It is
      // forgotten here as a delete here would (its live chat, servers and folders).
      s.ws.chats.delete(s.id);
      throw RequestError.sessionNotFound(s.id);
    }
    const { message, contexts } = promptParts(params.prompt);
    s.running = true;
    s.cancelPending = false;
    const stop = () => this.cancel(s.id);
    signal.addEventListener('abort', stop);
    try {
      await s.ws.modelsReady;
      this.tellConfigProblems(s);
      const contentId = newId();
      s.own.add(contentId);
      const handle = s.ws.chats.prompt({
        chatId: s.id,
        message,
        ...(contexts.length ? { contexts } : {}),
        agent: s.choice.agent,
        ...(s.choice.model ? { model: s.choice.model } : {}),
        variant: s.choice.variant,
        contentId,
        folder: s.cwd,
        ...(s.additional.length ? { additionalFolders: s.additional } : {}),
      });
      if (handle.status === 'noModel') {
        // Said as ACP's auth_required, so the client offers its login (initialize's authMethods).
        // The chat's own text: it names a provider held back by trust rather than none configured.
        const why = (await handle.done.catch(() => undefined))?.error;
        throw RequestError.authRequired({ authMethods: authMethods(this.caps) }, why ?? noModelMessage());
      }
      const outcome = await handle.done;
      await this.lastWrite;
      // ACP has no error stop reason: a failed turn is an error answer with core's message.
      if (outcome.stopReason === 'error') throw RequestError.internalError({ stopReason: 'error' }, outcome.error ?? 'the turn failed');
      return { stopReason: outcome.stopReason };
    } finally {
      signal.removeEventListener('abort', stop);
      s.running = false;
      s.cancelPending = false;
    }
  }

  private cancel(sessionId: string): void {
    const s = this.sessions.get(sessionId);
    if (!s) return log.warn(`session/cancel for unknown session ${sessionId}`);
    // ACP: pending permission requests are answered `cancelled`; ours are withdrawn too.
    for (const ask of s.asks) ask.abort();
    if (s.running) s.cancelPending = true;
    s.ws.chats.stop(s.id);
  }

  /** Config errors and held-back settings of the workspace, said once, in the first answer (ACP has no message outside a session). */
  private tellConfigProblems(s: Session): void {
    if (this.toldConfig) return;
    this.toldConfig = true;
    const lines = [...s.ws.configErrors.flatMap((e) => (e.severity !== 'warning' ? [`Invalid config in ${e.source}${e.key ? ` at ${e.key}` : ''}: ${e.message}`] : [])), ...s.ws.heldBackMessages()];
    for (const text of lines) this.send(s, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${text}\n\n` } });
  }

  // ── events ──────────────────────────────────────────────────────────────────

  /** Where core's events go for one workspace. */
  private events(wsRef: { ws?: Workspace }): ChatEvents {
    return {
      event: (chatId, e, parentChatId) => this.onEvent(wsRef.ws, chatId, e, parentChatId),
      opened: () => undefined,
      cleared: () => undefined,
      deleted: (chatId) => {
        this.sessions.delete(chatId);
        if (this.roots.delete(chatId) && wsRef.ws) void this.followRoots(wsRef.ws);
      },
      showMessage: (type, message) => (type === 'error' ? log.error(message) : log.warn(message)),
    };
  }

  /** The session a chat's events go to: its own, or for a subagent's chat the session of the chat that spawned it. */
  private route(ws: Workspace | undefined, chatId: string, parentChatId?: string): { s: Session; child: boolean } | undefined {
    const own = this.sessions.get(chatId);
    if (own && parentChatId === undefined) return { s: own, child: false };
    let id: string | undefined = parentChatId ?? ws?.chats.parentOf(chatId);
    for (let depth = 0; id !== undefined && depth < 16; depth++) {
      const s = this.sessions.get(id);
      if (s) return { s, child: true };
      id = ws?.chats.parentOf(id);
    }
    return undefined;
  }

  private onEvent(ws: Workspace | undefined, chatId: string, e: ChatEvent, parentChatId?: string): void {
    const route = this.route(ws, chatId, parentChatId);
    if (!route) return;
    const { s, child } = route;
    if (!child && e.type === 'status' && e.status === 'running' && s.cancelPending) s.ws.chats.stop(s.id);
    const compaction = this.caps.session?.compaction != null;
    for (const u of s.translator.translate(e, { replay: s.replaying, ownMessages: s.own, compaction }, child ? chatId : undefined)) this.send(s, u);
    if (e.type === 'toolCall' && e.state === 'announced' && e.needsApproval && !e.replayed && !s.replaying) void this.askPermission(s, chatId, e, child);
  }

  private send(s: Session, update: SessionUpdate): void {
    if (this.exited) return;
    this.lastWrite = this.conn.client.notify(methods.client.session.update, { sessionId: s.id, update }).catch((e: unknown) => log.debug(`session/update not sent: ${errorMessage(e)}`));
  }

  /** The available commands (native, custom, skills, MCP prompts), sent again only when they changed. */
  private sendCommands(s: Session): void {
    const list = availableCommands(s.ws.commands.query(''));
    const key = JSON.stringify(list);
    if (key === s.commands) return;
    s.commands = key;
    this.send(s, { sessionUpdate: 'available_commands_update', availableCommands: list });
  }

  // ── approvals ───────────────────────────────────────────────────────────────

  /** This client as a front end of each workspace's port, by port. */
  private readonly attachments = new Map<FrontEndPort, Attachment>();
  /** Open permission requests by chat and tool call: withdrawn when another front end answers first. */
  private readonly permissionAsks = new Map<string, AbortController>();

  /** A call that needs approval: ask the client (`session/request_permission`) and answer core. */
  private async askPermission(s: Session, chatId: string, e: Extract<ToolCallEvent, { state: 'announced' }>, child: boolean): Promise<void> {
    const id = toolCallIdOf(e.id, child ? chatId : undefined);
    // Through the port: the first answer from any front end wins.
    const answer = (approved: boolean, forSession = false) => s.ws.port.answer(chatId, e.id, { kind: 'approval', approved, forSession }, this.attachments.get(s.ws.port));
    const ask = new AbortController();
    const key = `${chatId}\u0000${e.id}`;
    s.asks.add(ask);
    this.permissionAsks.set(key, ask);
    try {
      const params: RequestPermissionRequest = { sessionId: s.id, toolCall: { ...toolCallFields(e, id), status: 'pending' }, options: [...PERMISSION_OPTIONS] };
      const r = await this.conn.client.request(methods.client.session.requestPermission, params, { cancellationSignal: ask.signal, stopWaitingOnCancel: true });
      const choice = r.outcome.outcome === 'selected' ? r.outcome.optionId : 'cancelled';
      if (choice === 'allow' || choice === 'allow-always') answer(true, choice === 'allow-always');
      else answer(false, choice === 'reject-always');
    } catch (err) {
      // Withdrawn by a cancel: the stop already settled the call. Otherwise (the client failed the
      // request or is gone) there is no answer to use, and the call does not run.
      if (ask.signal.aborted) return;
      log.warn(`session ${s.id}: permission request for ${e.name} failed: ${errorMessage(err)}`);
      answer(false);
    } finally {
      s.asks.delete(ask);
      if (this.permissionAsks.get(key) === ask) this.permissionAsks.delete(key);
    }
  }

  // ── workspaces ──────────────────────────────────────────────────────────────

  /** A session request's folders, checked (session-roots.ts); `session/resume` uses the same. */
  private sessionRoots(params: SessionRootParams): SessionRootSet {
    return sessionRoots(params, (this.opts.env ?? process.env).HOME || homedir());
  }

  /**
   * The process's workspace. One per process, as ARCHITECTURE.md "Façades" requires (a workspace
   * owns the store, the listeners and the published env): the first session's folders make it,
   * and from then on its folders follow the open sessions' (`followRoots`).
   */
  private workspace(roots: SessionRootSet): Promise<Workspace> {
    return this.ws ?? this.startWorkspace(workspaceFolders([roots]));
  }

  /** The workspace for reading the store (`session/list`): made in the agent's own folder when none exists yet (session-roots.ts `agentFolder`). */
  private storeWorkspace(): Promise<Workspace> {
    if (this.ws) return this.ws;
    const env = this.opts.env ?? process.env;
    return this.startWorkspace([agentFolder(process.cwd(), env, env.HOME || homedir())]);
  }

  private startWorkspace(roots: string[]): Promise<Workspace> {
    const ws = this.createWorkspace(roots);
    this.ws = ws;
    ws.catch((e: unknown) => {
      log.error(`could not start the workspace ${roots.join(', ')}: ${errorMessage(e)}`);
      if (this.ws === ws) this.ws = undefined;
    });
    return ws;
  }

  /**
   * Makes the workspace's folders those the open sessions need (session-roots.ts): one change at
   * a time, each computed when it runs, so the last one matches the sessions open then.
   */
  private followRoots(ws: Workspace): Promise<void> {
    const next = this.rootsChange.then(async () => {
      const change = this.roots.change(ws.roots);
      if (!change.added.length && !change.removed.length) return;
      log.info(
        `workspace folders follow the sessions: ${change.added.length ? `adding ${change.added.join(', ')}` : ''}${change.added.length && change.removed.length ? '; ' : ''}${change.removed.length ? `removing ${change.removed.join(', ')}` : ''}`,
      );
      const done = await ws.changeRoots(change);
      for (const w of done.warnings) log.warn(w);
    });
    this.rootsChange = next.catch((e: unknown) => log.warn(`workspace folders not changed: ${errorMessage(e)}`));
    return this.rootsChange;
  }

  private async createWorkspace(roots: string[]): Promise<Workspace> {
    const { Workspace } = await import('../../runtime/workspace.js');
    const ref: { ws?: Workspace } = {};
    const frontEnd = this.frontEnd();
    // The port this client attaches to (a process Host hands in its own).
    const port = new FrontEndPort();
    this.attachments.set(
      port,
      port.attach(
        sinkFrontEnd({
          name: 'acp',
          capabilities: { images: true, ask: true, elicitation: frontEnd.ask !== undefined, files: frontEnd.files !== undefined, terminal: frontEnd.terminal !== undefined },
          workspace: () => ref.ws,
          ...(frontEnd.ask ? { ask: frontEnd.ask } : {}),
          events: this.events(ref),
          onToolServer: () => this.commandsChanged(ref.ws),
          onModelsChanged: (w) => this.modelsChanged(w),
          onNotice: (type, message) => (type === 'error' ? log.error(message) : log.info(message)),
          // Another front end answered a call this client was asked about: the request is withdrawn.
          onAnswered: (n) => (n.kind === 'approval' ? this.permissionAsks.get(`${n.chatId}\u0000${n.id}`)?.abort() : undefined),
        }),
      ),
    );
    const ws = await Workspace.create({
      roots,
      env: this.opts.env ?? process.env,
      configFile: this.opts.configFile,
      logLevel: this.opts.logLevel,
      port,
      frontEnd: { ...frontEnd, ...(frontEnd.ask ? { ask: port.askUser } : {}) },
    });
    ref.ws = ws;
    ws.startSession();
    void ws.startServers();
    for (const { peer, started } of ws.startListeners()) void started.catch((e: unknown) => log.warn(`${peer}: ${errorMessage(e)}`));
    for (const ix of ws.indexes) void ix.warm();
    ws.watchConfig();
    log.info(`workspace ready for ${roots.join(', ')}`);
    return ws;
  }

  /** What this client lets the runtime do: ask (always), show diffs (always), and read and write files through its buffers when it offers that. */
  private frontEnd(): FrontEnd {
    const fs = this.caps.fs ?? {};
    const files: FrontEnd['files'] = {
      ...(fs.readTextFile
        ? {
            readTextFile: async (r) => (await this.conn.client.request(methods.client.fs.readTextFile, { sessionId: this.sessionIdOf(r.chatId), path: r.path }, withDeadline(r.signal))).content,
          }
        : {}),
      ...(fs.writeTextFile
        ? {
            writeTextFile: async (r) => {
              await this.conn.client.request(methods.client.fs.writeTextFile, { sessionId: this.sessionIdOf(r.chatId), path: r.path, content: r.content }, withDeadline(r.signal));
            },
          }
        : {}),
    };
    const terminal: FrontEnd['terminal'] = (req) => {
      const sessionId = this.sessionIdOf(req.chatId);
      // The call shows the live terminal (ACP tool-calls.mdx "Terminals"): its id as the call's content.
      const show = (terminalId: string) => {
        const s = this.sessions.get(sessionId);
        if (s && req.toolCallId) this.send(s, s.translator.terminal(toolCallIdOf(req.toolCallId, req.chatId === sessionId ? undefined : req.chatId), terminalId));
      };
      return runTerminal(
        sdkTerminalClient((p) => this.conn.client.createTerminal(p)),
        { ...req, sessionId },
        show,
      );
    };
    const ask = acpAsk(
      this.caps,
      () => this.conn.client,
      (chatId, toolCallId) => {
        const sessionId = this.sessionIdOf(chatId);
        return { sessionId, ...(toolCallId ? { toolCallId: toolCallIdOf(toolCallId, chatId === sessionId ? undefined : chatId) } : {}) };
      },
    );
    return { canAsk: true, canShowDiffs: true, ...(fs.readTextFile || fs.writeTextFile ? { files } : {}), ...(this.caps.terminal ? { terminal } : {}), ...(ask ? { ask } : {}) };
  }

  /** The session a chat's editor requests belong to (a subagent's: its root session's). */
  private sessionIdOf(chatId: string): string {
    for (const s of this.sessions.values()) if (this.route(s.ws, chatId)?.s === s) return s.id;
    throw new Error(`no ACP session for chat ${chatId}`);
  }

  private commandsChanged(ws: Workspace | undefined): void {
    for (const s of this.sessions.values()) if (s.ws === ws) this.sendCommands(s);
  }

  private modelsChanged(ws: Workspace): void {
    for (const s of this.sessions.values()) if (s.ws === ws) this.send(s, { sessionUpdate: 'config_option_update', configOptions: this.options(s) });
  }

  // ── exit ────────────────────────────────────────────────────────────────────

  private exit(code: number, why: string): void {
    if (this.exited) return;
    this.exited = true;
    log.info(`exiting (${why}) with code ${code}`);
    for (const s of this.sessions.values()) for (const ask of s.asks) ask.abort();
    // A server whose client is gone must not linger: every workspace gets the dispose deadline, then the process ends.
    void (this.ws ? disposeWithin(this.ws) : Promise.resolve()).finally(() => {
      this.conn.close();
      this.opts.onExit(code);
    });
  }
}

/** A request to the client that the tool's stop withdraws, and that is given up on after FS_REQUEST_TIMEOUT_MS. */
function withDeadline(signal: AbortSignal): { cancellationSignal: AbortSignal; stopWaitingOnCancel: true } {
  return { cancellationSignal: AbortSignal.any([signal, AbortSignal.timeout(FS_REQUEST_TIMEOUT_MS)]), stopWaitingOnCancel: true };
}

/** An ACP `McpServer` as the runtime's (ACP sends env and headers as name/value lists). */
function chatServer(m: McpServer): ChatMcpServer {
  const pairs = (xs: Array<{ name: string; value: string }>) => Object.fromEntries(xs.map((x) => [x.name, x.value]));
  if ('type' in m && (m.type === 'http' || m.type === 'sse')) return { name: m.name, transport: m.type, url: m.url, headers: pairs(m.headers) };
  const stdio = m as Extract<McpServer, { command: string }>;
  return { name: stdio.name, transport: 'stdio', command: stdio.command, args: stdio.args, env: pairs(stdio.env) };
}

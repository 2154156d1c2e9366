/**
 * The ACP façade (Agent Client Protocol v1, newline-delimited JSON-RPC over stdio): `patchbay acp`
 * for Zed, JetBrains, Neovim and Emacs agent-shell. A translator over the workspace runtime and
 * core's chat events, as the ECA façade (../eca/server.ts) is: the same chats, tools, peers and store,
 * so a chat started over ECA is a session here (its id is the session id) and the other way round.
 *
 * The SDK (`@agentclientprotocol/sdk`) owns the wire: framing, validation of every inbound params
 * object against ACP's schema (−32602 before a handler runs), the initialize gate (−32600 before
 * it), unknown methods (−32601). This file owns the sessions.
 *
 * Sessions: one Host per process (the store, logging, the environment), and a workspace per set
 * of session folders taken from it (session-workspaces.ts): a session's `cwd` and
 * `additionalDirectories` select the workspace it works in, with that folder's config, trust,
 * containment and peers; sessions with the same folders share one, and the last of them closing
 * disposes it. A session is a chat id with the agent/model/variant the client chose, stored from
 * `session/new` on (empty until its first prompt), so it can be loaded or resumed after a restart.
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
import { noModelMessage } from '../../core/turn/no-model.js';
import { runningElsewhereText } from '../../core/persistence.js';
import type { Workspace, FrontEnd } from '../../runtime/workspace.js';
import type { ServerOptions } from '../shared/server-options.js';
import type { Host, WorkspaceOpenOptions } from '../../runtime/host.js';
import type { ChatRecord } from '../../core/persistence.js';
import type { ChatMcpServer } from '../../shapes/chat-servers.js';
import { errorMessage, logger } from '../../util/log.js';
import { deadline, durationText, msFromEnv, timeoutError } from '../../util/deadline.js';
import { AcpTranslator, toolCallFields, toolCallIdOf } from './updates.js';
import { promptParts } from './prompt-content.js';
import { applyOption, choiceOf, configOptions, modeState, type SessionChoice } from './session-options.js';
import { availableCommands } from './commands.js';
import { disposeWithin } from '../shared/dispose-within.js';
import { runTerminal, sdkTerminalClient } from './terminal.js';
import { acpAsk } from './ask.js';
import { logoutAll } from './logout.js';
import { patchbayVersion } from '../../util/version.js';
import { agentFolder, sessionRoots, type SessionRootParams, type SessionRootSet } from './session-roots.js';
import { SessionWorkspaces, sessionWorkspaceRoots } from './session-workspaces.js';
import { cappedLines } from './line-cap.js';
import type { Attachment } from '../../core/chat/port.js';

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
  /** Its `additionalDirectories` (resolved): inside its workspace while it is open. */
  additional: string[];
  /** The workspace of its folders (session-workspaces.ts holds it for the session). */
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
  /** The process's host, once a request needed the store or a workspace. */
  private host: Promise<Host> | undefined;
  /** The workspace each session holds (session-workspaces.ts), taken from the host. */
  private readonly held = new SessionWorkspaces({
    acquire: (roots) => this.acquire(roots),
    release: (ws) => this.release(ws),
  });
  /** The workspaces whose start-up (servers, listeners, config watch) has run. */
  private readonly started = new WeakSet<Workspace>();
  private readonly sessions = new Map<string, Session>();
  /** The last notification written: a prompt is answered only after every update before it. */
  private lastWrite: Promise<void> = Promise.resolve();
  private exited = false;
  /** The workspaces whose config problems were told (once each, in the first answer of a prompt there). */
  private readonly toldConfig = new WeakSet<Workspace>();

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
      .onRequest(methods.agent.logout, () => this.logout())
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
    const open = this.held.workspaces();
    // No session yet: nothing is loaded to check against; the next session/new reads the logins afresh.
    if (!open.length) return {};
    for (const ws of open) await ws.refreshLogins();
    if (open.some((ws) => ws.models.length)) return {};
    throw RequestError.authRequired({ authMethods: authMethods(this.caps) }, noModelMessage(open[0]!.heldModelMessages()));
  }

  /** `logout`: every stored login forgotten (logout.ts), and every open workspace's models re-resolved without them. */
  private async logout(): Promise<Record<string, never>> {
    const ws = await this.anyWorkspace();
    await logoutAll(ws);
    for (const other of this.held.workspaces()) if (other !== ws) await other.refreshLogins();
    return {};
  }

  // ── sessions ────────────────────────────────────────────────────────────────

  private async newSession(params: NewSessionRequest): Promise<NewSessionResponse> {
    const roots = this.sessionRoots(params);
    const id = newId();
    const ws = await this.held.hold(id, roots);
    const s = this.addSession(id, ws, roots, { agent: ws.config.chat.defaultAgent === 'plan' ? 'plan' : 'code', variant: null });
    try {
      await ws.modelsReady;
    } catch (e) {
      await this.forget(s.id);
      throw e;
    }
    // Stored now, so it can be loaded or resumed after a restart before its first prompt.
    // Its own folders (core/chat/chat-roots.ts): relative paths and commands in its cwd, whichever session opened the workspace first.
    ws.chats.create(s.id, {
      agent: s.choice.agent,
      folder: roots.cwd,
      ...(roots.additional.length ? { additionalFolders: roots.additional } : {}),
      cwd: roots.cwd,
      roots: sessionWorkspaceRoots(roots),
    });
    this.sessionServers(s, params.mcpServers);
    setImmediate(() => this.sendCommands(s));
    return { sessionId: s.id, modes: modeState(s.choice.agent), configOptions: this.options(s) };
  }

  /**
   * Sessions being loaded or resumed: a prompt for one is refused until that answers, so no turn
   * starts in the workspace the session is leaving (which the move may dispose under it).
   */
  private readonly moving = new Set<string>();

  /** Runs a load or resume with the session marked as moving (one at a time per session). */
  private async whileMoving<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    if (this.moving.has(sessionId)) throw RequestError.invalidRequest({ sessionId }, 'this session is already being loaded: wait for that answer');
    this.moving.add(sessionId);
    try {
      return await work();
    } finally {
      this.moving.delete(sessionId);
    }
  }

  private loadSession(params: LoadSessionRequest): Promise<LoadSessionResponse> {
    return this.whileMoving(params.sessionId, () => this.loadMoving(params));
  }

  private async loadMoving(params: LoadSessionRequest): Promise<LoadSessionResponse> {
    const roots = this.sessionRoots(params);
    if (this.sessions.get(params.sessionId)?.running) throw RequestError.invalidRequest({ sessionId: params.sessionId }, 'this session has a prompt running: cancel it before loading it again');
    // An unknown id takes no workspace (and a session loaded before keeps the one it has).
    await this.storedSession(params.sessionId);
    const ws = await this.held.hold(params.sessionId, roots);
    await ws.modelsReady;
    const prior = this.sessions.get(params.sessionId);
    if (prior?.running) throw RequestError.invalidRequest({ sessionId: params.sessionId }, 'this session has a prompt running: cancel it before loading it again');
    const s = this.addSession(params.sessionId, ws, roots, { agent: 'code', variant: null });
    // The servers the session had are the reload's to keep or stop (in its new workspace, none yet).
    if (prior && prior.ws !== ws) this.leaveWorkspace(prior);
    else if (prior?.hadServers) s.hadServers = true;
    // core replays the stored chat through the events before `open` returns (core/chat/chats.ts `open`).
    s.replaying = true;
    let opened;
    try {
      opened = ws.chats.open(params.sessionId);
    } finally {
      s.replaying = false;
    }
    if (!opened) {
      // Gone meanwhile (deleted by another process): a session loaded before keeps nothing of it, its workspace is let go.
      await this.forget(params.sessionId);
      throw RequestError.sessionNotFound(params.sessionId);
    }
    // A chat from before folders were recorded gets this one.
    // ACP: the additional list given is the whole list now (none when omitted), as session/list reports it.
    ws.chats.recordFolders(s.id, { folder: roots.cwd, additionalFolders: roots.additional });
    ws.chats.useRoots(s.id, { cwd: roots.cwd, roots: sessionWorkspaceRoots(roots) });
    s.choice = choiceOf(opened);
    this.sessionServers(s, params.mcpServers);
    setImmediate(() => this.sendCommands(s));
    // ACP: the answer comes once the whole conversation has been streamed.
    await this.lastWrite;
    return { modes: modeState(s.choice.agent), configOptions: this.options(s) };
  }

  /**
   * `session/list` reads the host's store only: it opens no workspace and changes no trust. With
   * a `cwd`, the chats whose recorded folder is it or lies inside it; a chat from before folders
   * were recorded has none, so it is listed only without a `cwd`, under the agent's own folder
   * (session-roots.ts `agentFolder`) with `_meta.patchbay.folderRecorded: false` (`session/load`
   * records the folder it is loaded in).
   */
  private async listSessions(params: ListSessionsRequest): Promise<ListSessionsResponse> {
    if (params.cwd && !isAbsolute(params.cwd)) throw RequestError.invalidParams({ cwd: params.cwd }, `cwd must be an absolute path, got ${JSON.stringify(params.cwd)}`);
    const offset = params.cursor ? Number.parseInt(params.cursor, 10) : 0;
    if (!Number.isInteger(offset) || offset < 0) throw RequestError.invalidParams({ cursor: params.cursor }, `cursor ${JSON.stringify(params.cursor)} is not one this agent gave`);
    const store = (await this.openHost()).store;
    const chats: ChatRecord[] = store.listChats({ limit: offset + LIST_PAGE + 1, sortBy: 'updatedAt', ...(params.cwd ? { folder: resolve(params.cwd) } : {}) });
    const page = chats.slice(offset, offset + LIST_PAGE);
    const unrecorded = this.agentFolder();
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
    // A workspace that stays (another session uses it) keeps no copy of the chat to fall behind a later load elsewhere.
    s.ws.chats.forget(s.id);
    // Its workspace is let go of: the last session of it closing disposes it (its MCP servers stop),
    // which the answer does not wait for.
    void this.forget(s.id);
    return {};
  }

  /** `session/resume`: the stored chat made live again without its replay (unlike `session/load`); the next prompt continues it. */
  private resumeSession(params: ResumeSessionRequest): Promise<ResumeSessionResponse> {
    return this.whileMoving(params.sessionId, () => this.resumeMoving(params));
  }

  private async resumeMoving(params: ResumeSessionRequest): Promise<ResumeSessionResponse> {
    const roots = this.sessionRoots(params);
    // An unknown id (or a subagent's) takes no workspace and leaves a live session as it was.
    await this.storedSession(params.sessionId);
    const prior = this.sessions.get(params.sessionId);
    // A running turn's tools must not move to other folders under it.
    if (prior?.running && sessionWorkspaceRoots(prior).join('\0') !== sessionWorkspaceRoots(roots).join('\0'))
      throw RequestError.invalidRequest({ sessionId: prior.id }, 'this session has a prompt running: its folders cannot change until it ends (cancel it, or resume it with the folders it has)');
    const ws = prior?.running ? prior.ws : await this.held.hold(params.sessionId, roots);
    await ws.modelsReady;
    const opened = ws.chats.resume(params.sessionId);
    if (!opened) {
      if (!prior) await this.forget(params.sessionId);
      throw RequestError.sessionNotFound(params.sessionId);
    }
    // A session live here already keeps what its client was told (its tool calls); resumed after a restart, it starts afresh.
    if (prior && prior.ws !== ws) this.leaveWorkspace(prior);
    const s = prior ?? this.addSession(params.sessionId, ws, roots, { agent: 'code', variant: null });
    Object.assign(s, { ws, cwd: roots.cwd, additional: roots.additional });
    ws.chats.recordFolders(s.id, { folder: roots.cwd, additionalFolders: roots.additional });
    if (!s.running) ws.chats.useRoots(s.id, { cwd: roots.cwd, roots: sessionWorkspaceRoots(roots) });
    if (!s.running) s.choice = choiceOf(opened);
    this.sessionServers(s, params.mcpServers ?? []);
    setImmediate(() => this.sendCommands(s));
    return { modes: modeState(s.choice.agent), configOptions: this.options(s) };
  }

  /** `session/delete`: its turn stopped, its chat and its subagents' removed from the store (`session/list` no longer has it), its own MCP servers stopped. */
  private async deleteSession(sessionId: string): Promise<Record<string, never>> {
    const ws = this.sessions.get(sessionId)?.ws ?? (await this.anyWorkspace());
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
    if (this.moving.has(s.id)) throw RequestError.invalidRequest({ sessionId: s.id }, 'this session is being loaded: prompt it once session/load or session/resume has answered');
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
        // The chat's own folders (a workspace is shared by sessions with the same set of folders, in any order).
        cwd: s.cwd,
        roots: sessionWorkspaceRoots(s),
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
    if (this.toldConfig.has(s.ws)) return;
    this.toldConfig.add(s.ws);
    const { invalid, held } = s.ws.configProblems();
    const lines = [...invalid, ...held];
    for (const text of lines) this.send(s, { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${text}\n\n` } });
  }

  // ── events ──────────────────────────────────────────────────────────────────

  /** The session a chat's events go to: its own, or for a subagent's chat the session of the chat that spawned it. */
  private route(ws: Workspace | undefined, chatId: string, parentChatId?: string): { s: Session; child: boolean } | undefined {
    // A session's events come from its own workspace only (one it left may still hold its chat).
    const ours = (s: Session | undefined) => (s && (ws === undefined || s.ws === ws) ? s : undefined);
    const own = ours(this.sessions.get(chatId));
    if (own && parentChatId === undefined) return { s: own, child: false };
    let id: string | undefined = parentChatId ?? ws?.chats.parentOf(chatId);
    for (let depth = 0; id !== undefined && depth < 16; depth++) {
      const s = ours(this.sessions.get(id));
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

  /** This client as a front end of the host's port (every workspace of this process is this client's). */
  private attachment: Attachment | undefined;
  /** Open permission requests by chat and tool call: withdrawn when another front end answers first. */
  private readonly permissionAsks = new Map<string, AbortController>();

  /** A call that needs approval: ask the client (`session/request_permission`) and answer core. */
  private async askPermission(s: Session, chatId: string, e: Extract<ToolCallEvent, { state: 'announced' }>, child: boolean): Promise<void> {
    const id = toolCallIdOf(e.id, child ? chatId : undefined);
    // Through the port: the first answer from any front end wins.
    const answer = (approved: boolean, forSession = false) => s.ws.port.answer(chatId, e.id, { kind: 'approval', approved, forSession }, this.attachment);
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
    return sessionRoots(params, this.env().HOME || homedir());
  }

  private env(): NodeJS.ProcessEnv {
    return this.opts.env ?? process.env;
  }

  /** The agent's own folder (session-roots.ts `agentFolder`): where a workspace opens before any session, and the folder of chats that recorded none. */
  private agentFolder(): string {
    return agentFolder(process.cwd(), this.env(), this.env().HOME || homedir());
  }

  /** The process's host (runtime/host.ts): opened at the first request that needs the store; a failed open is tried again by the next. */
  private openHost(): Promise<Host> {
    if (this.host) return this.host;
    const host = import('../../runtime/host.js').then(({ Host }) =>
      Host.open({ env: this.env(), ...(this.opts.configFile ? { configFile: this.opts.configFile } : {}), ...(this.opts.logLevel ? { logLevel: this.opts.logLevel } : {}) }),
    );
    this.host = host;
    host.then((h) => this.attachTo(h)).catch(() => undefined);
    host.catch((e: unknown) => {
      log.error(`could not open patchbay's store: ${errorMessage(e)}`);
      if (this.host === host) this.host = undefined;
    });
    return host;
  }

  /** The host's workspace for these folders (one more reference), started once when it is new. */
  private async acquire(roots: string[]): Promise<Workspace> {
    const host = await this.openHost();
    let ws: Workspace;
    try {
      ws = await host.acquire(roots, this.openOptions(host));
    } catch (e) {
      log.error(`could not start the workspace ${roots.join(', ')}: ${errorMessage(e)}`);
      throw e;
    }
    this.start(ws);
    return ws;
  }

  /** What a workspace is opened with: this client's abilities (its questions go through the host's port: the first answer from any front end wins). */
  private openOptions(host: Host): WorkspaceOpenOptions {
    const frontEnd = this.frontEnd();
    return { frontEnd: { ...frontEnd, ...(frontEnd.ask ? { ask: host.port.askUser } : {}) } };
  }

  /**
   * This client as one front end of the host's port: every workspace of this process is this
   * client's, so nothing is filtered by workspace; an event's `source` (its workspace) picks the
   * session, as each session's events come from its own workspace only.
   */
  private attachTo(host: Host): void {
    if (this.attachment) return;
    const frontEnd = this.frontEnd();
    this.attachment = host.port.attach({
      name: 'acp',
      capabilities: { images: true, ask: true, elicitation: frontEnd.ask !== undefined, files: frontEnd.files !== undefined, terminal: frontEnd.terminal !== undefined },
      chatEvent: (x) => {
        const e = x.event;
        const ws = x.source as Workspace | undefined;
        if (e.type === 'chatOpened' || e.type === 'chatCleared') return;
        if (e.type === 'chatDeleted') {
          if (ws === undefined || this.sessions.get(x.chatId)?.ws === ws) void this.forget(x.chatId);
          return;
        }
        this.onEvent(ws, x.chatId, e, x.parentChatId);
      },
      notice: (n) => {
        switch (n.type) {
          case 'answered':
            // Another front end answered a call this client was asked about: the request is withdrawn.
            if (n.kind === 'approval') this.permissionAsks.get(`${n.chatId}\u0000${n.id}`)?.abort();
            return;
          case 'message':
            return n.level === 'error' ? log.error(n.text) : log.warn(n.text);
          case 'toolServer':
            return this.commandsChanged(n.workspace);
          case 'modelsChanged':
            return this.modelsChanged(n.workspace);
          case 'notice':
            return n.level === 'error' ? log.error(n.message) : log.info(n.message);
          default:
            return;
        }
      },
      ...(frontEnd.ask ? { ask: frontEnd.ask } : {}),
    });
  }

  /** One reference to a workspace given back to the host; the last one disposes it (a failure is logged: it never rejects). */
  private async release(ws: Workspace): Promise<void> {
    try {
      await (await this.host)?.release(ws);
    } catch (e) {
      log.warn(`stopping the workspace ${ws.roots.join(', ')}: ${errorMessage(e)}`);
    }
  }

  /** A new workspace's start-up, once (Workspace.start: its servers, listeners, session, file indexes and config watch). */
  private start(ws: Workspace): void {
    if (this.started.has(ws)) return;
    this.started.add(ws);
    // The runtime's start-up order (runtime/start.ts); config problems wait for the first answer (tellConfigProblems).
    ws.start({ servers: 'now', listenerFailed: (peer, e) => log.warn(`${peer}: ${errorMessage(e)}`) });
    log.info(`workspace ready for ${ws.roots.join(', ')}`);
  }

  /** A workspace for requests that need one outside any session (`session/delete`, `logout`): an open session's, else one in the agent's own folder. */
  private anyWorkspace(): Promise<Workspace> {
    return this.held.any(() => this.agentFolder());
  }

  /** Refuses an id that is no session's: unknown to the store, or a subagent's chat (it is loaded only inside its parent's). */
  private async storedSession(sessionId: string): Promise<void> {
    const rec = (await this.openHost()).store.getChat(sessionId);
    if (!rec || rec.parentChatId !== undefined) throw RequestError.sessionNotFound(sessionId);
  }

  /** The session is no longer open here: forgotten, and its workspace let go of (the last session of it closing disposes it). */
  private async forget(sessionId: string): Promise<void> {
    const s = this.sessions.get(sessionId);
    if (s) for (const ask of s.asks) ask.abort();
    this.sessions.delete(sessionId);
    await this.held.drop(sessionId);
  }

  /** A session loaded or resumed in other folders leaves the workspace it had: the MCP servers it brought there stop. */
  private leaveWorkspace(prior: Session): void {
    for (const ask of prior.asks) ask.abort();
    // Its chat is worked on in the new workspace: the old one must not keep a copy that falls behind.
    prior.ws.chats.forget(prior.id);
    if (prior.hadServers) prior.ws.removeChatServers(prior.id).catch((e: unknown) => log.warn(`session ${prior.id}: MCP servers: ${errorMessage(e)}`));
  }

  /** What this client lets the runtime do: ask (always), show diffs (always), and read and write files through its buffers when it offers that. */
  private frontEnd(): FrontEnd {
    const fs = this.caps.fs ?? {};
    const files: FrontEnd['files'] = {
      ...(fs.readTextFile
        ? {
            readTextFile: async (r) =>
              (await editorRequest('fs/read_text_file', r.signal, (o) => this.conn.client.request(methods.client.fs.readTextFile, { sessionId: this.sessionIdOf(r.chatId), path: r.path }, o))).content,
          }
        : {}),
      ...(fs.writeTextFile
        ? {
            writeTextFile: async (r) => {
              await editorRequest('fs/write_text_file', r.signal, (o) =>
                this.conn.client.request(methods.client.fs.writeTextFile, { sessionId: this.sessionIdOf(r.chatId), path: r.path, content: r.content }, o),
              );
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
    // A server whose client is gone must not linger: the host and every workspace of it get the dispose deadline, then the process ends.
    void (this.host ? disposeWithin(this.host) : Promise.resolve()).finally(() => {
      this.conn.close();
      this.opts.onExit(code);
    });
  }
}

/**
 * A request to the client that the tool's stop withdraws, and that is given up on after
 * FS_REQUEST_TIMEOUT_MS (PATCHBAY_ACP_FS_TIMEOUT_MS in tests) with an error saying so; either way
 * the client is sent `$/cancel_request` and a late answer is dropped.
 */
async function editorRequest<T>(method: string, signal: AbortSignal, send: (o: { cancellationSignal: AbortSignal; stopWaitingOnCancel: true }) => Promise<T>): Promise<T> {
  const ms = msFromEnv('PATCHBAY_ACP_FS_TIMEOUT_MS', FS_REQUEST_TIMEOUT_MS);
  const d = deadline(ms, signal);
  try {
    return await send({ cancellationSignal: d.signal, stopWaitingOnCancel: true });
  } catch (e) {
    if (d.expired) throw timeoutError(`the editor did not answer ${method} within ${durationText(ms)}`);
    throw e;
  } finally {
    d.clear();
  }
}

/** An ACP `McpServer` as the runtime's (ACP sends env and headers as name/value lists). */
function chatServer(m: McpServer): ChatMcpServer {
  const pairs = (xs: Array<{ name: string; value: string }>) => Object.fromEntries(xs.map((x) => [x.name, x.value]));
  if ('type' in m && (m.type === 'http' || m.type === 'sse')) return { name: m.name, transport: m.type, url: m.url, headers: pairs(m.headers) };
  const stdio = m as Extract<McpServer, { command: string }>;
  return { name: stdio.name, transport: 'stdio', command: stdio.command, args: stdio.args, env: pairs(stdio.env) };
}

/**
 * How a peer plugs into the workspace runtime (../../ARCHITECTURE.md "Peers"). A peer folder
 * exports one `PeerDefinition`; `src/peers/index.ts` lists them, and that line is all a new peer
 * adds outside its folder. The runtime creates each peer with a `PeerHost` (what the peer may use
 * of the workspace) and asks it for tools, contexts, commands and doctor lines through the
 * optional hooks of `Peer`.
 */
import type { XCache } from './xcache.js';
import type { ShareFn } from './shared.js';
import type { z } from 'zod';
import type { AskUser } from './ask.js';
import type { EditorDiagnostic, Tool } from './tool.js';
import type { ResourceContext } from './context.js';
import type { CommandSink, ToolSink } from './registry.js';
import type { EventStreamStore } from './event-stream.js';
import type { Logger, LogLevel } from '../util/log.js';
import type { SandboxPlan } from '../util/sandbox.js';

/** A tool server's state as front ends show it (ECA `tool/serverUpdated`, ACP has none yet). */
export interface ToolServerStatus {
  type: 'mcp' | 'lsp' | 'provider' | 'native';
  name: string;
  status: 'starting' | 'running' | 'stopped' | 'failed' | 'disabled' | 'requires-auth';
  command?: string;
  args?: string[];
  /** A remote server's address, in place of `command`. */
  url?: string;
  tools: Array<{ name: string; description: string; parameters: unknown }>;
  error?: string;
  /** The server's prompts (MCP `prompts/list`), when it has any. */
  prompts?: Array<{ name: string; description: string; arguments: Array<{ name: string; description: string; required: boolean }> }>;
  /** The server's resources (MCP `resources/list`), when it has any. */
  resources?: Array<{ uri: string; name: string; description: string; mimeType: string }>;
  /** Switched off in the config (`disabled: true`): it starts only when asked to. */
  disabled?: boolean;
  /** It holds an OAuth access token (the user signed in to it). */
  authorized?: boolean;
}

/** What the runtime lends a peer. Nothing here is ECA's: the same host serves every front end. */
export interface PeerHost<C> {
  /** This peer's slice of the merged config, validated by its schema. */
  config(): C;
  /** The workspace folders now (absolute; the first is the default for relative paths): read anew, they change at run time. */
  roots(): string[];
  /** PATCHBAY_HOME: private state (tokens, addresses, caches). */
  home: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** The configured log level (`logLevel`), for peers that pass it on (MCP servers' `logging/setLevel`). */
  logLevel(): LogLevel;
  tools: ToolSink;
  commands: CommandSink;
  /** The store's event streams (gateway pushes, readable by the model and by OpenCtx). */
  events: EventStreamStore;
  /** The language servers' `xcache/*` cache, kept by the store (made on first use). */
  xcache(): XCache;
  /** Whether the user trusts this folder's own settings and code (src/config/trust.ts). */
  trustedFolder(root: string): boolean;
  /** Where module paths in the user's config resolve from when the workspace is not trusted. */
  userConfigDir(): string;
  /** A tool server changed status or tools. */
  toolServer(status: ToolServerStatus): void;
  /** A tool server is no longer configured (its entry was removed) and has stopped. */
  toolServerRemoved?(name: string): void;
  /** The chats of the workspace, for peers that bind to a chat (gateway providers). */
  chats: {
    active(): Array<{ id: string; title?: string }>;
    /** Tools offered to one chat only; returns why some were refused ('' when none). */
    setTools(chatId: string, source: string, tools: Tool[]): string | undefined;
    /** Shown in the chat and kept in its history. */
    surface(chatId: string, text: string): void;
    /** For the model at the next turn boundary; starts a turn in an idle chat when `startTurn`. */
    inject(chatId: string, text: string, startTurn: boolean): void;
  };
  /** Files of the workspace matching a query (the @-mention search), as absolute or root-relative paths. */
  queryFiles(query: string): string[];
  /** Diagnostics the front end has (its editor's), when it has any. */
  editorDiagnostics(uri?: string): Promise<EditorDiagnostic[]>;
  /** Tool-server names the other peers own (configured MCP servers…): names this peer's servers may not take. */
  reservedServerNames(): string[];
  /** Every peer's resources, and reading one through the peer that offers it (the OpenCtx host serves them). */
  resources(): ResourceContext[];
  readResource(ctx: Pick<ResourceContext, 'server' | 'uri'>, signal: AbortSignal): Promise<string>;
  /** Puts a question to the user in a chat, when the front end can (MCP elicitation asks through it). */
  ask?: AskUser;
  /** Sets variables in the environment every process patchbay starts gets from now on (`env`; never `process.env`). */
  setEnv?(vars: Record<string, string | undefined>): void;
  /** What the workspaces of this process share, by key (one gateway listener for all): shapes/shared.ts. */
  share?: ShareFn;
  /**
   * How a configured server's process starts, asked at each start: in the OS sandbox (an entry of
   * a workspace's own config), refused (that, where the sandbox is required and cannot run), or
   * as it is (undefined, or a plan that is off: the user's own servers, or no sandbox under `auto`).
   */
  sandbox?(server: string): Promise<SandboxPlan | undefined>;
}

/** Workspace folders added and removed at run time (absolute paths). */
export interface RootsChange {
  added: string[];
  removed: string[];
}

/** One section of the doctor report. */
export interface DoctorSection {
  /** Lines as printed; a peer with nothing configured says so in one line. */
  lines: string[];
}

/** A running peer. Every hook is optional; `dispose` stops everything the peer started. */
export interface Peer {
  /** Called once the front end is ready (ECA `initialized`): listeners a peer serves. */
  start?(): Promise<void> | void;
  /**
   * Processes a peer runs (MCP servers): started after the front end has its first config, since
   * spawning them is CPU work that would delay it.
   */
  startServers?(): void;
  /**
   * The front end is ready and startServers will follow: servers a reload adds from now on may
   * start at once. Before it they are only registered (startServers starts those still configured).
   */
  serversTaskBegan?(): void;
  /** Start or stop one of this peer's servers by name; undefined when it has none by that name. */
  startServer?(name: string): Promise<void> | undefined;
  stopServer?(name: string): Promise<void> | undefined;
  /** Sign in to one of this peer's servers (OAuth in the browser), or forget its sign-in and restart it. */
  connectServer?(name: string): Promise<void> | undefined;
  logoutServer?(name: string): Promise<void> | undefined;
  /**
   * The config was reloaded (a file changed, a folder was trusted): take up what can be taken up live. Returns
   * the config paths it applied (e.g. `['mcpServers', 'github']`); the rest applies after a restart.
   */
  reconfigure?(): string[][];
  /**
   * Workspace folders were added or removed (`host.roots()` already holds the new set): take up
   * the new ones and let go of what belonged to the removed ones.
   */
  rootsChanged?(change: RootsChange): Promise<void> | void;
  /** Settles once what the last `reconfigure` began is done (servers stopped, starts begun). */
  reconfigured?(): Promise<void>;
  /** One of this peer's servers as front ends show it; undefined when it has none by that name. */
  serverStatus?(name: string): ToolServerStatus | undefined;
  /** The user removed this server: forget what is stored for it (OAuth credentials); undefined when not this peer's. */
  forgetServer?(name: string): Promise<void> | undefined;
  /** Extra waiting `start` does for a one-shot run (`patchbay doctor`), so statuses are real. */
  settle?(signal: AbortSignal): Promise<void>;
  dispose(): Promise<void>;
  /** Stop now: the process ends (shutdown ran past its deadline). */
  forceClose?(): void;
  doctor?(): Promise<DoctorSection>;
  /** Names of the tool servers this peer owns (configured, running or not). */
  serverNames?(): string[];
  /** Instructions for the system prompt. */
  instructions?(): string[];
  /** Waits (bounded, abortable) until the peer's tools are there for a turn, telling the chat. */
  toolsReady?(signal: AbortSignal, report: { progress(text: string): void; notice(text: string): void }): Promise<void>;
  /** Every resource this peer has, for the @-mention search to match against. */
  resources?(): ResourceContext[];
  /** Resources the peer itself matched to an @-mention query (its own search), bounded by its own deadline. */
  mentions?(query: string): Promise<ResourceContext[]>;
  /** Reads a resource this peer offers (its `server` is one of this peer's); undefined when it is not this peer's. */
  readContext?(ctx: Pick<ResourceContext, 'server' | 'uri'>, signal: AbortSignal): Promise<string> | undefined;
  /** Of resources referenced earlier, those whose content changed since. */
  updatedContexts?(refs: ResourceContext[]): ResourceContext[];
  /** Context this peer adds to a user message on its own ('' for none). */
  messageContext?(message: string, signal: AbortSignal): Promise<string>;
  /** Text to show beside a file's content when it is rendered for the model ('' for none). */
  annotate?(path: string, content: string, signal: AbortSignal): Promise<string>;
  /** Wraps a native tool (e.g. file tools tell the language servers what they touched). */
  wrapTool?(tool: Tool): Tool;
  /** A file was read for the model or mentioned. */
  fileTouched?(path: string): void;
  /** Diagnostics this peer has for a file (or all files). */
  diagnostics?(path?: string): EditorDiagnostic[];
  /** A chat started, went idle after a turn, or ended (was deleted). */
  chatStarted?(chatId: string): void;
  chatIdle?(chatId: string): void;
  chatEnded?(chatId: string): void;
}

/** The settings a peer owns: top-level config keys and their schemas (merged into the config schema). */
export type PeerConfigShape = Record<string, z.ZodType>;
export type PeerConfig<Shape extends PeerConfigShape> = z.output<z.ZodObject<Shape>>;

/**
 * What a peer's trust rule gets (src/config/held-back.ts): the untrusted layer as written, the
 * merged layers below it, and `hold` to keep a setting back until the user trusts the folder.
 */
export interface TrustRuleContext {
  layer: Record<string, unknown>;
  lower: Record<string, unknown>;
  /** The value at a path, or undefined. */
  get(o: unknown, ...path: string[]): unknown;
  /** The entries of the object at `path` in the layer (none when it is not an object). */
  entries(...path: string[]): Array<[string, unknown]>;
  hold(path: string[], detail?: string): void;
  /** `runs "cmd args"` or `connects to <url>` for a server entry. */
  describeServer(entry: unknown): string;
}

export interface PeerDefinition<Shape extends PeerConfigShape = PeerConfigShape> {
  /** Folder name, e.g. `mcp`. */
  name: string;
  config: Shape;
  /**
   * The full shape of entries `config` accepts loosely (validated one by one later, so one bad
   * entry stops only itself): unknown keys are reported against these (config/unknown-keys.ts).
   */
  checkedConfig?: PeerConfigShape;
  /**
   * Which of this peer's settings an untrusted workspace config may not set (they would run code,
   * send data elsewhere or widen a listener): called with the layer as written.
   */
  trustRule?(t: TrustRuleContext): void;
  /** Problems in this peer's merged settings, reported with the other config problems. */
  checkConfig?(config: Record<string, unknown>): Array<{ key: string; message: string }>;
  /**
   * The peer's code, loaded when a workspace is built (after the front end's handshake is answered:
   * start-up loads no peer code, only the config schemas above).
   */
  load(): Promise<(host: PeerHost<PeerConfig<Shape>>) => Peer>;
}

/** Typed helper for a peer's definition file. */
export function definePeer<Shape extends PeerConfigShape>(d: PeerDefinition<Shape>): PeerDefinition<Shape> {
  return d;
}

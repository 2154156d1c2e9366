/** The provider SDK's public types. Wire types come from src/protocol/gateway (never redefined here). */
import type { LifecycleState, PushLevel, SessionInfo, SessionLifecycleMessage } from '../protocol/gateway/index.js';
import type { BackoffOptions } from './backoff.js';

/**
 * Environment variables as the SDK reads them. Not `NodeJS.ProcessEnv`: the published types must
 * type-check in a project without @types/node (process.env still fits).
 */
export type ProviderEnv = Readonly<Record<string, string | undefined>>;

export type { LifecycleState, PushLevel, SessionInfo, SessionLifecycleMessage };

/** A JSON Schema object (`type: "object"`) describing a tool's arguments. */
export type JsonSchema = { type: 'object' } & Record<string, unknown>;

export interface PushOptions {
  /** EventStream name; defaults to the provider name. */
  stream?: string;
  metadata?: Record<string, unknown>;
}

export interface ToolCallContext {
  /** Aborted when the gateway cancels the call (`tool.cancel`: timeout, prompt stopped) or the connection goes. */
  signal: AbortSignal;
  /** The gateway's call id. */
  callId: string;
  sessionId: string;
  /** `provider.push`, for events a call produces. */
  push: (level: PushLevel, event: string, options?: PushOptions) => boolean;
}

/**
 * What a handler returns: a string is sent as is, anything else as JSON (`undefined` → `""`).
 * To fail, throw: a {@link ToolError} picks the `errorCode`, anything else is `INTERNAL`.
 */
export type ToolHandler<A = Record<string, unknown>> = (args: A, ctx: ToolCallContext) => unknown;

export interface ProviderTool<A = Record<string, unknown>> {
  /** `^[A-Za-z0-9_-]{1,64}$`; the model sees `<provider>__<name>`. */
  name: string;
  description: string;
  /** Defaults to `{ type: "object", properties: {} }`. The gateway validates args against it. */
  parameters?: JsonSchema;
  /** Per-call timeout the gateway enforces, ms (then `tool.cancel` → the handler's signal). */
  timeout?: number;
  // Method syntax on purpose: a handler typed for its own args (`(args: { city: string }) => …`)
  // still fits a `ProviderTool[]`.
  handler(args: A, ctx: ToolCallContext): unknown;
}

/** Picks a session from `sessions.active`; `undefined` means "none of these" (retried later). */
export type SessionPicker = (active: SessionInfo[]) => string | undefined;

export interface ProviderOptions {
  /** Stable provider identity (`hello.name`); also the default push stream. */
  name: string;
  tools?: ProviderTool[];
  /**
   * Default: `PATCHBAY_GATEWAY_URL`, else the running patchbay serving `workspace`, else the newest
   * running patchbay (each writes `<PATCHBAY_HOME>/gateway/run/<pid>.json`), else `ws://127.0.0.1:9400`.
   */
  url?: string;
  /** A folder: connect to the patchbay that has it open (or a folder containing it). Default: `PATCHBAY_WORKSPACE`. */
  workspace?: string;
  /** Default: discovered before every attempt (see discover.ts). */
  token?: string;
  /** A session id, or a function choosing one. Default: the first active session. */
  session?: string | SessionPicker;
  /** Reconnect when the connection drops (not after a fatal error or `close()`). Default on. */
  reconnect?: boolean | BackoffOptions;
  /** Runs on `shutdown.pending` for the bound session, before `goodbye`; cut off at the deadline. */
  onShutdown?: (info: { sessionId: string; deadline: number }) => void | Promise<void>;
  /** Validate outgoing messages against the shared schemas. Default: unless NODE_ENV=production. */
  validate?: boolean;
  /** Environment for discovery (default `process.env`, read at every attempt). */
  env?: ProviderEnv;
}

/**
 * Where the provider is. `reconnecting`: waiting out a backoff delay. `failed`: a fatal error
 * (or reconnects exhausted); `connect()` starts over.
 */
export type ProviderState = 'idle' | 'connecting' | 'authenticating' | 'binding' | 'bound' | 'reconnecting' | 'closed' | 'failed';

export interface BoundInfo {
  providerId: string;
  sessionId: string;
}

export interface ProviderEvents {
  state: [state: ProviderState];
  bound: [info: BoundInfo];
  lifecycle: [state: LifecycleState, message: SessionLifecycleMessage];
  /** GatewayError (an `error` message) or ProviderError (local). Without a listener: stderr. */
  error: [error: Error];
}

/**
 * A gateway provider: one WebSocket client that walks the core profile's connection state
 * machine (specs/tap-provider-gateway.md "Connection state machine") and starts over — fresh
 * auth, fresh `hello` — whenever the connection drops (spec "Disconnect cleanup", "Gateway crash
 * recovery"), with bounded, jittered exponential backoff.
 *
 *   idle ─connect()─► connecting ─open─► authenticating ─sessions─► binding ─hello.ack─► bound
 *                          ▲                                                          │
 *                          └──── reconnecting (backoff) ◄──── drop / non-fatal error ─┘
 *   fatal error (AUTH_FAILED, UNSUPPORTED_VERSION) ─► failed;   close() ─► closed
 *
 * Invariants: one live socket at a time (`this.conn`); events of an older socket are ignored
 * except for aborting its handlers; every `tool.call` is answered once (calls.ts); `goodbye` is
 * only sent while Bound, as the state table allows.
 */
import WebSocket from 'ws';
import { llmNameProblem, serverNameProblem } from '../shapes/tool-names.js';
import {
  FATAL_ERROR_CODES,
  gatewayMessageSchemas,
  MAX_TOOLS,
  maxMessageBytes,
  PROTOCOL_VERSION,
  providerMessageSchemas,
  SHUTDOWN_DEADLINE_MS,
  TOOL_NAME_PATTERN,
  TOOL_RESULT_MAX,
  toolDefSchema,
  type ErrorMessage,
  type GatewayMessage,
  type ProviderMessage,
  type PushLevel,
  type SessionInfo,
  type ToolCallMessage,
  type ToolDef,
} from '../protocol/gateway/index.js';
import { backoffDelay, resolveBackoff, type ResolvedBackoff } from './backoff.js';
import { CallTable, errorResult } from './calls.js';
import { discoverGateway, runDirPath, tokenStillPublished, type DiscoveredToken } from './discover.js';
import { GatewayError, ProviderError } from './errors.js';
import { Emitter } from './events.js';
import type { BoundInfo, ProviderEvents, ProviderOptions, ProviderState, ProviderTool, PushOptions } from './types.js';

/** From socket open to `hello.ack`; a peer that accepts the socket but never answers is dropped. */
const BIND_TIMEOUT_MS = 10_000;
/** After `goodbye` + close, how long to wait for the close handshake before terminating. */
const CLOSE_TIMEOUT_MS = 2_000;
/** Room left before a `shutdown.pending` deadline to still say goodbye. */
const SHUTDOWN_MARGIN_MS = 250;

interface Connection {
  ws: WebSocket;
  url: string;
  token: DiscoveredToken;
  phase: 'opening' | 'auth' | 'hello' | 'bound' | 'closing';
  calls: CallTable;
  sessionId?: string;
  /** The tool list version sent in `hello` / the last `tools.update`. */
  toolsVersion: number;
  bindTimer?: NodeJS.Timeout;
  /** Why this connection ends, when it is our decision or the gateway's error. */
  reason?: Error;
  fatal?: GatewayError;
  socketError?: Error;
  shuttingDown?: boolean;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Tool list → handler map + wire defs, checked once here rather than per message. */
function checkTools(tools: ProviderTool[]): { map: Map<string, ProviderTool>; defs: ToolDef[] } {
  if (tools.length > MAX_TOOLS) throw new RangeError(`a provider offers at most ${MAX_TOOLS} tools (got ${tools.length})`);
  const map = new Map<string, ProviderTool>();
  const defs: ToolDef[] = [];
  for (const t of tools) {
    if (typeof t.handler !== 'function') throw new TypeError(`tool "${t.name}": handler must be a function`);
    if (map.has(t.name)) throw new TypeError(`tool "${t.name}" is declared twice`);
    const def = {
      name: t.name,
      description: t.description,
      parameters: t.parameters ?? { type: 'object', properties: {} },
      ...(t.timeout === undefined ? {} : { timeout: t.timeout }),
    };
    const r = toolDefSchema.safeParse(def);
    if (!r.success) throw new TypeError(`tool "${t.name}": ${r.error.issues.map((i) => `${i.path.join('.') || 'tool'}: ${i.message}`).join('; ')}`);
    map.set(t.name, t);
    defs.push(def);
  }
  JSON.stringify(defs); // throws here, not later inside a socket event, on a BigInt or a cycle in `parameters`
  return { map, defs };
}

export class Provider extends Emitter<ProviderEvents> {
  readonly name: string;
  private readonly opts: ProviderOptions;
  private readonly backoff: ResolvedBackoff | undefined;
  private readonly validate: boolean;
  private tools: Map<string, ProviderTool>;
  /** The list before the last `updateTools`: calls the gateway sent before it applied the update. */
  private previousTools: Map<string, ProviderTool> | undefined;
  private toolDefs: ToolDef[];
  private toolsVersion = 0;
  private _state: ProviderState = 'idle';
  private conn: Connection | undefined;
  private boundInfo: BoundInfo | undefined;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private ready: Deferred<BoundInfo> | undefined;
  private lastPrinted = '';

  constructor(opts: ProviderOptions) {
    super();
    // The name prefixes the tool names the model sees (`<provider>__<tool>`): same alphabet.
    if (!TOOL_NAME_PATTERN.test(opts.name ?? '')) throw new TypeError(`createProvider: name ${JSON.stringify(opts.name)} must match ${TOOL_NAME_PATTERN}`);
    // The gateway would refuse these at hello; say so before connecting.
    const badName = serverNameProblem(opts.name);
    if (badName) throw new TypeError(`createProvider: name ${badName}`);
    for (const t of opts.tools ?? []) {
      const bad = typeof t?.name === 'string' ? llmNameProblem(`${opts.name}__${t.name}`) : undefined;
      if (bad) throw new TypeError(`createProvider: tool "${t.name}": the model would see it as ${bad}`);
    }
    this.opts = opts;
    this.name = opts.name;
    this.backoff = opts.reconnect === false ? undefined : resolveBackoff(opts.reconnect === true ? {} : opts.reconnect);
    this.validate = opts.validate ?? process.env.NODE_ENV !== 'production';
    const { map, defs } = checkTools(opts.tools ?? []);
    this.tools = map;
    this.toolDefs = defs;
  }

  get state(): ProviderState {
    return this._state;
  }

  /** `providerId` and `sessionId` from the last `hello.ack`, while bound. */
  get bound(): BoundInfo | undefined {
    return this.boundInfo;
  }

  /** Handlers running right now. */
  get inFlight(): number {
    return this.conn?.calls.size ?? 0;
  }

  // ------------------------------------------------------------------ public API

  /**
   * Connects, authenticates, binds. Resolves once bound (`hello.ack`); keeps retrying with
   * backoff meanwhile. Rejects on a fatal error, `close()`, or when reconnecting is off / gives up.
   */
  connect(): Promise<BoundInfo> {
    if (this.boundInfo) return Promise.resolve(this.boundInfo);
    if (!this.ready) {
      this.ready = deferred();
      // Whoever awaits connect() sees the rejection; a `void p.connect()` must not crash the process.
      this.ready.promise.catch(() => {});
    }
    const p = this.ready.promise;
    if (this._state === 'idle' || this._state === 'closed' || this._state === 'failed') {
      this.attempt = 0;
      this.open();
    }
    return p;
  }

  /** A `push` to the bound session's stream. False (and nothing sent) when not bound. */
  push(level: PushLevel, event: string, options: PushOptions = {}): boolean {
    const msg: ProviderMessage = {
      type: 'push',
      level,
      event,
      stream: options.stream ?? this.name,
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    };
    this.check(msg);
    const conn = this.conn;
    if (conn?.phase !== 'bound') return false;
    return this.send(conn, msg);
  }

  /** Replaces the whole tool list (`tools.update` when bound; the next `hello` otherwise). */
  updateTools(tools: ProviderTool[]): void {
    const { map, defs } = checkTools(tools);
    this.previousTools = this.tools;
    this.tools = map;
    this.toolDefs = defs;
    this.toolsVersion++;
    const conn = this.conn;
    if (conn?.phase === 'bound') this.sendTools(conn);
  }

  /** `goodbye`, close, no reconnect. Running handlers are aborted. Resolves when the socket is closed. */
  async close(reason = 'closing'): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const conn = this.conn;
    this.conn = undefined;
    this.boundInfo = undefined;
    this.settleReady(new ProviderError('CLOSED', 'provider closed'));
    // Closed from here on: a connect() while the old socket is still closing starts afresh.
    this.setState('closed');
    if (conn) {
      conn.reason = new ProviderError('CLOSED', 'provider closed');
      await this.hangUp(conn, reason);
    }
  }

  // ------------------------------------------------------------------ connection

  private open(): void {
    this.retryTimer = undefined;
    const env = this.opts.env ?? process.env;
    const found = discoverGateway({ url: this.opts.url, token: this.opts.token, workspace: this.opts.workspace }, env);
    if (!found.ok) {
      // Its patchbay may not be up yet: retried like a missing token.
      this.retry(new ProviderError('NO_GATEWAY', found.message));
      return;
    }
    const { url } = found;
    const token: DiscoveredToken | undefined = found.token;
    if (!token) {
      this.retry(new ProviderError('NO_TOKEN', `no gateway token: set PATCHBAY_PROVIDER_TOKEN or TAP_PROVIDER_TOKEN, or start patchbay (it writes its address and token in ${runDirPath(env)})`));
      return;
    }
    let ws: WebSocket;
    try {
      ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: TOOL_RESULT_MAX, handshakeTimeout: BIND_TIMEOUT_MS });
    } catch (e) {
      // Not a ws:// URL at all: retrying will not help.
      this.finish('failed', new ProviderError('CONNECTION', `invalid gateway URL ${JSON.stringify(url)}: ${e instanceof Error ? e.message : String(e)}`));
      return;
    }
    this.setState('connecting');
    const conn: Connection = {
      ws,
      url,
      token,
      phase: 'opening',
      toolsVersion: this.toolsVersion,
      calls: new CallTable({
        tool: (name) => this.tools.get(name) ?? this.previousTools?.get(name),
        send: (msg) => void this.send(conn, msg),
        push: (level, event, options) => this.push(level, event, options),
      }),
    };
    this.conn = conn;
    conn.bindTimer = setTimeout(() => {
      if (conn.reason) return;
      conn.reason = new ProviderError('CONNECTION', `${url}: not bound within ${BIND_TIMEOUT_MS} ms`);
      this.emitError(conn.reason);
      ws.terminate();
    }, BIND_TIMEOUT_MS);
    ws.on('open', () => {
      if (conn !== this.conn) return;
      conn.phase = 'auth';
      this.setState('authenticating');
      this.send(conn, { type: 'auth', token: token.token });
    });
    ws.on('message', (data) => this.onMessage(conn, data.toString()));
    ws.on('error', (e) => {
      conn.socketError ??= e; // 'close' follows
    });
    ws.on('close', (code) => this.onClose(conn, code));
  }

  private onClose(conn: Connection, code: number): void {
    clearTimeout(conn.bindTimer);
    conn.calls.abortAll('connection closed');
    if (conn !== this.conn) return; // closed by close(), or superseded
    this.conn = undefined;
    const wasBound = conn.phase === 'bound' || conn.phase === 'closing';
    this.boundInfo = undefined;
    if (conn.fatal) {
      this.finish('failed', conn.fatal);
      return;
    }
    const why =
      conn.reason ??
      new ProviderError('CONNECTION', conn.socketError ? `${conn.url}: ${conn.socketError.message}` : `${conn.url}: connection closed (${code})${wasBound ? '' : ' before the provider was bound'}`, {
        cause: conn.socketError,
      });
    // A planned goodbye (shutdown.pending) is not an error; a drop is.
    if (!conn.shuttingDown && !conn.reason) this.emitError(why);
    this.retry(why);
  }

  /** Schedules the next attempt, or ends here when reconnecting is off or exhausted. */
  private retry(why: Error): void {
    if (why instanceof ProviderError && (why.code === 'NO_TOKEN' || why.code === 'NO_GATEWAY')) this.emitError(why);
    if (!this.backoff) {
      this.finish('closed', why);
      return;
    }
    if (this.attempt >= this.backoff.maxAttempts) {
      this.finish('failed', new ProviderError('GAVE_UP', `gave up after ${this.attempt} attempts: ${why.message}`, { cause: why }));
      return;
    }
    const delay = backoffDelay(this.backoff, this.attempt++);
    this.setState('reconnecting');
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  /** Ends here. A 'failed' reason is news (fatal error, gave up); a 'closed' one was reported already. */
  private finish(state: 'closed' | 'failed', why: Error): void {
    if (state === 'failed') this.emitError(why);
    this.settleReady(why);
    this.setState(state);
  }

  /** Goodbye if bound (the state table allows it only there), close, wait for the close. */
  private hangUp(conn: Connection, reason: string): Promise<void> {
    clearTimeout(conn.bindTimer);
    conn.calls.abortAll(`provider closed: ${reason}`);
    const { ws } = conn;
    if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
    if (ws.readyState === WebSocket.OPEN) {
      if (conn.phase === 'bound') this.send(conn, { type: 'goodbye', reason });
      conn.phase = 'closing';
      ws.close(1000, Buffer.from(reason).subarray(0, 120).toString()); // RFC 6455 §5.5: ≤ 123 bytes
      const kill = setTimeout(() => ws.terminate(), CLOSE_TIMEOUT_MS);
      void closed.then(() => clearTimeout(kill));
    } else {
      ws.terminate();
    }
    return closed;
  }

  // ------------------------------------------------------------------ inbound

  private onMessage(conn: Connection, raw: string): void {
    if (conn !== this.conn) return;
    try {
      this.dispatch(conn, raw);
    } catch (e) {
      // Nothing the gateway sends may throw out of a socket event and take the process down.
      this.emitError(new ProviderError('PROTOCOL', `handling a gateway message failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e }));
    }
  }

  private dispatch(conn: Connection, raw: string): void {
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch {
      this.emitError(new ProviderError('PROTOCOL', 'the gateway sent a message that is not JSON'));
      return;
    }
    const type = (data as { type?: unknown } | null)?.type;
    // The hot message, checked by hand (the same rules as its schema); everything else by schema.
    if (type === 'tool.call' && isToolCall(data)) {
      conn.calls.start(data);
      return;
    }
    // Spec "Forward compatibility": unknown gateway→provider types are ignored.
    if (typeof type !== 'string' || !Object.hasOwn(gatewayMessageSchemas, type)) return;
    const schema = gatewayMessageSchemas[type as GatewayMessage['type']];
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      this.onInvalid(conn, type, data as Record<string, unknown>, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      return;
    }
    const msg = parsed.data as GatewayMessage;
    switch (msg.type) {
      case 'sessions':
        if (conn.phase === 'auth') this.onSessions(conn, msg.active);
        return;
      case 'hello.ack':
        if (conn.phase === 'hello') this.onBound(conn, { providerId: msg.providerId, sessionId: msg.sessionId });
        return;
      case 'tool.call':
        conn.calls.start(msg);
        return;
      case 'tool.cancel':
        conn.calls.cancel(msg);
        return;
      case 'session.lifecycle':
        this.emit('lifecycle', msg.state, msg);
        if (msg.state === 'shutdown.pending' && msg.sessionId === conn.sessionId && !conn.shuttingDown) {
          void this.onShutdownPending(conn, msg.deadline ?? SHUTDOWN_DEADLINE_MS);
        }
        return;
      case 'error':
        this.onGatewayError(conn, msg);
        return;
    }
  }

  /** A known type with a bad shape. An `error` is still an error; a `tool.call` still gets its one answer. */
  private onInvalid(conn: Connection, type: string, data: Record<string, unknown>, issues: string): void {
    if (type === 'error' && typeof data.code === 'string') {
      // A code newer than this SDK: handle it like any non-fatal error.
      const replyTo = typeof data.replyTo === 'string' ? data.replyTo : undefined;
      this.onGatewayError(conn, { code: data.code, message: String(data.message ?? ''), replyTo });
      return;
    }
    if (type === 'tool.call' && typeof data.id === 'string') {
      this.send(conn, { type: 'tool.result', id: data.id, error: `invalid tool.call: ${issues}`, errorCode: 'INTERNAL' });
    }
    this.emitError(new ProviderError('PROTOCOL', `invalid ${type} from the gateway: ${issues}`));
  }

  private onSessions(conn: Connection, active: SessionInfo[]): void {
    const pick = this.opts.session;
    const session = typeof pick === 'string' ? pick : pick ? pick(active) : active[0]?.id;
    if (!session) {
      conn.reason = new ProviderError('NO_SESSION', active.length ? 'no active session was picked' : 'the gateway has no active session');
      this.emitError(conn.reason);
      conn.ws.close(1000);
      return;
    }
    conn.phase = 'hello';
    conn.sessionId = session;
    conn.toolsVersion = this.toolsVersion;
    this.previousTools = undefined; // hello declares the whole current list
    this.setState('binding');
    this.send(conn, { type: 'hello', name: this.name, protocolVersion: PROTOCOL_VERSION, session, tools: this.toolDefs });
  }

  private onBound(conn: Connection, info: BoundInfo): void {
    clearTimeout(conn.bindTimer);
    conn.phase = 'bound';
    conn.sessionId = info.sessionId;
    this.boundInfo = info;
    this.attempt = 0;
    this.lastPrinted = '';
    // updateTools() while binding: the hello carried the older list.
    if (conn.toolsVersion !== this.toolsVersion) this.sendTools(conn);
    this.setState('bound');
    this.emit('bound', info);
    const ready = this.ready;
    this.ready = undefined;
    ready?.resolve(info);
  }

  private onGatewayError(conn: Connection, msg: Pick<ErrorMessage, 'message' | 'replyTo' | 'providerId' | 'sessionId'> & { code: string }): void {
    // A gateway restarted after a crash may meet a token file it has since rewritten: not fatal then.
    const staleFile = msg.code === 'AUTH_FAILED' && !tokenStillPublished(conn.token);
    const fatal = (FATAL_ERROR_CODES as ReadonlySet<string>).has(msg.code) && !staleFile;
    const err = new GatewayError(msg, fatal);
    if (fatal) {
      conn.fatal = err; // the gateway closes; onClose ends in 'failed' and reports it
      conn.ws.close(1000);
      return;
    }
    this.emitError(err);
    if (conn.phase !== 'bound') {
      // Not bound yet (INVALID_SESSION, TOOL_CONFLICT, RATE_LIMITED…): start over after a backoff.
      conn.reason = err;
      conn.ws.close(1000);
    }
  }

  private async onShutdownPending(conn: Connection, deadline: number): Promise<void> {
    conn.shuttingDown = true;
    const hook = this.opts.onShutdown;
    if (hook) {
      let timer: NodeJS.Timeout | undefined;
      const cutoff = new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - SHUTDOWN_MARGIN_MS))));
      const run = (async () => hook({ sessionId: conn.sessionId ?? '', deadline }))().catch((e: unknown) => this.emitError(e instanceof Error ? e : new Error(String(e))));
      await Promise.race([run, cutoff]);
      clearTimeout(timer);
    }
    if (conn !== this.conn) return; // close() ran meanwhile, or the gateway went first
    await this.hangUp(conn, 'session ending');
  }

  // ------------------------------------------------------------------ outbound

  private sendTools(conn: Connection): void {
    conn.toolsVersion = this.toolsVersion;
    this.send(conn, { type: 'tools.update', tools: this.toolDefs });
  }

  /** Development check of an outgoing message against the shared schema; a failure is our caller's bug. */
  private check(msg: ProviderMessage): void {
    if (!this.validate) return;
    const r = providerMessageSchemas[msg.type].safeParse(msg);
    if (!r.success) throw new TypeError(`invalid ${msg.type}: ${r.error.issues.map((i) => `${i.path.join('.') || msg.type}: ${i.message}`).join('; ')}`);
  }

  /**
   * Serializes and sends. A `tool.result` that cannot be sent as is (not JSON, too large) is
   * replaced by an INTERNAL error result, so the call still gets its one answer.
   */
  private send(conn: Connection, msg: ProviderMessage): boolean {
    let text: string;
    try {
      // push was checked before the bound test; a tool.result is built here (data is any JSON), nothing to check.
      if (msg.type !== 'push' && msg.type !== 'tool.result') this.check(msg);
      text = JSON.stringify(msg);
      const max = maxMessageBytes(msg.type);
      // 3 bytes per UTF-16 unit at most: only long texts need counting.
      if (text.length * 3 > max && Buffer.byteLength(text) > max) {
        throw new RangeError(`${msg.type} is ${(Buffer.byteLength(text) / 1048576).toFixed(1)} MB, over the ${max / 1048576} MB limit`);
      }
    } catch (e) {
      if (msg.type !== 'tool.result' || msg.error !== undefined) throw e;
      return this.send(conn, errorResult(msg.id, new Error(`result not sent: ${e instanceof Error ? e.message : String(e)}`)));
    }
    // Not only the current connection: close() says goodbye on one it has already let go of.
    if (conn.ws.readyState !== WebSocket.OPEN) return false;
    conn.ws.send(text);
    return true;
  }

  // ------------------------------------------------------------------ events

  private setState(s: ProviderState): void {
    if (this._state === s) return;
    this._state = s;
    this.emit('state', s);
  }

  private settleReady(why: Error): void {
    const ready = this.ready;
    this.ready = undefined;
    ready?.reject(why);
  }

  protected override onListenerError(event: keyof ProviderEvents, e: unknown): void {
    if (event !== 'error') this.emitError(e instanceof Error ? e : new Error(String(e)));
  }

  /** To `error` listeners; with none, to stderr (once per distinct message in a row, not for plain drops). */
  private emitError(e: Error): void {
    if (this.listenerCount('error')) {
      this.emit('error', e);
      return;
    }
    if (e instanceof ProviderError && e.code === 'CONNECTION') return;
    if (e.message === this.lastPrinted) return;
    this.lastPrinted = e.message;
    process.stderr.write(`provider ${this.name}: ${e.message}\n`);
  }
}

export function createProvider(opts: ProviderOptions): Provider {
  return new Provider(opts);
}

/** `toolCallMessageSchema`'s rules: string id, sessionId and tool; args a JSON object. */
function isToolCall(m: unknown): m is ToolCallMessage {
  const c = m as Record<string, unknown>;
  const args = c.args;
  return typeof c.id === 'string' && typeof c.sessionId === 'string' && typeof c.tool === 'string' && typeof args === 'object' && args !== null && !Array.isArray(args);
}

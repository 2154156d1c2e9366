/**
 * One provider connection: the core-profile state machine
 * (specs/tap-provider-gateway.md "Connection state machine"):
 *
 *   AwaitAuth ──auth──► AwaitHello ──hello──► Bound ──goodbye/disconnect──► Disconnected
 *
 * Invariants:
 * - frames are handled strictly in arrival order (per-connection FIFO), close and socket errors too;
 * - every error to the provider carries `replyTo` and, once Bound, `providerId`;
 * - leaving Bound settles every pending call (DISCONNECTED) and removes the provider's tools;
 * - nothing a provider sends can throw out of here.
 */
import { randomBytes } from 'node:crypto';
import type WebSocket from 'ws';
import type { Tool, ToolContext, ToolResult } from '../../shapes/tool.js';
import { PROTOCOL_VERSION, PROVIDER_MESSAGE_TYPES, authMessageSchema, type GatewayErrorCode, type GatewayMessage, type LifecycleState, type ToolDef } from '../../protocol/gateway/index.js';
import { errorMessage, type Logger } from '../../util/log.js';
import { handleBound } from './bound.js';
import { PendingCalls } from '../../shapes/pending-calls.js';
import { ended, failure } from './calls.js';
import { toTool } from './provider-tool.js';
import { TokenBucket } from './rate-limit.js';
import { tokenMatches } from './token.js';
import type { GatewayChats } from './types.js';
import { checkHello, parseFrame, type Frame } from './validation.js';

/** A Bound provider: who it is, where it is bound, what it offers, what it owes. */
export interface Binding {
  readonly providerId: string;
  readonly name: string;
  readonly chatId: string;
  defs: ToolDef[];
  tools: Tool[];
  readonly calls: PendingCalls;
}

export type ConnectionState = { kind: 'AwaitAuth'; timer: NodeJS.Timeout } | { kind: 'AwaitHello' } | { kind: 'Bound'; binding: Binding } | { kind: 'Disconnected'; reason: string };

export interface ConnectionTimings {
  authTimeoutMs: number;
  defaultToolTimeoutMs: number;
  rateLimitPerSecond: number;
}

/** What a connection needs from the gateway; implemented by the host. */
export interface ConnectionHost {
  readonly log: Logger;
  readonly timings: ConnectionTimings;
  readonly token: string;
  sessions(): Array<{ id: string; label: string; cwd: string }>;
  /** True when `maxConnections` providers have authenticated already. */
  authenticatedFull(): boolean;
  /** Why `name` belongs to another tool source (an MCP server in the user's config), if it does. */
  nameReserved(name: string): string | undefined;
  /** Claims `binding.name` in `binding.chatId`; false when another connection holds it. */
  bind(conn: ProviderConnection, binding: Binding): boolean;
  /**
   * The binding's tools changed (bound, updated): register them and announce the providers.
   * Returns why they were refused (a name another source offers), in which case nothing changed.
   */
  toolsChanged(binding: Binding): string | undefined;
  unbind(conn: ProviderConnection, binding: Binding): void;
  push(entry: Parameters<GatewayChats['push']>[0]): void;
  closed(conn: ProviderConnection): void;
}

function isProviderType(type: string): boolean {
  return (PROVIDER_MESSAGE_TYPES as readonly string[]).includes(type);
}

/** WebSocket close codes (RFC 6455 §7.4.1). */
export const CLOSE = { normal: 1000, goingAway: 1001, protocol: 1002, policy: 1008 } as const;

export class ProviderConnection {
  state: ConnectionState;
  /** Last time anything arrived (frame or pong), for the heartbeat. */
  lastSeen = Date.now();
  /** Resolves once Disconnected. */
  readonly closed: Promise<void>;
  private resolveClosed!: () => void;
  private queue: Promise<void> = Promise.resolve();
  /** Steps queued or running asynchronously; 0 means a new frame can be handled right away. */
  private inFlight = 0;
  private readonly bucket: TokenBucket;
  private seq = 0;
  private shutdownTimer: NodeJS.Timeout | undefined;
  /** Set while reading is paused for going over the rate limit. */
  private resumeTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly ws: WebSocket,
    readonly host: ConnectionHost,
  ) {
    this.closed = new Promise((r) => (this.resolveClosed = r));
    this.bucket = new TokenBucket(host.timings.rateLimitPerSecond);
    const timer = setTimeout(() => this.fatal('AUTH_FAILED', `no valid auth within ${host.timings.authTimeoutMs} ms`), host.timings.authTimeoutMs);
    this.state = { kind: 'AwaitAuth', timer };
    ws.on('message', (data) => {
      this.lastSeen = Date.now();
      this.enqueue(() => this.onFrame(parseFrame(data as Buffer)));
    });
    ws.on('pong', () => (this.lastSeen = Date.now()));
    ws.on('error', (err: Error & { code?: string }) => this.enqueue(() => this.onSocketError(err)));
    ws.on('close', () => this.enqueue(() => this.disconnect('connection closed')));
  }

  get binding(): Binding | undefined {
    return this.state.kind === 'Bound' ? this.state.binding : undefined;
  }

  /**
   * Per-connection FIFO: each step runs after the previous one, whatever it awaited. With nothing
   * in flight a step runs at once (no promise hop per frame: bench/gateway.ts); only steps that
   * return a promise make later frames wait.
   */
  private enqueue(step: () => void | Promise<void>): void {
    const fail = (e: unknown) => this.host.log.error(`gateway connection: ${errorMessage(e)}`);
    const settle = (r: void | Promise<void>) => {
      if (!r) return;
      this.inFlight++;
      this.queue = r.catch(fail).finally(() => this.inFlight--);
    };
    if (this.inFlight === 0) {
      try {
        settle(step());
      } catch (e) {
        fail(e);
      }
      return;
    }
    this.inFlight++;
    this.queue = this.queue
      .then(step)
      .catch(fail)
      .finally(() => this.inFlight--);
  }

  send(msg: GatewayMessage): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send(JSON.stringify(msg), (err) => {
      if (err) this.host.log.debug(`gateway send ${msg.type}: ${err.message}`);
    });
  }

  sendError(code: GatewayErrorCode, message: string, replyTo?: string): void {
    const b = this.binding;
    this.send({ type: 'error', code, message, ...(replyTo ? { replyTo } : {}), ...(b ? { providerId: b.providerId, sessionId: b.chatId } : {}) });
  }

  /** AUTH_FAILED, UNSUPPORTED_VERSION: the error goes out before the close frame (ws keeps order). */
  fatal(code: GatewayErrorCode, message: string, replyTo?: string): void {
    this.sendError(code, message, replyTo);
    this.disconnect(message, code === 'AUTH_FAILED' ? CLOSE.policy : CLOSE.protocol);
  }

  private onFrame(frame: Frame): void {
    if (this.state.kind === 'Disconnected') return;
    if (frame.kind === 'malformed') {
      // Could have been a tool.result: terminal rule 4 applies before the rate limit.
      if (this.binding?.calls.size) return this.ambiguous('INVALID_JSON', frame.message);
      if (!this.bucket.take()) return this.rateLimited();
      return this.sendError('INVALID_JSON', frame.message);
    }
    const type = frame.type;
    // A tool.result answers a call we made: never rate-limited, or calls would stall until timeout.
    if (type !== 'tool.result' && !this.bucket.take()) return this.rateLimited(type);
    if (frame.kind === 'oversized') {
      const msg = `${type} is ${frame.bytes} bytes; the limit is ${frame.limit}`;
      if (type === 'tool.result' && this.binding) return handleBound(this, this.binding, frame.raw, { code: 'PAYLOAD_TOO_LARGE', message: msg });
      return this.sendError('PAYLOAD_TOO_LARGE', msg, type);
    }
    if (frame.kind === 'tooDeep') {
      const msg = `${type} is nested deeper than ${frame.limit} levels`;
      if (type === 'tool.result' && this.binding) return handleBound(this, this.binding, frame.raw, { code: 'INVALID_JSON', message: msg });
      return this.sendError('INVALID_JSON', msg, type);
    }
    const raw = frame.raw;
    if (type === 'goodbye') return this.disconnect(typeof raw.reason === 'string' ? `goodbye: ${raw.reason}` : 'goodbye', CLOSE.normal);
    switch (this.state.kind) {
      case 'AwaitAuth':
        if (type === 'auth') return this.onAuth(raw);
        if (isProviderType(type)) return this.fatal('AUTH_FAILED', `the first message must be auth, not ${type}`, type);
        return this.sendError('UNKNOWN_TYPE', `unknown message type "${type}"`, type);
      case 'AwaitHello':
        if (type === 'hello') return this.onHello(raw);
        return this.wrongState(type);
      case 'Bound':
        return handleBound(this, this.state.binding, raw);
    }
  }

  /** A known type out of place, or an unknown type: UNKNOWN_TYPE, not fatal (spec "Forward compatibility"). */
  wrongState(type: string): void {
    this.sendError('UNKNOWN_TYPE', isProviderType(type) ? `${type} is not accepted in state ${this.state.kind}` : `unknown message type "${type}"`, type);
  }

  /**
   * Over budget: the message is dropped with RATE_LIMITED, and the socket is not read again until
   * the bucket is full. Backpressure, not just replies: a flooding provider's bytes then wait in
   * the kernel (and its own send buffer) instead of costing a parse and a reply each, so it cannot
   * take the event loop from the editor. What was already read when the pause began is still
   * answered, one error each.
   */
  private rateLimited(type?: string): void {
    this.sendError('RATE_LIMITED', `more than ${this.host.timings.rateLimitPerSecond} messages per second; back off and retry`, type);
    if (this.resumeTimer || this.state.kind === 'Disconnected') return;
    this.ws.pause();
    this.resumeTimer = setTimeout(
      () => {
        this.resumeTimer = undefined;
        if (this.state.kind !== 'Disconnected') this.ws.resume();
      },
      Math.max(1, this.bucket.msUntilFull()),
    );
  }

  /**
   * Terminal rule 4: a message nobody can correlate while calls are pending. One pending call →
   * that call fails with the error; several → the provider is disconnected and all fail.
   */
  ambiguous(code: GatewayErrorCode, message: string, replyTo?: string): void {
    const calls = this.binding?.calls;
    const only = calls?.single();
    if (!calls || calls.size === 0) return this.sendError(code, message, replyTo);
    if (only) {
      this.sendError(code, `${message} (call ${only} fails)`, replyTo);
      calls.finish(only, failure(code, message));
      return;
    }
    this.sendError(code, `${message}; ${calls.size} calls were pending, disconnecting`, replyTo);
    this.disconnect(`${code} with ${calls.size} calls pending`, CLOSE.protocol);
  }

  private onSocketError(err: Error & { code?: string }): void {
    // ws refuses a frame over maxPayload (5 MB) and closes with 1009: an oversized message.
    if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.ambiguous('PAYLOAD_TOO_LARGE', 'a message exceeded 5 MB');
    else this.host.log.debug(`gateway socket error: ${err.message}`);
  }

  private onAuth(raw: Record<string, unknown>): void {
    const parsed = authMessageSchema.safeParse(raw);
    if (!parsed.success || !tokenMatches(this.host.token, parsed.data.token)) return this.fatal('AUTH_FAILED', 'invalid token', 'auth');
    // Several sockets may have been waiting when the last place was free: the first to authenticate takes it.
    if (this.host.authenticatedFull()) return this.fatal('RATE_LIMITED', 'too many provider connections; try again later', 'auth');
    if (this.state.kind === 'AwaitAuth') clearTimeout(this.state.timer);
    this.state = { kind: 'AwaitHello' };
    this.send({ type: 'sessions', active: this.host.sessions() });
  }

  private onHello(raw: Record<string, unknown>): void {
    const checked = checkHello(raw);
    if (!checked.ok) return checked.fatal ? this.fatal(checked.code, checked.message, 'hello') : this.sendError(checked.code, checked.message, 'hello');
    const hello = checked.value;
    // Approval rules name servers (`allow: {github: {}}`): a provider must not take a configured one's name.
    const reserved = this.host.nameReserved(hello.name);
    if (reserved) return this.sendError('TOOL_CONFLICT', `hello.name "${hello.name}" ${reserved}; choose another name`, 'hello');
    if (!this.host.sessions().some((s) => s.id === hello.session)) {
      return this.sendError('INVALID_SESSION', `session ${hello.session} does not exist`, 'hello');
    }
    const binding: Binding = {
      providerId: `p-${randomBytes(6).toString('hex')}`,
      name: hello.name,
      chatId: hello.session,
      defs: hello.tools,
      tools: [],
      calls: new PendingCalls({ ended }),
    };
    binding.tools = this.toTools(binding);
    if (!this.host.bind(this, binding)) {
      return this.sendError('TOOL_CONFLICT', `a provider named "${hello.name}" is already bound to session ${hello.session}`, 'hello');
    }
    this.state = { kind: 'Bound', binding };
    const refused = this.host.toolsChanged(binding);
    if (refused) {
      // A tool name another source offers in this chat: not bound, the provider may rename and retry.
      this.state = { kind: 'AwaitHello' };
      this.host.unbind(this, binding);
      return this.sendError('TOOL_CONFLICT', `hello: ${refused}`, 'hello');
    }
    this.send({ type: 'hello.ack', protocolVersion: PROTOCOL_VERSION, providerId: binding.providerId, sessionId: binding.chatId });
    // "Always sent": a provider binding to an open chat learns it has started.
    this.send({ type: 'session.lifecycle', sessionId: binding.chatId, state: 'started' });
    this.host.log.info(`provider ${binding.name} (${binding.providerId}) bound to chat ${binding.chatId} with ${binding.defs.length} tools`);
  }

  toTools(binding: Binding): Tool[] {
    return binding.defs.map((d) => toTool(binding.name, d, (tool, timeout, args, ctx) => this.call(tool, timeout, args, ctx)));
  }

  /** Tool.call of this provider's tools. Always resolves (terminal semantics 1–4). */
  call(tool: string, timeoutMs: number | undefined, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
    const b = this.binding;
    if (!b) return Promise.resolve(failure('DISCONNECTED', `tool provider is not connected`));
    if (ctx.signal.aborted) return Promise.resolve(failure('CANCELLED', `tool call "${tool}" was cancelled`));
    const id = `call-${++this.seq}`;
    const result = b.calls.start({
      id,
      tool,
      timeoutMs: timeoutMs ?? this.host.timings.defaultToolTimeoutMs,
      signal: ctx.signal,
      cancel: (reason) => this.send({ type: 'tool.cancel', id, sessionId: b.chatId, reason }),
    });
    this.send({ type: 'tool.call', id, sessionId: b.chatId, tool, args });
    return result;
  }

  lifecycle(state: Exclude<LifecycleState, 'shutdown.pending'>): void {
    const b = this.binding;
    if (b) this.send({ type: 'session.lifecycle', sessionId: b.chatId, state });
  }

  /** `shutdown.pending`, then close after `goodbye` or the deadline, whichever comes first. */
  shutdown(deadlineMs: number): Promise<void> {
    const b = this.binding;
    if (!b) {
      this.disconnect('gateway shutting down', CLOSE.goingAway);
      return this.closed;
    }
    if (!this.shutdownTimer) {
      this.send({ type: 'session.lifecycle', sessionId: b.chatId, state: 'shutdown.pending', deadline: deadlineMs });
      this.shutdownTimer = setTimeout(() => this.disconnect('shutdown deadline passed', CLOSE.goingAway), deadlineMs);
    }
    return this.closed;
  }

  /** Heartbeat tick: terminate a peer silent for longer than `timeoutMs`, else ping it. */
  heartbeat(now: number, timeoutMs: number): void {
    if (this.state.kind === 'Disconnected') return;
    if (now - this.lastSeen > timeoutMs) {
      this.disconnect('heartbeat timeout', CLOSE.policy, true);
      return;
    }
    try {
      this.ws.ping();
    } catch {
      // not open yet or already closing: the close event follows
    }
  }

  /** → Disconnected. Idempotent. Settles every pending call and removes the provider's tools. */
  disconnect(reason: string, code: number = CLOSE.normal, hard = false): void {
    const prev = this.state;
    if (prev.kind === 'Disconnected') return;
    this.state = { kind: 'Disconnected', reason };
    clearTimeout(this.shutdownTimer);
    clearTimeout(this.resumeTimer);
    if (prev.kind === 'AwaitAuth') clearTimeout(prev.timer);
    if (prev.kind === 'Bound') {
      const b = prev.binding;
      b.calls.failAll(failure('DISCONNECTED', `tool provider "${b.name}" disconnected (${reason})`));
      this.host.unbind(this, b);
      this.host.log.info(`provider ${b.name} (${b.providerId}) left chat ${b.chatId}: ${reason}`);
    }
    if (hard) this.ws.terminate();
    else if (this.ws.readyState === this.ws.OPEN) {
      // Close reasons are capped at 123 bytes (RFC 6455 §5.5).
      this.ws.close(code, Buffer.from(reason).subarray(0, 120).toString());
    }
    this.resolveClosed();
    this.host.closed(this);
  }
}

/**
 * The provider SDK's errors. Three families, kept apart on purpose (CONTRIBUTING.md "How the code
 * is written", the two error families):
 *
 * - {@link GatewayError}: an `error` message the gateway sent (spec "Error codes").
 * - {@link ProviderError}: something local went wrong (no token, no session, socket failure…);
 *   never sent anywhere.
 * - {@link ToolError}: thrown by a tool handler to choose the `errorCode` of its `tool.result`.
 */
import type { ErrorMessage } from '../protocol/gateway/index.js';

export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  /** `AUTH_FAILED`, `INVALID_SESSION`, … (a string: codes newer than this SDK pass through). */
  readonly code: string;
  readonly replyTo?: string;
  readonly providerId?: string;
  readonly sessionId?: string;
  /** The connection is closed and the SDK will not reconnect (spec: AUTH_FAILED, UNSUPPORTED_VERSION). */
  fatal: boolean;

  constructor(msg: Pick<ErrorMessage, 'message' | 'replyTo' | 'providerId' | 'sessionId'> & { code: string }, fatal: boolean) {
    super(`[${msg.code}] ${msg.message}`);
    this.code = msg.code;
    this.replyTo = msg.replyTo;
    this.providerId = msg.providerId;
    this.sessionId = msg.sessionId;
    this.fatal = fatal;
  }
}

export type ProviderErrorCode =
  /** No token in PATCHBAY_PROVIDER_TOKEN, TAP_PROVIDER_TOKEN or the token file (yet). */
  | 'NO_TOKEN'
  /** A workspace was asked for (`workspace` option, PATCHBAY_WORKSPACE) and no running gateway serves it (yet). */
  | 'NO_GATEWAY'
  /** `sessions.active` had nothing the `session` option accepts. */
  | 'NO_SESSION'
  /** The WebSocket failed or closed before the provider was bound. */
  | 'CONNECTION'
  /** The gateway sent something that breaks the protocol (not JSON, a known type with a bad shape). */
  | 'PROTOCOL'
  /** `close()` was called (rejects a pending `connect()`). */
  | 'CLOSED'
  /** `reconnect.maxAttempts` ran out. */
  | 'GAVE_UP';

export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly code: ProviderErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Throw from a handler to answer `tool.result {error, errorCode: code}`. Any other thrown
 * error becomes `INTERNAL`, unless it carries a spec code (`err.code = 'NOT_FOUND'`).
 */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    message: string,
    readonly code: string = 'INTERNAL',
  ) {
    super(message);
  }
}

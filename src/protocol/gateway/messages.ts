/**
 * Wire types of the provider gateway, core profile (specs/tap-provider-gateway.md, "Messages (12 types)").
 * One zod schema per message; TypeScript types are inferred from them.
 * Every object is `.loose()`: "Ignore unknown fields in any message" (spec "Forward compatibility").
 */
import { z } from 'zod';

/** Spec "Version negotiation": the only version of the core profile. */
export const PROTOCOL_VERSION = 2;
/** Spec "Payload limits": `tool.result` max size, in bytes of the UTF-8 text frame. */
export const TOOL_RESULT_MAX = 5 * 1024 * 1024;
/** Spec "Payload limits": every other message, in bytes. */
export const OTHER_MAX = 2 * 1024 * 1024;
/** Spec "Payload limits": max tools per provider (`hello.tools` and `tools.update.tools`). */
export const MAX_TOOLS = 100;
/** Spec `session.lifecycle`: the `shutdown.pending` deadline the gateway announces, in ms. */
export const SHUTDOWN_DEADLINE_MS = 10_000;
/** Tool names, as the LLM must see them (`<provider>__<name>`). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Spec "Error codes": codes of the `error` message. AUTH_FAILED and UNSUPPORTED_VERSION are fatal. */
export const gatewayErrorCodeSchema = z.enum(['AUTH_FAILED', 'UNSUPPORTED_VERSION', 'INVALID_SESSION', 'TOOL_CONFLICT', 'PAYLOAD_TOO_LARGE', 'RATE_LIMITED', 'INVALID_JSON', 'UNKNOWN_TYPE']);
export type GatewayErrorCode = z.infer<typeof gatewayErrorCodeSchema>;
export const FATAL_ERROR_CODES: ReadonlySet<GatewayErrorCode> = new Set(['AUTH_FAILED', 'UNSUPPORTED_VERSION']);

/**
 * Spec `tool.result`: codes a provider reports a failed call with. Open-ended on the wire
 * (a string); these are the ones the spec names. `DISCONNECTED` is gateway-local (terminal rule 3).
 */
export const TOOL_ERROR_CODES = ['NOT_FOUND', 'TIMEOUT', 'CANCELLED', 'INTERNAL'] as const;
export type ToolErrorCode = (typeof TOOL_ERROR_CODES)[number] | 'DISCONNECTED';

/** A JSON object (args, metadata). */
const jsonObject = z.record(z.string(), z.unknown());

/**
 * A tool definition (spec `hello` table). `parameters` must be an object JSON Schema
 * (`type: "object"`); whether it compiles is checked by the gateway, not here.
 */
export const toolDefSchema = z
  .object({
    name: z.string().regex(TOOL_NAME_PATTERN, 'tool name must match ^[A-Za-z0-9_-]{1,64}$'),
    description: z.string(),
    parameters: z.object({ type: z.literal('object') }).loose(),
    /** Per-call timeout in ms; the gateway's default applies when absent. */
    timeout: z.number().int().positive().optional(),
  })
  .loose();
export type ToolDef = z.infer<typeof toolDefSchema>;

// ── Provider → Gateway ───────────────────────────────────────────────────────

/** `auth`: first message (spec "Authentication"). */
export const authMessageSchema = z.object({ type: z.literal('auth'), token: z.string() }).loose();
export type AuthMessage = z.infer<typeof authMessageSchema>;

/**
 * `hello`: bind to a session and register tools. `protocolVersion` is any number here so a
 * mismatch can be answered with UNSUPPORTED_VERSION rather than a validation error; the tool
 * count is checked against MAX_TOOLS by the receiver (PAYLOAD_TOO_LARGE).
 */
export const helloMessageSchema = z
  .object({
    type: z.literal('hello'),
    name: z.string().min(1),
    protocolVersion: z.number(),
    session: z.string().min(1),
    tools: z.array(toolDefSchema).optional(),
  })
  .loose();
export type HelloMessage = z.infer<typeof helloMessageSchema>;

/** `tool.result`: exactly one of `data` or `error` (spec `tool.result`). */
export const toolResultMessageSchema = z
  .object({
    type: z.literal('tool.result'),
    id: z.string().min(1),
    data: z.unknown().optional(),
    error: z.string().optional(),
    /** NOT_FOUND, TIMEOUT, CANCELLED, INTERNAL, or a provider-specific code. */
    errorCode: z.string().optional(),
  })
  .loose()
  .refine((m) => ('data' in m && m.data !== undefined) !== (m.error !== undefined), {
    message: 'tool.result needs exactly one of "data" or "error"',
  });
export type ToolResultMessage = z.infer<typeof toolResultMessageSchema>;

export const pushLevelSchema = z.enum(['keep', 'surface', 'inject']);
export type PushLevel = z.infer<typeof pushLevelSchema>;

/** `push`: an event for the bound session's stream (spec `push`). */
export const pushMessageSchema = z
  .object({
    type: z.literal('push'),
    level: pushLevelSchema,
    event: z.string().min(1),
    /** Defaults to the provider name. */
    stream: z.string().min(1).optional(),
    /** Must match the session selected in `hello` when supplied. */
    sessionId: z.string().optional(),
    metadata: jsonObject.optional(),
  })
  .loose();
export type PushMessage = z.infer<typeof pushMessageSchema>;

/** `tools.update`: replace the provider's whole tool list (same rules as `hello.tools`). */
export const toolsUpdateMessageSchema = z
  .object({
    type: z.literal('tools.update'),
    tools: z.array(toolDefSchema),
    sessionId: z.string().optional(),
  })
  .loose();
export type ToolsUpdateMessage = z.infer<typeof toolsUpdateMessageSchema>;

/** `goodbye`: sent before closing the WebSocket. */
export const goodbyeMessageSchema = z.object({ type: z.literal('goodbye'), reason: z.string().optional() }).loose();
export type GoodbyeMessage = z.infer<typeof goodbyeMessageSchema>;

// ── Gateway → Provider ───────────────────────────────────────────────────────

export const sessionInfoSchema = z.object({ id: z.string(), label: z.string().optional(), cwd: z.string().optional() }).loose();
export type SessionInfo = z.infer<typeof sessionInfoSchema>;

/** `sessions`: after a successful `auth`; the provider picks one `id` for `hello`. */
export const sessionsMessageSchema = z.object({ type: z.literal('sessions'), active: z.array(sessionInfoSchema) }).loose();
export type SessionsMessage = z.infer<typeof sessionsMessageSchema>;

/** `hello.ack`: the provider is now Bound. */
export const helloAckMessageSchema = z
  .object({
    type: z.literal('hello.ack'),
    protocolVersion: z.number(),
    providerId: z.string(),
    sessionId: z.string(),
  })
  .loose();
export type HelloAckMessage = z.infer<typeof helloAckMessageSchema>;

/** `tool.call`: the provider must answer with exactly one `tool.result` for `id`. */
export const toolCallMessageSchema = z
  .object({
    type: z.literal('tool.call'),
    id: z.string(),
    sessionId: z.string(),
    tool: z.string(),
    args: jsonObject,
  })
  .loose();
export type ToolCallMessage = z.infer<typeof toolCallMessageSchema>;

/** `tool.cancel`: the provider must answer `tool.result {errorCode: "CANCELLED"}`. */
export const toolCancelMessageSchema = z
  .object({
    type: z.literal('tool.cancel'),
    id: z.string(),
    sessionId: z.string(),
    /** patchbay sends `cancelled` (prompt stopped) or `timeout`. */
    reason: z.string().optional(),
  })
  .loose();
export type ToolCancelMessage = z.infer<typeof toolCancelMessageSchema>;
export type CancelReason = 'cancelled' | 'timeout';

export const lifecycleStateSchema = z.enum(['started', 'idle', 'shutdown.pending']);
export type LifecycleState = z.infer<typeof lifecycleStateSchema>;

/** `session.lifecycle`: always sent on a state change; `deadline` (ms) with `shutdown.pending`. */
export const sessionLifecycleMessageSchema = z
  .object({
    type: z.literal('session.lifecycle'),
    sessionId: z.string(),
    state: lifecycleStateSchema,
    deadline: z.number().optional(),
  })
  .loose();
export type SessionLifecycleMessage = z.infer<typeof sessionLifecycleMessageSchema>;

/** `error`: `replyTo` is the type of the offending message; `providerId` once known. */
export const errorMessageSchema = z
  .object({
    type: z.literal('error'),
    code: gatewayErrorCodeSchema,
    message: z.string(),
    replyTo: z.string().optional(),
    providerId: z.string().optional(),
    sessionId: z.string().optional(),
  })
  .loose();
export type ErrorMessage = z.infer<typeof errorMessageSchema>;

// ── Unions ───────────────────────────────────────────────────────────────────

export const providerMessageSchema = z.discriminatedUnion('type', [authMessageSchema, helloMessageSchema, toolResultMessageSchema, pushMessageSchema, toolsUpdateMessageSchema, goodbyeMessageSchema]);
export type ProviderMessage = z.infer<typeof providerMessageSchema>;
export type ProviderMessageType = ProviderMessage['type'];
export const PROVIDER_MESSAGE_TYPES: readonly ProviderMessageType[] = ['auth', 'hello', 'tool.result', 'push', 'tools.update', 'goodbye'];

export const gatewayMessageSchema = z.discriminatedUnion('type', [
  sessionsMessageSchema,
  helloAckMessageSchema,
  toolCallMessageSchema,
  toolCancelMessageSchema,
  sessionLifecycleMessageSchema,
  errorMessageSchema,
]);
export type GatewayMessage = z.infer<typeof gatewayMessageSchema>;
export type GatewayMessageType = GatewayMessage['type'];
export const GATEWAY_MESSAGE_TYPES: readonly GatewayMessageType[] = ['sessions', 'hello.ack', 'tool.call', 'tool.cancel', 'session.lifecycle', 'error'];

/** Schemas by `type`, for validating one known message type with a precise error. */
export const providerMessageSchemas = {
  auth: authMessageSchema,
  hello: helloMessageSchema,
  'tool.result': toolResultMessageSchema,
  push: pushMessageSchema,
  'tools.update': toolsUpdateMessageSchema,
  goodbye: goodbyeMessageSchema,
} as const;
export const gatewayMessageSchemas = {
  sessions: sessionsMessageSchema,
  'hello.ack': helloAckMessageSchema,
  'tool.call': toolCallMessageSchema,
  'tool.cancel': toolCancelMessageSchema,
  'session.lifecycle': sessionLifecycleMessageSchema,
  error: errorMessageSchema,
} as const;

/** The size limit that applies to a message of `type` (spec "Payload limits"). */
export function maxMessageBytes(type: string | undefined): number {
  return type === 'tool.result' ? TOOL_RESULT_MAX : OTHER_MAX;
}

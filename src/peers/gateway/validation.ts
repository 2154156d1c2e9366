/**
 * Boundary checks for provider → gateway messages (specs/tap-provider-gateway.md "Protocol rules",
 * "Payload limits", `hello`, `tools.update`). Pure functions: they say what is wrong, the
 * connection decides what that means in its state.
 */
import type { z } from 'zod';
import {
  MAX_TOOLS,
  PROTOCOL_VERSION,
  maxMessageBytes,
  helloMessageSchema,
  toolsUpdateMessageSchema,
  type GatewayErrorCode,
  type HelloMessage,
  type ToolDef,
  type ToolsUpdateMessage,
} from '../../protocol/gateway/index.js';
import { jsonSchemaError } from './json-schema.js';
import { llmNameProblem, serverNameProblem } from '../../shapes/tool-names.js';
import { MAX_JSON_DEPTH, jsonTextDepthExceeds } from '../../util/json-depth.js';
import { topLevelStrings } from './top-level.js';

/** A frame, classified before any state-dependent handling. */
export type Frame =
  /** Not JSON, not an object, or no string `type`: nobody can tell what it was. */
  | { kind: 'malformed'; message: string }
  /** Over the limit for its type (2 MB; 5 MB for `tool.result`). */
  | { kind: 'oversized'; type: string; bytes: number; limit: number; raw: Record<string, unknown> }
  /** Nested deeper than MAX_JSON_DEPTH: only its top-level `type` and `id` may be read. */
  | { kind: 'tooDeep'; type: string; limit: number; raw: Record<string, unknown> }
  | { kind: 'message'; type: string; raw: Record<string, unknown> };

export function parseFrame(data: Buffer | ArrayBuffer | Buffer[]): Frame {
  const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
  // Measured on the text, before anything walks the value (zod and JSON.stringify recurse and
  // overflow); such a frame is not parsed at all, only its top-level `type` and `id` are read.
  if (jsonTextDepthExceeds(buf, MAX_JSON_DEPTH)) return tooDeep(buf);
  let raw: unknown;
  try {
    raw = JSON.parse(buf.toString('utf8'));
  } catch (e) {
    return { kind: 'malformed', message: `message is not valid JSON: ${(e as Error).message}` };
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { kind: 'malformed', message: 'message must be a JSON object' };
  const obj = raw as Record<string, unknown>;
  if (typeof obj.type !== 'string') return { kind: 'malformed', message: 'message has no string "type"' };
  const limit = maxMessageBytes(obj.type);
  if (buf.length > limit) return { kind: 'oversized', type: obj.type, bytes: buf.length, limit, raw: obj };
  return { kind: 'message', type: obj.type, raw: obj };
}

function tooDeep(buf: Buffer): Frame {
  const top = topLevelStrings(buf, ['type', 'id']);
  if (!top) return { kind: 'malformed', message: 'message must be a JSON object' };
  if (top.type === undefined) return { kind: 'malformed', message: `message has no string "type" (and is nested deeper than ${MAX_JSON_DEPTH} levels)` };
  const limit = maxMessageBytes(top.type);
  if (buf.length > limit) return { kind: 'oversized', type: top.type, bytes: buf.length, limit, raw: top };
  return { kind: 'tooDeep', type: top.type, limit: MAX_JSON_DEPTH, raw: top };
}

/** A zod error as one line a provider author can act on. */
export function describeIssues(type: string, error: z.ZodError): string {
  const parts = error.issues.slice(0, 3).map((i) => `${[type, ...i.path.map(String)].join('.')}: ${i.message}`);
  if (error.issues.length > 3) parts.push(`(${error.issues.length - 3} more)`);
  return `invalid ${type}: ${parts.join('; ')}`;
}

export interface Rejection {
  code: GatewayErrorCode;
  message: string;
  /** AUTH_FAILED and UNSUPPORTED_VERSION close the connection. */
  fatal?: boolean;
}
export type Checked<T> = { ok: true; value: T } | ({ ok: false } & Rejection);

/**
 * Tool names are unique within one provider, `<provider>__<tool>` is a name the LLM APIs accept,
 * and each `parameters` compiles.
 */
export function checkTools(type: string, provider: string, tools: ToolDef[]): Rejection | undefined {
  const seen = new Set<string>();
  for (const t of tools) {
    if (seen.has(t.name)) return { code: 'TOOL_CONFLICT', message: `${type}: tool "${t.name}" is declared twice` };
    seen.add(t.name);
    const bad = llmNameProblem(`${provider}__${t.name}`);
    if (bad) return { code: 'TOOL_CONFLICT', message: `${type}: tool "${t.name}": the model would see it as ${bad}; rename it` };
  }
  for (const t of tools) {
    const err = jsonSchemaError(t.parameters);
    if (err) return { code: 'INVALID_JSON', message: `${type}: tool "${t.name}": ${err}` };
  }
  return undefined;
}

function capped(type: string, raw: Record<string, unknown>): Rejection | undefined {
  if (Array.isArray(raw.tools) && raw.tools.length > MAX_TOOLS) {
    return { code: 'PAYLOAD_TOO_LARGE', message: `${type}: ${raw.tools.length} tools declared; a provider may offer at most ${MAX_TOOLS}` };
  }
  return undefined;
}

/** Provider names become part of LLM tool names (`<provider>__<tool>`). */
const PROVIDER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Everything about a `hello` that does not depend on gateway state. Version first: it is fatal. */
export function checkHello(raw: Record<string, unknown>): Checked<HelloMessage & { tools: ToolDef[] }> {
  if (raw.protocolVersion !== PROTOCOL_VERSION) {
    return {
      ok: false,
      code: 'UNSUPPORTED_VERSION',
      fatal: true,
      message: `protocolVersion ${JSON.stringify(raw.protocolVersion ?? null)} is not supported; this gateway speaks ${PROTOCOL_VERSION}`,
    };
  }
  const cap = capped('hello', raw);
  if (cap) return { ok: false, ...cap };
  const parsed = helloMessageSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, code: 'INVALID_JSON', message: describeIssues('hello', parsed.error) };
  const hello = { ...parsed.data, tools: parsed.data.tools ?? [] };
  if (!PROVIDER_NAME.test(hello.name)) {
    return { ok: false, code: 'INVALID_JSON', message: `hello.name "${hello.name}" must match ^[A-Za-z0-9_-]{1,64}$ (it prefixes the tool names the model sees)` };
  }
  const badName = serverNameProblem(hello.name);
  if (badName) return { ok: false, code: 'TOOL_CONFLICT', message: `hello.name ${badName}; choose another name` };
  const bad = checkTools('hello', hello.name, hello.tools);
  return bad ? { ok: false, ...bad } : { ok: true, value: hello };
}

export function checkToolsUpdate(raw: Record<string, unknown>, provider: string): Checked<ToolsUpdateMessage> {
  const cap = capped('tools.update', raw);
  if (cap) return { ok: false, ...cap };
  const parsed = toolsUpdateMessageSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, code: 'INVALID_JSON', message: describeIssues('tools.update', parsed.error) };
  const bad = checkTools('tools.update', provider, parsed.data.tools);
  return bad ? { ok: false, ...bad } : { ok: true, value: parsed.data };
}

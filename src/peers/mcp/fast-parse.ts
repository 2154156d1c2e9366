/**
 * The two checks every MCP tool call's answer goes through, with a hand-written fast path for
 * the common shape and the SDK's own zod schema for everything else.
 *
 * bench/mcp.ts showed the SDK's generic checks (a zod union over every JSON-RPC message kind,
 * then one over every content block kind) as the largest part of patchbay's own time on a
 * call's answer. The fast paths accept only what those schemas accept unchanged: a plain
 * result response, and a result made of text blocks only. Anything else, including every
 * malformed message, takes the schema path and fails with the schema's own error.
 */
import { ReadBuffer, STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { CallToolResultSchema, JSONRPCMessageSchema, type CallToolResult, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isRecord } from '../../util/guards.js';
import { InvalidParams } from '../../rpc/errors.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../util/json-depth.js';

const NEWLINE = 0x0a;

/**
 * Newline-delimited JSON-RPC from a stdio server (spec "Transports": one message per line),
 * with the same limits and errors as the SDK's ReadBuffer it replaces.
 */
export class FastReadBuffer extends ReadBuffer {
  private pending: Buffer | undefined;
  private readonly max: number;

  constructor(maxBufferSize = STDIO_DEFAULT_MAX_BUFFER_SIZE) {
    super({ maxBufferSize });
    this.max = maxBufferSize;
  }

  override append(chunk: Buffer): void {
    const size = (this.pending?.length ?? 0) + chunk.length;
    if (size > this.max) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.max} bytes`);
    }
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
  }

  override readMessage(): JSONRPCMessage | null {
    const buf = this.pending;
    if (!buf) return null;
    const end = buf.indexOf(NEWLINE);
    if (end < 0) return null;
    const line = buf.toString('utf8', 0, end);
    this.pending = end + 1 < buf.length ? buf.subarray(end + 1) : undefined;
    // JSON.parse ignores a trailing \r; a SyntaxError here is the server's fault, as in the SDK.
    const value: unknown = JSON.parse(line);
    // Before any recursive walk (zod, JSON.stringify of a tool result): a value nested 200,000
    // levels deep parses fine and then overflows the stack of whatever reads it.
    if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) return tooDeep(value);
    return isPlainResultResponse(value) ? value : JSONRPCMessageSchema.parse(value);
  }

  override clear(): void {
    this.pending = undefined;
  }
}

/**
 * A response nested too deep becomes an error response, so the call it answers ends with a
 * tool error the model can read; anything else too deep is an error the SDK reports (logged,
 * the message dropped, the connection kept).
 */
function tooDeep(value: unknown): JSONRPCMessage {
  const id = isRecord(value) ? value.id : undefined;
  const message = `the server's message is nested deeper than ${MAX_JSON_DEPTH} levels`;
  if (isRecord(value) && !('method' in value) && (typeof id === 'string' || typeof id === 'number')) {
    return { jsonrpc: '2.0', id, error: { code: InvalidParams, message } };
  }
  throw new Error(`${message}; ignored`);
}

/** `{jsonrpc: "2.0", id, result: {…}}` and nothing else, with no `_meta` to check. */
function isPlainResultResponse(v: unknown): v is JSONRPCMessage {
  if (!isRecord(v) || v.jsonrpc !== '2.0' || !isRecord(v.result) || v.result._meta !== undefined) return false;
  const id = v.id;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)))) return false;
  return keyCount(v) === 3;
}

/**
 * `tools/call` results: a result whose content is text blocks only (no annotations, no
 * `_meta`) and at most `isError` besides is taken as it is; anything else is checked by the
 * SDK's CallToolResultSchema. The same answer as `CallToolResultSchema.safeParse`.
 */
export function parseCallToolResult(value: unknown): { success: true; data: CallToolResult; error?: undefined } | { success: false; data?: undefined; error: z.ZodError } {
  if (isPlainTextResult(value)) return { success: true, data: value };
  const checked = CallToolResultSchema.safeParse(value);
  return checked.success ? { success: true, data: checked.data } : { success: false, error: checked.error };
}

/** parseCallToolResult as a schema, for the SDK's `callTool` (whose issues it reports unchanged). */
export const callToolResultSchema = z.unknown().transform((value, ctx): CallToolResult => {
  const checked = parseCallToolResult(value);
  if (checked.success) return checked.data;
  for (const issue of checked.error.issues) ctx.addIssue({ ...issue });
  return z.NEVER;
});

function isPlainTextResult(v: unknown): v is CallToolResult {
  if (!isRecord(v) || !Array.isArray(v.content)) return false;
  for (const key in v) if (key !== 'content' && key !== 'isError') return false;
  if (v.isError !== undefined && typeof v.isError !== 'boolean') return false;
  for (const block of v.content as unknown[]) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string' || keyCount(block) !== 2) return false;
  }
  return true;
}

function keyCount(o: object): number {
  let n = 0;
  for (const _ in o) n++;
  return n;
}

/**
 * Gateway tool results (specs/tap-provider-gateway.md `tool.result`) and failure texts. The
 * in-flight calls of a connection are a PendingCalls (core/pending-calls.ts).
 */
import type { EndReason } from '../../shapes/pending-calls.js';
import { textResult, type ToolResult } from '../../shapes/tool.js';
import type { ToolResultMessage } from '../../protocol/gateway/index.js';

/** `tool.result` → the ToolResult the model reads (spec `tool.result`). */
export function toToolResult(msg: ToolResultMessage): ToolResult {
  if (msg.error !== undefined) return textResult(msg.errorCode ? `${msg.errorCode}: ${msg.error}` : msg.error, true);
  const data = msg.data;
  return textResult(typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data)));
}

export function failure(code: string, message: string): ToolResult {
  return textResult(`${code}: ${message}`, true);
}

/** A gateway call cancelled or timed out (spec: the chat reads CANCELLED). */
export function ended(tool: string, reason: EndReason, timeoutMs: number): ToolResult {
  return failure('CANCELLED', reason === 'timeout' ? `tool call "${tool}" timed out after ${timeoutMs} ms` : `tool call "${tool}" was cancelled`);
}

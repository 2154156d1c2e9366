/**
 * What a Bound provider may send: `tool.result`, `push`, `tools.update` (`goodbye` is handled for
 * every state by the connection). specs/tap-provider-gateway.md "Messages", "Tool call terminal semantics".
 */
import { pushMessageSchema, toolResultMessageSchema, type ToolResultMessage } from '../../protocol/gateway/index.js';
import { failure, toToolResult } from './calls.js';
import type { Binding, ProviderConnection } from './connection.js';
import { checkToolsUpdate, describeIssues, type Checked, type Rejection } from './validation.js';

/** `raw` is a Bound connection's message; `rejected` is set when the frame already failed a check. */
export function handleBound(conn: ProviderConnection, b: Binding, raw: Record<string, unknown>, rejected?: Rejection): void {
  switch (raw.type) {
    case 'tool.result':
      return onResult(conn, b, raw, rejected);
    case 'push':
      return onPush(conn, b, raw);
    case 'tools.update':
      return onToolsUpdate(conn, b, raw);
    default:
      return conn.wrongState(String(raw.type));
  }
}

function onResult(conn: ProviderConnection, b: Binding, raw: Record<string, unknown>, rejected?: Rejection): void {
  let problem = rejected;
  if (!problem) {
    const msg = checkResult(raw);
    if (msg.ok) {
      // Rule 1: the first terminal outcome wins; a late or duplicate result is silently ignored
      // (after a cancel the call has already settled as CANCELLED: rule 2).
      if (!b.calls.finish(msg.value.id, toToolResult(msg.value))) conn.host.log.debug(`provider ${b.name}: ignored result for settled or unknown call ${msg.value.id}`);
      return;
    }
    problem = msg;
  }
  const id = typeof raw.id === 'string' ? raw.id : undefined;
  if (id !== undefined && b.calls.isPending(id)) {
    // Invalid but correlatable: that call fails with the validation error.
    conn.sendError(problem.code, problem.message, 'tool.result');
    b.calls.finish(id, failure(problem.code, problem.message));
    return;
  }
  if (id !== undefined && b.calls.wasSettled(id)) return conn.sendError(problem.code, problem.message, 'tool.result');
  // Rule 4: cannot be correlated while calls are in flight.
  conn.ambiguous(problem.code, problem.message, 'tool.result');
}

function onPush(conn: ProviderConnection, b: Binding, raw: Record<string, unknown>): void {
  const parsed = pushMessageSchema.safeParse(raw);
  if (!parsed.success) return conn.sendError('INVALID_JSON', describeIssues('push', parsed.error), 'push');
  const p = parsed.data;
  if (p.sessionId !== undefined && p.sessionId !== b.chatId) {
    return conn.sendError('INVALID_SESSION', `push.sessionId ${p.sessionId} is not the bound session ${b.chatId}`, 'push');
  }
  conn.host.push({
    chatId: b.chatId,
    provider: b.name,
    stream: p.stream ?? b.name,
    level: p.level,
    text: p.event,
    ...(p.metadata ? { metadata: p.metadata } : {}),
  });
}

/** Replaces the whole list atomically; on failure the old list stays. In-flight calls go on. */
function onToolsUpdate(conn: ProviderConnection, b: Binding, raw: Record<string, unknown>): void {
  const checked = checkToolsUpdate(raw, b.name);
  if (!checked.ok) return conn.sendError(checked.code, checked.message, 'tools.update');
  const u = checked.value;
  if (u.sessionId !== undefined && u.sessionId !== b.chatId) {
    return conn.sendError('INVALID_SESSION', `tools.update.sessionId ${u.sessionId} is not the bound session ${b.chatId}`, 'tools.update');
  }
  const before = { defs: b.defs, tools: b.tools };
  b.defs = u.tools;
  b.tools = conn.toTools(b);
  const refused = conn.host.toolsChanged(b);
  if (refused) {
    // Nothing was registered: the old list stays, as for any failed update.
    b.defs = before.defs;
    b.tools = before.tools;
    conn.sendError('TOOL_CONFLICT', `tools.update: ${refused}`, 'tools.update');
  }
}

/**
 * The common answer, `{type, id, data}`, is checked by hand (the hot path); anything else by
 * the schema, whose rules the hand check follows and whose messages explain what is wrong.
 */
function checkResult(raw: Record<string, unknown>): Checked<ToolResultMessage> {
  if (typeof raw.id === 'string' && raw.id !== '' && raw.data !== undefined && raw.error === undefined && raw.errorCode === undefined) {
    return { ok: true, value: raw as ToolResultMessage };
  }
  const parsed = toolResultMessageSchema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, code: 'INVALID_JSON', message: describeIssues('tool.result', parsed.error) };
}

/**
 * The remote API's routes, the first slice of ECA's (src/eca/remote/routes.clj, handlers.clj):
 *
 *   GET  /api/v1/health                          no auth: `{ status: "ok", version }`
 *   GET  /api/v1/chats/:id                       the chat and its `pendingToolCalls`
 *   GET  /api/v1/events                          SSE: `session:connected`, then chat events
 *   POST /api/v1/chats/:id/approve/:toolCallId   204, as ECA
 *   POST /api/v1/chats/:id/reject/:toolCallId    204, as ECA
 *
 * Errors are ECA's body, `{ "error": { "code", "message" } }`. patchbay's additions: every chat
 * event carries `id: <chatId>:<seq>` (the chat id URI-encoded; seq counts from 1 in each chat, on
 * the last SSE event a chat event becomes), and `/events?chat=<id>&after=<n>` (or `Last-Event-ID`)
 * streams only that chat, its events after n first, then live; a chat's `lastSeq` says where it is.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toEcaNotifications } from '../eca-events.js';
import { toEcaToolDetails } from '../eca-tool-details.js';
import { patchbayVersion } from '../../util/version.js';
import { errorMessage, logger } from '../../util/log.js';
import { bearerMatches, loopbackHost } from './auth.js';
import { SseStream } from './sse.js';
import { ReplayUnavailable, type AttachFrom, type PendingApproval, type RemotePort, type SeqChatEvent } from './port.js';

const log = logger('remote');

export interface RemoteContext {
  token: string;
  /** The port listened on (the Host header must name it). */
  listenPort: () => number;
  port: RemotePort;
  /** `session:connected`'s payload (ECA handlers.clj `session-state`, the fields patchbay has). */
  session: () => Record<string, unknown>;
  /** Open SSE streams, closed by the server when it stops. */
  streams: Set<SseStream>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function noContent(res: ServerResponse, headers: Record<string, string>): void {
  res.writeHead(204, headers);
  res.end();
}

/** ECA middleware.clj `wrap-cors`: the request's Origin reflected (the token is what guards). */
function corsHeaders(req: IncomingMessage): Record<string, string> {
  const origin = req.headers.origin;
  return {
    'Access-Control-Allow-Origin': typeof origin === 'string' ? origin : '*',
    'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
    'Access-Control-Allow-Headers': 'Content-Type, Authorization, Last-Event-ID',
    ...(req.headers['access-control-request-private-network'] === 'true' ? { 'Access-Control-Allow-Private-Network': 'true' } : {}),
    Vary: 'Origin',
  };
}

export function handleRequest(ctx: RemoteContext, req: IncomingMessage, res: ServerResponse): void {
  const headers = corsHeaders(req);
  try {
    route(ctx, req, res, headers);
  } catch (e) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (e instanceof HttpError) return json(res, e.status, { error: { code: e.code, message: e.message } }, headers);
    log.warn(`remote API: ${req.method} ${req.url}: ${errorMessage(e)}`);
    json(res, 500, { error: { code: 'internal_error', message: errorMessage(e) } }, headers);
  }
}

function route(ctx: RemoteContext, req: IncomingMessage, res: ServerResponse, headers: Record<string, string>): void {
  // The body of any request is not read (no route takes one yet): drained, so the socket is reusable.
  req.resume();
  if (!loopbackHost(req.headers.host, ctx.listenPort())) throw new HttpError(403, 'forbidden_host', 'The Host header must name this machine (127.0.0.1, localhost or [::1])');
  if (req.method === 'OPTIONS') return noContent(res, headers);
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const seg = segments(url.pathname);
  const method = req.method;
  const is = (...path: string[]): boolean => seg.length === path.length + 2 && seg[0] === 'api' && seg[1] === 'v1' && path.every((p, i) => p === '*' || p === seg[i + 2]);

  if (method === 'GET' && is('health')) return json(res, 200, { status: 'ok', version: patchbayVersion() }, headers);
  if (!bearerMatches(req.headers.authorization, ctx.token)) throw new HttpError(401, 'unauthorized', 'Missing or invalid Authorization Bearer token');

  if (method === 'GET' && is('events')) return events(ctx, req, url, res, headers);
  if (method === 'GET' && is('chats', '*')) return json(res, 200, chatBody(ctx.port, seg[3]), headers);
  if (method === 'POST' && (is('chats', '*', 'approve', '*') || is('chats', '*', 'reject', '*'))) {
    const [chatId, action, toolCallId] = [seg[3], seg[4], seg[5]];
    if (!ctx.port.chat(chatId)) throw chatNotFound(chatId);
    const outcome = ctx.port.answer(chatId, toolCallId, action === 'approve');
    if (outcome === 'unknown') throw new HttpError(404, 'tool_call_not_found', `Tool call ${toolCallId} does not exist`);
    // patchbay: ECA answers 204 whatever the call's state; here a second answer learns it lost.
    if (outcome === 'alreadyAnswered') throw new HttpError(409, 'tool_call_not_pending', `Tool call ${toolCallId} was already answered`);
    return noContent(res, headers);
  }
  throw new HttpError(404, 'not_found', 'Route not found');
}

function segments(pathname: string): string[] {
  try {
    return pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    throw new HttpError(400, 'invalid_request', 'The path is not valid percent-encoding');
  }
}

function chatNotFound(chatId: string): HttpError {
  return new HttpError(404, 'chat_not_found', `Chat ${chatId} does not exist`);
}

function chatBody(port: RemotePort, chatId: string): Record<string, unknown> {
  const chat = port.chat(chatId);
  if (!chat) throw chatNotFound(chatId);
  return { ...chat, pendingToolCalls: port.pending(chatId).map(pendingBody) };
}

/** ECA handlers.clj `pending-tool-calls`: what a client that missed the events needs to draw the approval. */
function pendingBody(p: PendingApproval): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    server: p.server === 'patchbay' ? 'eca' : p.server,
    origin: p.origin,
    arguments: p.arguments ?? {},
    manualApproval: true,
    ...(p.summary !== undefined ? { summary: p.summary } : {}),
    ...(p.details ? { details: toEcaToolDetails(p.details) } : {}),
  };
}

/** `<chatId>:<seq>`, the chat id URI-encoded (so the id is one line and splits at its last colon). */
export function eventId(chatId: string, seq: number): string {
  return `${encodeURIComponent(chatId)}:${seq}`;
}

function nonNegativeInt(text: string, what: string): number {
  if (!/^\d{1,15}$/.test(text)) throw new HttpError(400, 'invalid_request', `${what} must be a non-negative integer, got ${JSON.stringify(text.slice(0, 40))}`);
  return Number(text);
}

/**
 * Where the stream resumes: `Last-Event-ID` (what EventSource sends on reconnecting; `<chatId>:<seq>`,
 * or a bare `<seq>` with `?chat=`) wins over `?after=`; `?chat=` alone replays nothing.
 */
function resumeFrom(req: IncomingMessage, url: URL): { chat?: string; from?: AttachFrom } {
  const chat = url.searchParams.get('chat') ?? undefined;
  const after = url.searchParams.get('after') ?? undefined;
  const last = req.headers['last-event-id'];
  if (typeof last === 'string' && last.trim() !== '') {
    const text = last.trim();
    const colon = text.lastIndexOf(':');
    let chatId = chat;
    if (colon >= 0) {
      try {
        chatId = decodeURIComponent(text.slice(0, colon));
      } catch {
        throw new HttpError(400, 'invalid_request', 'Last-Event-ID is not an id this server sent');
      }
      if (chat !== undefined && chatId !== chat) throw new HttpError(400, 'invalid_request', `Last-Event-ID names chat ${chatId}, not ${chat}`);
    }
    if (chatId === undefined) throw new HttpError(400, 'invalid_request', 'A bare Last-Event-ID needs ?chat=<id>');
    return { chat: chatId, from: { chatId, afterSeq: nonNegativeInt(colon >= 0 ? text.slice(colon + 1) : text, 'Last-Event-ID') } };
  }
  if (after !== undefined && chat === undefined) throw new HttpError(400, 'invalid_request', '?after= needs ?chat=<id>');
  if (chat === undefined) return {};
  return { chat, ...(after !== undefined ? { from: { chatId: chat, afterSeq: nonNegativeInt(after, 'after') } } : {}) };
}

/** ECA's event names: `chat/contentReceived` → `chat:content-received`. */
export function sseEventName(method: string): string {
  return method.replace('/', ':').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

function events(ctx: RemoteContext, req: IncomingMessage, url: URL, res: ServerResponse, headers: Record<string, string>): void {
  const { chat, from } = resumeFrom(req, url);
  if (chat !== undefined) {
    const info = ctx.port.chat(chat);
    if (!info) throw chatNotFound(chat);
    if (from && from.afterSeq > info.lastSeq) throw new HttpError(400, 'invalid_request', `Chat ${chat} has no event ${from.afterSeq} yet (its last is ${info.lastSeq})`);
  }
  // Checked before the stream opens, so a stale cursor is an HTTP error, not a broken stream.
  const stream = new SseStream(res, headers);
  const send = (e: SeqChatEvent): void => {
    if (chat !== undefined && e.chatId !== chat) return;
    const notes = toEcaNotifications(e.chatId, e.event, e.parentChatId);
    // The id rides on the last: a client cut off inside one chat event gets all of it again.
    notes.forEach((n, i) => stream.send(sseEventName(n.method), n.params, i === notes.length - 1 ? eventId(e.chatId, e.seq) : undefined));
  };
  stream.send('session:connected', ctx.session());
  let detach: () => void;
  try {
    detach = ctx.port.attach({ chatEvent: send }, from);
  } catch (e) {
    // The chat's oldest kept events moved past the cursor meanwhile: said on the stream, then closed.
    const message = e instanceof ReplayUnavailable ? e.message : errorMessage(e);
    stream.send('session:error', { error: { code: e instanceof ReplayUnavailable ? 'cursor_expired' : 'internal_error', message } });
    stream.close();
    return;
  }
  ctx.streams.add(stream);
  stream.onClose(() => {
    detach();
    ctx.streams.delete(stream);
  });
}

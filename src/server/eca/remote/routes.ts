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
import { patchbayVersion } from '../../../util/version.js';
import { errorMessage, logger } from '../../../util/log.js';
import { bearerMatches, loopbackHost } from './auth.js';
import { SseStream } from './sse.js';
import type { PendingItem, PortNotice, SeqEvent } from '../../../core/chat/port.js';
import type { FrontEndPort } from '../../../runtime/front-end-port.js';
import type { ChatStates } from './chat-state.js';

const log = logger('remote');

export interface RemoteContext {
  token: string;
  /** The port listened on (the Host header must name it). */
  listenPort: () => number;
  /** The host's port: remote front ends attach here, answers go through it. */
  port: FrontEndPort;
  /** The chat's stored title, when the chat exists (live or stored); undefined when it does not. */
  chat: (chatId: string) => { title?: string } | undefined;
  statuses: ChatStates;
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
  if (method === 'GET' && is('chats', '*')) return json(res, 200, chatBody(ctx, seg[3]), headers);
  if (method === 'POST' && (is('chats', '*', 'approve', '*') || is('chats', '*', 'reject', '*'))) {
    const [chatId, action, toolCallId] = [seg[3], seg[4], seg[5]];
    if (!ctx.chat(chatId)) throw chatNotFound(chatId);
    if (ctx.port.answer(chatId, toolCallId, { kind: 'approval', approved: action === 'approve' }, 'remote')) return noContent(res, headers);
    if (!seenToolCall(ctx.port, chatId, toolCallId)) throw new HttpError(404, 'tool_call_not_found', `Tool call ${toolCallId} does not exist`);
    // patchbay: ECA answers 204 whatever the call's state; here a later answer learns it lost.
    throw new HttpError(409, 'tool_call_not_pending', `Tool call ${toolCallId} is not waiting for an answer (already answered)`);
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

/** Whether the chat's log names this tool call (read only when an answer did not win). */
function seenToolCall(port: FrontEndPort, chatId: string, toolCallId: string): boolean {
  port.flush();
  return port.eventLog.after(chatId, 0).some((r) => r.event.type === 'toolCall' && r.event.id === toolCallId);
}

/** The chat's number so far: what `?after=` names to replay nothing already seen. */
function lastSeq(port: FrontEndPort, chatId: string): number {
  port.flush();
  return port.eventLog.lastSeq(chatId);
}

function chatBody(ctx: RemoteContext, chatId: string): Record<string, unknown> {
  const chat = ctx.chat(chatId);
  if (!chat) throw chatNotFound(chatId);
  const pending = ctx.port.pending(chatId);
  return {
    id: chatId,
    ...(chat.title !== undefined ? { title: chat.title } : {}),
    status: ctx.statuses.statusOf(chatId),
    lastSeq: lastSeq(ctx.port, chatId),
    pendingToolCalls: pending.flatMap((p) => (p.kind === 'approval' ? [pendingBody(p)] : [])),
  };
}

/** ECA handlers.clj `pending-tool-calls`: what a client that missed the events needs to draw the approval. */
function pendingBody(p: Extract<PendingItem, { kind: 'approval' }>): Record<string, unknown> {
  const c = p.call;
  return {
    id: p.id,
    name: c.name,
    server: c.server === 'patchbay' ? 'eca' : c.server,
    origin: c.origin,
    arguments: c.arguments ?? {},
    manualApproval: true,
    ...(c.summary !== undefined ? { summary: c.summary } : {}),
    ...(c.details ? { details: toEcaToolDetails(c.details) } : {}),
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
function resumeFrom(req: IncomingMessage, url: URL): { chat?: string; from?: { chatId: string; afterSeq: number } } {
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
    if (!ctx.chat(chat)) throw chatNotFound(chat);
    if (from) {
      // Checked before the stream opens, so a cursor the log cannot serve is an HTTP error.
      const last = lastSeq(ctx.port, chat);
      if (from.afterSeq > last) throw new HttpError(400, 'invalid_request', `Chat ${chat} has no event ${from.afterSeq} yet (its last is ${last})`);
      const first = ctx.port.eventLog.firstSeq(chat);
      if (first > from.afterSeq + 1) throw new HttpError(409, 'cursor_expired', `Chat ${chat}: events before ${first} are no longer kept; replay from ${first - 1} or later`);
    }
  }
  const stream = new SseStream(res, headers);
  const chatEvent = (e: SeqEvent): void => {
    const ev = e.event;
    // A view event is ECA's own notification (messenger.clj); a chat event is what the editor gets.
    const notes =
      ev.type === 'chatOpened'
        ? [{ method: 'chat/opened', params: { chatId: e.chatId, ...(ev.title !== undefined ? { title: ev.title } : {}) } }]
        : ev.type === 'chatCleared'
          ? [{ method: 'chat/cleared', params: { chatId: e.chatId, messages: true } }]
          : ev.type === 'chatDeleted'
            ? [{ method: 'chat/deleted', params: { chatId: e.chatId } }]
            : toEcaNotifications(e.chatId, ev, e.parentChatId);
    // The id rides on the last SSE event of a chat event (a client cut off inside one gets all of it
    // again), and only on the followed chat's own (a subagent's chat has numbers of its own). The
    // all-chats stream carries none: one chat's number is no cursor for the others, and a
    // reconnect sending it back would narrow the stream to that chat.
    const id = chat !== undefined && e.chatId === chat ? eventId(e.chatId, e.seq) : undefined;
    notes.forEach((n, i) => stream.send(sseEventName(n.method), n.params, i === notes.length - 1 ? id : undefined));
  };
  const notice = (n: unknown): void => {
    const p = n as PortNotice;
    // Another front end answered first: the client withdraws its approval card (the call's own event follows).
    if (p.type === 'answered' && (chat === undefined || p.chatId === chat)) stream.send('chat:answered', { chatId: p.chatId, kind: p.kind, id: p.id, by: p.by });
  };
  stream.send('session:connected', ctx.session());
  const attachment = ctx.port.attach(
    { name: 'remote', capabilities: { images: true, ask: false, elicitation: false, files: false, terminal: false }, chatEvent, notice },
    chat !== undefined ? { chatId: chat, ...(from ? { afterSeq: from.afterSeq } : {}) } : {},
  );
  ctx.streams.add(stream);
  stream.onClose(() => {
    attachment.detach();
    ctx.streams.delete(stream);
  });
}

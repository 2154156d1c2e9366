/**
 * The remote API (src/server/eca/remote/) over real HTTP on 127.0.0.1: auth, Host check, run file,
 * routes and ECA's error bodies, SSE framing, replay from a sequence number then live, and
 * approvals where the first answer wins. The chat events go into a real FrontEndPort (its
 * in-memory log) by hand, as core's ChatService would send them.
 */
import { mkdirSync, mkdtempSync, readFileSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../src/core/events.js';
import { FrontEndPort } from '../../src/runtime/front-end-port.js';
import { KEEP_TURNS } from '../../src/core/chat/port.js';
import { RemoteServer, remoteRunDir, remoteRunFileSchema } from '../../src/server/eca/remote/remote-server.js';
import { bearerMatches, loopbackHost } from '../../src/server/eca/remote/auth.js';
import { sseEventName } from '../../src/server/eca/remote/routes.js';
import { SseClient, httpRequest } from '../support/sse-client.js';

const started: RemoteServer[] = [];
const clients: SseClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  for (const s of started.splice(0)) await s.close();
});

const text = (t: string): ChatEvent => ({ type: 'assistantText', text: t });
const ask = (id: string): ChatEvent => ({
  type: 'toolCall',
  state: 'announced',
  id,
  name: 'shell_command',
  server: 'patchbay',
  origin: 'native',
  arguments: { command: 'rm x' },
  summary: 'Running rm x',
  needsApproval: true,
});

async function boot(config: { password?: string; port?: number } = {}) {
  const home = mkdtempSync(join(tmpdir(), 'pb-remote-'));
  const answers: string[] = [];
  const port = new FrontEndPort();
  // As the ChatService: an answer takes when a call of that id waits.
  const waiting = new Set<string>();
  const take = (kind: string, c: string, id: string): boolean => (waiting.delete(`${c} ${id}`) ? (answers.push(`${kind} ${c} ${id}`), true) : false);
  const sink = port.chatEvents({ approve: (c, id) => take('approve', c, id), reject: (c, id) => take('reject', c, id) });
  const chats = new Set<string>();
  const log = {
    record: (chatId: string, e: ChatEvent, parentChatId?: string) => {
      chats.add(chatId);
      if (e.type === 'toolCall' && e.state === 'announced' && e.needsApproval) waiting.add(`${chatId} ${e.id}`);
      if (e.type === 'toolCall' && e.state !== 'announced') waiting.delete(`${chatId} ${e.id}`);
      sink.event(chatId, e, parentChatId);
    },
  };
  const server = await RemoteServer.start({
    config: { enabled: true, port: 0, ...config },
    home,
    port,
    chat: (id) => (chats.has(id) ? {} : undefined),
    session: () => ({ version: 'test', chats: [...chats] }),
  });
  started.push(server);
  const auth = { Authorization: `Bearer ${server.token}` };
  const api = (path: string) => `${server.url}/api/v1${path}`;
  const sse = async (path: string, headers: Record<string, string> = {}) => {
    const c = await SseClient.open(api(path), { ...auth, ...headers });
    clients.push(c);
    return c;
  };
  return { home, log, server, answers, auth, api, sse };
}

describe('remote API: auth, host, run file', () => {
  it('health needs no token; everything else answers 401 with ECA’s body without the right bearer token', async () => {
    const { api, auth } = await boot();
    const health = await httpRequest(api('/health'));
    expect(health.status).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });
    for (const headers of <Array<Record<string, string>>>[
      {},
      { Authorization: 'Bearer wrong' },
      { Authorization: auth.Authorization.toLowerCase() },
      { Authorization: auth.Authorization.replace('Bearer ', 'Basic ') },
      { Authorization: `${auth.Authorization}x` },
    ]) {
      const r = await httpRequest(api('/chats/c1'), { headers });
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.json()).toEqual({ error: { code: 'unauthorized', message: 'Missing or invalid Authorization Bearer token' } });
    }
    const ok = await httpRequest(api('/chats/c1'), { headers: auth });
    // Past the gate: the chat is unknown.
    expect(ok.status).toBe(404);
    expect(ok.json().error.code).toBe('chat_not_found');
  });

  it('a configured password is the token', async () => {
    const { api } = await boot({ password: 'my-secret' });
    expect((await httpRequest(api('/chats/x'), { headers: { Authorization: 'Bearer my-secret' } })).status).toBe(404);
    expect((await httpRequest(api('/chats/x'), { headers: { Authorization: 'Bearer my-secre' } })).status).toBe(401);
  });

  it('a Host header that does not name loopback is refused (403) even with the token', async () => {
    const { api, auth, server } = await boot();
    const r = await httpRequest(api('/chats/c1'), { headers: { ...auth, Host: `evil.example:${server.port}` } });
    expect(r.status).toBe(403);
    expect(r.json().error.code).toBe('forbidden_host');
    expect((await httpRequest(api('/health'), { headers: { Host: `localhost:${server.port + 1}` } })).status).toBe(403);
    expect((await httpRequest(api('/health'), { headers: { Host: `localhost:${server.port}` } })).status).toBe(200);
  });

  it('writes a 0600 run file with the URL and a token of at least 128 bits, and removes it on close', async () => {
    const { server } = await boot();
    const run = remoteRunFileSchema.parse(JSON.parse(readFileSync(server.runFile, 'utf8')));
    expect(run).toMatchObject({ pid: process.pid, url: server.url, port: server.port, token: server.token });
    expect(Buffer.from(run.token, 'base64url').length).toBeGreaterThanOrEqual(16);
    if (process.platform !== 'win32') {
      expect(statSync(server.runFile).mode & 0o777).toBe(0o600);
      expect(statSync(join(server.runFile, '..')).mode & 0o777).toBe(0o700);
    }
    await server.close();
    expect(existsSync(server.runFile)).toBe(false);
  });

  it('a starting server removes the run files of remote APIs whose process is gone, not those of live ones', async () => {
    const home = mkdtempSync(join(tmpdir(), 'pb-remote-'));
    const dir = remoteRunDir(home);
    mkdirSync(dir, { recursive: true });
    // A pid that surely ended: a child that has exited.
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const body = (pid: number) => JSON.stringify({ version: 1, pid, startedAt: 1, url: 'http://127.0.0.1:1', port: 1, token: 't' });
    writeFileSync(join(dir, 'dead.json'), body(gone), { mode: 0o600 });
    writeFileSync(join(dir, 'live.json'), body(process.ppid), { mode: 0o600 });
    const port = new FrontEndPort();
    const server = await RemoteServer.start({ config: { enabled: true, port: 0 }, home, port, chat: () => undefined, session: () => ({}) });
    started.push(server);
    expect(existsSync(join(dir, 'dead.json'))).toBe(false);
    expect(existsSync(join(dir, 'live.json'))).toBe(true);
    expect(existsSync(server.runFile)).toBe(true);
  });

  it('a configured port that is taken is a clear error, not another port', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(boot({ port })).rejects.toThrow(new RegExp(`could not listen on 127.0.0.1 port ${port}`));
    } finally {
      blocker.close();
    }
  });

  it('unknown routes and methods are 404 not_found; bad query values are 400', async () => {
    const { api, auth, log } = await boot();
    log.record('c1', text('a'));
    const nf = await httpRequest(api('/nope'), { headers: auth });
    expect(nf.status).toBe(404);
    expect(nf.json()).toEqual({ error: { code: 'not_found', message: 'Route not found' } });
    expect((await httpRequest(api('/chats/c1'), { method: 'DELETE', headers: auth })).status).toBe(404);
    for (const q of ['?chat=c1&after=-1', '?chat=c1&after=x', '?after=1', '?chat=c1&after=9']) {
      const r = await httpRequest(api(`/events${q}`), { headers: auth });
      expect(r.status, q).toBe(400);
      expect(r.json().error.code).toBe('invalid_request');
    }
    expect((await httpRequest(api('/events?chat=zz&after=0'), { headers: auth })).status).toBe(404);
    const badPath = await httpRequest(api('/chats/%E0%A4%A'), { headers: auth });
    expect(badPath.status).toBe(400);
    expect(badPath.json().error.code).toBe('invalid_request');
    // Still serving after the bad requests.
    expect((await httpRequest(api('/health'))).status).toBe(200);
  });

  it('bearerMatches and loopbackHost', () => {
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('Bearer abcd', 'abc')).toBe(false);
    expect(bearerMatches(undefined, 'abc')).toBe(false);
    expect(loopbackHost('[::1]:80', 80)).toBe(true);
    expect(loopbackHost('127.0.0.1', 80)).toBe(true);
    expect(loopbackHost('127.0.0.2:80', 80)).toBe(false);
    expect(loopbackHost('localhost.evil:80', 80)).toBe(false);
    expect(sseEventName('chat/contentReceived')).toBe('chat:content-received');
    expect(sseEventName('chat/statusChanged')).toBe('chat:status-changed');
  });
});

describe('remote API: events and approvals', () => {
  it('session:connected first, then the chat’s events after N in order, then live ones: no gap, no duplicate', async () => {
    const { log, sse } = await boot();
    for (const t of ['a', 'b', 'c', 'd']) log.record('c1', text(t));
    log.record('c2', text('other chat'));
    const c = await sse('/events?chat=c1&after=2');
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    await c.waitFor((e) => e.id === 'c1:4', 'the replayed 4th event');
    log.record('c1', text('e'));
    log.record('c2', text('not this chat'));
    log.record('c1', { type: 'status', status: 'running' });
    await c.waitFor((e) => e.id === 'c1:6', 'the live 6th event');
    expect(c.events[0].event).toBe('session:connected');
    expect(c.events[0].data).toMatchObject({ version: 'test' });
    expect(c.events.slice(1).map((e) => [e.event, e.id, e.data])).toEqual([
      ['chat:content-received', 'c1:3', { chatId: 'c1', role: 'assistant', content: { type: 'text', text: 'c' } }],
      ['chat:content-received', 'c1:4', { chatId: 'c1', role: 'assistant', content: { type: 'text', text: 'd' } }],
      ['chat:content-received', 'c1:5', { chatId: 'c1', role: 'assistant', content: { type: 'text', text: 'e' } }],
      ['chat:status-changed', 'c1:6', { chatId: 'c1', status: 'running' }],
    ]);
  });

  it('Last-Event-ID resumes after that event (it wins over ?after=); without ?chat= every chat is live, with no ids', async () => {
    const { log, sse } = await boot();
    for (const t of ['a', 'b', 'c']) log.record('c 1', text(t));
    const c = await sse('/events?chat=c%201&after=0', { 'Last-Event-ID': 'c%201:2' });
    await c.waitFor((e) => e.id === 'c%201:3');
    expect(c.events.slice(1).map((e) => e.id)).toEqual(['c%201:3']);
    const all = await sse('/events');
    await all.waitFor((e) => e.event === 'session:connected');
    log.record('c2', text('x'));
    log.record('c 1', text('y'));
    await all.waitFor((e) => e.event === 'chat:content-received' && JSON.stringify(e.data).includes('"y"'));
    // Both chats' events, with no ids: a reconnect would send one chat's number back and narrow the stream to it.
    expect(all.events.slice(1).map((e) => [(e.data as { chatId?: string }).chatId, e.id])).toEqual([
      ['c2', undefined],
      ['c 1', undefined],
    ]);
  });

  it('a chat event that becomes several SSE events carries its id on the last', async () => {
    const { log, sse } = await boot();
    log.record('c1', text('a'));
    const c = await sse('/events?chat=c1&after=1');
    log.record('c1', { type: 'turnEnded', stopReason: 'end_turn' });
    await c.waitFor((e) => e.id === 'c1:2');
    expect(c.events.slice(1).map((e) => [e.event, e.id])).toEqual([
      ['chat:status-changed', undefined],
      ['chat:content-received', 'c1:2'],
    ]);
  });

  it('a replay from before the oldest kept event is refused (409 cursor_expired), not a gap', async () => {
    const { log, api, auth } = await boot();
    // The log keeps the last KEEP_TURNS turns of a chat.
    for (let i = 0; i < KEEP_TURNS + 2; i++) {
      log.record('c1', text(String(i)));
      log.record('c1', { type: 'turnEnded', stopReason: 'end_turn' });
    }
    const r = await httpRequest(api('/events?chat=c1&after=1'), { headers: auth });
    expect(r.status).toBe(409);
    expect(r.json().error.code).toBe('cursor_expired');
    const from = Number(/replay from (\d+)/.exec(r.json().error.message)?.[1]);
    expect(from).toBeGreaterThan(1);
    const ok = await SseClient.open(api(`/events?chat=c1&after=${from}`), auth);
    clients.push(ok);
    expect(ok.status).toBe(200);
  });

  it('GET /chats/:id lists the pending approval; the first answer wins, a second is 409; the stream sees the call go on', async () => {
    const { log, api, auth, answers, sse } = await boot();
    log.record('c1', { type: 'status', status: 'running' });
    log.record('c1', ask('t1'));
    const chat = (await httpRequest(api('/chats/c1'), { headers: auth })).json();
    expect(chat).toMatchObject({ id: 'c1', status: 'running', lastSeq: 2 });
    expect(chat.pendingToolCalls).toEqual([{ id: 't1', name: 'shell_command', server: 'eca', origin: 'native', arguments: { command: 'rm x' }, manualApproval: true, summary: 'Running rm x' }]);
    const c = await sse('/events?chat=c1&after=2');
    const ok = await httpRequest(api('/chats/c1/approve/t1'), { method: 'POST', headers: auth, body: '{}' });
    expect(ok.status).toBe(204);
    expect(answers).toEqual(['approve c1 t1']);
    // The ChatService announces the call running, as it would for the editor's answer.
    log.record('c1', { type: 'toolCall', state: 'running', id: 't1', name: 'shell_command', server: 'patchbay', origin: 'native', arguments: { command: 'rm x' } });
    await c.waitFor((e) => (e.data as any)?.content?.type === 'toolCallRunning');
    // The port tells the front ends it was answered (the remote's own stream too).
    expect(c.events.find((e) => e.event === 'chat:answered')?.data).toEqual({ chatId: 'c1', kind: 'approval', id: 't1', by: 'remote' });
    const again = await httpRequest(api('/chats/c1/reject/t1'), { method: 'POST', headers: auth });
    expect(again.status).toBe(409);
    expect(again.json().error.code).toBe('tool_call_not_pending');
    expect(answers).toEqual(['approve c1 t1']);
    expect((await httpRequest(api('/chats/c1'), { headers: auth })).json().pendingToolCalls).toEqual([]);
    expect((await httpRequest(api('/chats/c1/approve/nope'), { method: 'POST', headers: auth })).json().error.code).toBe('tool_call_not_found');
    expect((await httpRequest(api('/chats/zz/approve/t1'), { method: 'POST', headers: auth })).json().error.code).toBe('chat_not_found');
  });

  it('an answer given elsewhere first (the editor) leaves the remote one 409; reject goes to the sink', async () => {
    const { log, api, auth, answers } = await boot();
    log.record('c1', ask('t1'));
    log.record('c1', ask('t2'));
    // The editor rejected t1: core says so.
    log.record('c1', { type: 'toolCall', state: 'rejected', id: 't1', name: 'shell_command', server: 'patchbay', origin: 'native', reason: 'user' });
    expect((await httpRequest(api('/chats/c1/approve/t1'), { method: 'POST', headers: auth })).status).toBe(409);
    expect((await httpRequest(api('/chats/c1/reject/t2'), { method: 'POST', headers: auth })).status).toBe(204);
    expect(answers).toEqual(['reject c1 t2']);
  });

  it('closing tells open streams session:disconnecting and ends them', async () => {
    const { server, sse } = await boot();
    const c = await sse('/events');
    await c.waitFor((e) => e.event === 'session:connected');
    await server.close();
    await c.closed();
    expect(c.events.map((e) => e.event)).toEqual(['session:connected', 'session:disconnecting']);
    expect(c.events[1].data).toEqual({ reason: 'shutdown' });
  });
});

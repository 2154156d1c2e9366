/**
 * rpc/request.ts over a real in-memory stream pair: patchbay's side is a vscode-jsonrpc
 * connection, the peer is a raw reader/writer on the other ends of the pipes, so the test sees
 * every message exactly as sent (request ids, `$/cancelRequest`) and answers when it chooses.
 */
import { getEventListeners } from 'node:events';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter, type Message, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { InvalidParams, RequestCancelled } from '../../src/rpc/errors.js';
import { failPending, pendingRequests, request, RequestError } from '../../src/rpc/request.js';

interface Raw {
  id?: number | string;
  method?: string;
  params?: unknown;
}

interface Pair {
  conn: MessageConnection;
  /** Everything the peer received. */
  seen: Raw[];
  answer(msg: Record<string, unknown>): Promise<void>;
  /** The peer goes away: its output ends, so our reader sees the stream close. */
  hangUp(): void;
  dispose(): void;
}

const pairs: Pair[] = [];

function pair(): Pair {
  const toPeer = new PassThrough();
  const fromPeer = new PassThrough();
  const conn = createMessageConnection(new StreamMessageReader(fromPeer), new StreamMessageWriter(toPeer));
  const peerReader = new StreamMessageReader(toPeer);
  const peerWriter = new StreamMessageWriter(fromPeer);
  const seen: Raw[] = [];
  peerReader.listen((m: Message) => void seen.push(m as Raw));
  conn.listen();
  const p: Pair = {
    conn,
    seen,
    answer: (msg) => peerWriter.write({ jsonrpc: '2.0', ...msg } as Message),
    hangUp: () => fromPeer.end(),
    dispose: () => {
      conn.dispose();
      peerReader.dispose();
      toPeer.destroy();
      fromPeer.destroy();
    },
  };
  pairs.push(p);
  return p;
}

afterEach(() => {
  for (const p of pairs.splice(0)) p.dispose();
});

async function requestSeen(p: Pair, method: string): Promise<Raw> {
  await expect.poll(() => p.seen.find((m) => m.method === method), { timeout: 5000 }).toBeDefined();
  return p.seen.find((m) => m.method === method)!;
}

async function cancelSeenFor(p: Pair, id: Raw['id']): Promise<void> {
  await expect.poll(() => p.seen.some((m) => m.method === '$/cancelRequest' && (m.params as { id?: unknown })?.id === id), { timeout: 5000 }).toBe(true);
}

/**
 * The timers request() starts (every one has a deadline of a second or more here) that have
 * neither fired nor been cleared. (process.getActiveResourcesInfo() does not list unref'd timers.)
 */
const live = new Set<unknown>();
const realSet = globalThis.setTimeout;
const realClear = globalThis.clearTimeout;
beforeEach(() => {
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
    if ((ms ?? 0) < 100) return realSet(fn, ms);
    const t = realSet(() => (live.delete(t), fn()), ms);
    live.add(t);
    return t;
  }) as typeof setTimeout);
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation(((t?: NodeJS.Timeout) => (live.delete(t), realClear(t))) as typeof clearTimeout);
});
afterEach(() => {
  vi.restoreAllMocks();
  live.clear();
});
const timers = () => live.size;

describe('rpc request', () => {
  it('resolves with the answer and leaves no timer, listener or pending entry behind', async () => {
    const p = pair();
    const ac = new AbortController();
    const before = timers();
    const pending = request(p.conn, 'ping', { n: 1 }, { timeoutMs: 60_000, signal: ac.signal, cancel: 'lsp' });
    const sent = await requestSeen(p, 'ping');
    expect(sent.params).toEqual({ n: 1 });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    expect(pendingRequests(p.conn)).toBe(1);
    expect(timers()).toBe(before + 1);
    await p.answer({ id: sent.id, result: { pong: true } });
    await expect(pending).resolves.toEqual({ pong: true });
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(pendingRequests(p.conn)).toBe(0);
    expect(timers()).toBe(before);
    expect(p.seen.some((m) => m.method === '$/cancelRequest')).toBe(false);
  });

  it("passes the peer's error through with its code", async () => {
    const p = pair();
    const pending = request(p.conn, 'bad', {}, { timeoutMs: 60_000, cancel: 'lsp' });
    const sent = await requestSeen(p, 'bad');
    await p.answer({ id: sent.id, error: { code: InvalidParams, message: 'no such thing' } });
    const e = await pending.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResponseError);
    expect(e).toMatchObject({ code: InvalidParams, message: 'no such thing' });
  });

  it('sends no params at all when there are none', async () => {
    const p = pair();
    void request(p.conn, 'shutdown', undefined, { timeoutMs: 60_000, cancel: 'none' }).catch(() => undefined);
    const sent = await requestSeen(p, 'shutdown');
    expect('params' in sent).toBe(false);
  });

  it('times out naming the method, and the peer is sent $/cancelRequest for that id', async () => {
    const p = pair();
    const ac = new AbortController();
    const pending = request(p.conn, 'slow', {}, { timeoutMs: 100, signal: ac.signal, cancel: 'lsp' });
    const sent = await requestSeen(p, 'slow');
    const e = await pending.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RequestError);
    expect(e).toMatchObject({ reason: 'timeout', method: 'slow', message: 'slow timed out after 100 ms' });
    await cancelSeenFor(p, sent.id);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(pendingRequests(p.conn)).toBe(0);
    expect(timers()).toBe(0);
    // The peer's late "cancelled" answer is absorbed: nothing unhandled, nothing re-settled.
    await p.answer({ id: sent.id, error: { code: RequestCancelled, message: 'cancelled' } });
    await new Promise((r) => setImmediate(r));
  });

  it("names a timeout with the caller's label, in seconds when whole", async () => {
    const p = pair();
    const pending = request(p.conn, 'slow', {}, { timeoutMs: 1000, cancel: 'lsp', label: 'the slow thing' });
    const sent = await requestSeen(p, 'slow');
    await expect(pending).rejects.toThrow('the slow thing timed out after 1 s');
    await cancelSeenFor(p, sent.id);
  });

  it("with cancel 'none' a deadline only stops the wait: no $/cancelRequest", async () => {
    const p = pair();
    const pending = request(p.conn, 'slow', {}, { timeoutMs: 100, cancel: 'none' });
    await requestSeen(p, 'slow');
    await expect(pending).rejects.toThrow('slow timed out after 100 ms');
    // A message sent after the timeout would already be in `seen` by the time this one round-trips.
    const echo = request(p.conn, 'after', {}, { timeoutMs: 60_000, cancel: 'none' });
    const sent = await requestSeen(p, 'after');
    await p.answer({ id: sent.id, result: null });
    await echo;
    expect(p.seen.some((m) => m.method === '$/cancelRequest')).toBe(false);
  });

  it('an abort rejects at once and sends $/cancelRequest for that id', async () => {
    const p = pair();
    const ac = new AbortController();
    const pending = request(p.conn, 'slow', {}, { timeoutMs: 60_000, signal: ac.signal, cancel: 'lsp' });
    const sent = await requestSeen(p, 'slow');
    const before = timers();
    ac.abort();
    const e = await pending.catch((x: unknown) => x);
    expect(e).toMatchObject({ reason: 'cancelled', message: 'slow cancelled' });
    await cancelSeenFor(p, sent.id);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(timers()).toBe(before - 1);
    expect(pendingRequests(p.conn)).toBe(0);
  });

  it('an abort with a reason says why', async () => {
    const p = pair();
    const ac = new AbortController();
    const pending = request(p.conn, 'slow', {}, { timeoutMs: 60_000, signal: ac.signal, cancel: 'lsp' });
    await requestSeen(p, 'slow');
    ac.abort(new Error('user stopped the prompt'));
    await expect(pending).rejects.toThrow('slow aborted: user stopped the prompt');
  });

  it('an already aborted signal sends nothing', async () => {
    const p = pair();
    const ac = new AbortController();
    ac.abort();
    await expect(request(p.conn, 'never', {}, { timeoutMs: 60_000, signal: ac.signal, cancel: 'lsp' })).rejects.toThrow('never cancelled');
    const echo = request(p.conn, 'after', {}, { timeoutMs: 60_000, cancel: 'none' });
    await p.answer({ id: (await requestSeen(p, 'after')).id, result: 1 });
    await echo;
    expect(p.seen.some((m) => m.method === 'never')).toBe(false);
  });

  it('the peer hanging up settles every pending request at once', async () => {
    const p = pair();
    const ac = new AbortController();
    const a = request(p.conn, 'one', {}, { timeoutMs: 60_000, signal: ac.signal, cancel: 'lsp' });
    const b = request(p.conn, 'two', {}, { timeoutMs: 60_000, cancel: 'none' });
    await requestSeen(p, 'two');
    expect(pendingRequests(p.conn)).toBe(2);
    const before = timers();
    p.hangUp();
    await expect(a).rejects.toMatchObject({ reason: 'closed', message: 'one failed: connection closed' });
    await expect(b).rejects.toMatchObject({ reason: 'closed', message: 'two failed: connection closed' });
    expect(pendingRequests(p.conn)).toBe(0);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    expect(timers()).toBe(before - 2);
    // A request on the closed connection fails too, as a rejection (vscode-jsonrpc throws).
    await expect(request(p.conn, 'three', {}, { timeoutMs: 60_000, cancel: 'lsp' })).rejects.toMatchObject({ reason: 'closed' });
  });

  it('disposing the connection settles pending requests', async () => {
    const p = pair();
    const pending = request(p.conn, 'one', {}, { timeoutMs: 60_000, cancel: 'lsp' });
    await requestSeen(p, 'one');
    p.conn.dispose();
    await expect(pending).rejects.toThrow('one failed: connection closed');
  });

  it('failPending settles them with the reason its owner knows', async () => {
    const p = pair();
    const pending = request(p.conn, 'one', {}, { timeoutMs: 60_000, cancel: 'lsp' });
    await requestSeen(p, 'one');
    failPending(p.conn, new Error('fake failed: exited (code 3)'));
    await expect(pending).rejects.toThrow('fake failed: exited (code 3)');
    expect(pendingRequests(p.conn)).toBe(0);
  });
});

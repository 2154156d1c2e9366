/** Hardening: payload limits, rate limit, heartbeat (spec "Payload limits", "Error codes"). */
import { describe, expect, it } from 'vitest';
import type { ClientOptions } from 'ws';
import { OTHER_MAX, TOOL_RESULT_MAX } from '../../src/protocol/gateway/index.js';
import { Client, ctx, greet, sleep, startGateway, text, type TestGateway } from '../support/gateway-helpers.js';

async function bound(t: TestGateway, opts: ClientOptions = {}): Promise<Client> {
  const c = await Client.open(t.url, opts);
  await c.bind(t, 'prov', [greet()]);
  await c.next('session.lifecycle');
  return c;
}

/** A JSON message of exactly `bytes` bytes. */
function sized(msg: Record<string, unknown>, field: string, bytes: number): string {
  const base = JSON.stringify({ ...msg, [field]: '' });
  return JSON.stringify({ ...msg, [field]: 'x'.repeat(bytes - Buffer.byteLength(base)) });
}

describe('gateway payload limits', () => {
  it('non-result messages over 2 MB: PAYLOAD_TOO_LARGE, not fatal', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const atLimit = sized({ type: 'push', level: 'keep' }, 'event', OTHER_MAX);
    c.send(atLimit);
    await expect.poll(() => t.chats.pushes.length).toBe(1);
    const e = await c.expectError(sized({ type: 'push', level: 'keep' }, 'event', OTHER_MAX + 1), 'PAYLOAD_TOO_LARGE');
    expect(e).toMatchObject({ replyTo: 'push' });
    expect(e.message).toContain(`limit is ${OTHER_MAX}`);
    expect(t.chats.pushes).toHaveLength(1);
    c.send({ type: 'push', level: 'keep', event: 'small' });
    await expect.poll(() => t.chats.pushes.length).toBe(2);
    expect(c.isClosed).toBe(false);
  });

  it('also before binding (hello over 2 MB)', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    await c.auth(t.gateway.token);
    const big = sized({ type: 'hello', name: 'p', protocolVersion: 2, session: 'chat-1' }, 'padding', OTHER_MAX + 10);
    await c.expectError(big, 'PAYLOAD_TOO_LARGE');
  });

  it('a tool.result may be up to 5 MB', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const result = t.chats.tool('chat-1', 'prov', 'greet').call({}, ctx());
    const { id } = await c.next('tool.call');
    c.send(sized({ type: 'tool.result', id }, 'data', TOOL_RESULT_MAX));
    const r = await result;
    expect(r.error).toBe(false);
    expect(text(r).length).toBeGreaterThan(TOOL_RESULT_MAX - 100);
  });

  it('a frame over 5 MB with one call pending: the call fails PAYLOAD_TOO_LARGE; ws closes 1009', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const result = t.chats.tool('chat-1', 'prov', 'greet').call({}, ctx());
    const { id } = await c.next('tool.call');
    c.send(sized({ type: 'tool.result', id }, 'data', TOOL_RESULT_MAX + 1));
    const r = await result;
    expect(r.error).toBe(true);
    expect(text(r)).toMatch(/^PAYLOAD_TOO_LARGE: /);
    expect((await c.closed).code).toBe(1009);
    await expect.poll(() => t.gateway.providers()).toEqual([]);
  });

  it('a frame over 5 MB with several calls pending: all fail DISCONNECTED', async () => {
    const t = await startGateway();
    const c = await bound(t);
    const tool = t.chats.tool('chat-1', 'prov', 'greet');
    const a = tool.call({}, ctx());
    const b = tool.call({}, ctx());
    await c.next('tool.call');
    await c.next('tool.call');
    c.send(sized({ type: 'push', level: 'keep' }, 'event', TOOL_RESULT_MAX + 1));
    expect(text(await a)).toMatch(/^DISCONNECTED: /);
    expect(text(await b)).toMatch(/^DISCONNECTED: /);
  });
});

describe('gateway rate limit', () => {
  it('RATE_LIMITED beyond the per-second budget: the excess is dropped, the connection stays', async () => {
    const t = await startGateway({ rateLimitPerSecond: 10 });
    const c = await Client.open(t.url);
    await c.bind(t); // 2 messages of the budget
    for (let i = 0; i < 30; i++) c.send({ type: 'push', level: 'keep', event: `e${i}` });
    const e = await c.next('error');
    expect(e).toMatchObject({ code: 'RATE_LIMITED', replyTo: 'push' });
    await sleep(100);
    const accepted = t.chats.pushes.length;
    expect(accepted).toBeGreaterThanOrEqual(7);
    expect(accepted).toBeLessThanOrEqual(10);
    expect(c.inbox.filter((m) => m.code === 'RATE_LIMITED').length + 1).toBe(30 - accepted);
    expect(c.isClosed).toBe(false);
    // The bucket refills: after a second, pushes go through again.
    c.inbox.length = 0;
    await sleep(1000);
    c.send({ type: 'push', level: 'keep', event: 'later' });
    await expect.poll(() => t.chats.pushes.at(-1)?.text).toBe('later');
  });

  it('never drops tool.result (it answers our own calls)', async () => {
    const t = await startGateway({ rateLimitPerSecond: 2 }, { defaultToolTimeoutMs: 3000 });
    const c = await Client.open(t.url);
    await c.bind(t);
    const tool = t.chats.tool('chat-1', 'prov', 'greet');
    const results = Array.from({ length: 20 }, () => tool.call({}, ctx()));
    for (let i = 0; i < 20; i++) {
      const m = await c.next('tool.call');
      c.send({ type: 'tool.result', id: m.id, data: `r${i}` });
    }
    expect((await Promise.all(results)).map(text)).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`));
  });
});

describe('gateway heartbeat', () => {
  it('terminates a peer that stops answering pings', async () => {
    const t = await startGateway({}, { pingIntervalMs: 40, pongTimeoutMs: 120 });
    const silent = await bound(t, { autoPong: false }); // receives pings, never answers
    const healthy = await Client.open(t.url);
    await healthy.bind(t, 'other', [greet()]);
    const started = Date.now();
    const { code } = await silent.closed;
    const took = Date.now() - started;
    expect(code).toBe(1006); // terminated, no close handshake
    expect(took).toBeLessThan(120 + 40 + 200);
    await expect.poll(() => t.gateway.providers().map((p) => p.name)).toEqual(['other']);
    expect(t.chats.tools.has('chat-1/prov')).toBe(false);
    await sleep(300);
    expect(healthy.isClosed).toBe(false);
  });

  it('a peer whose socket is paused (reads nothing) is terminated too', async () => {
    const t = await startGateway({}, { pingIntervalMs: 40, pongTimeoutMs: 120 });
    const c = await bound(t);
    c.ws.pause();
    await expect.poll(() => t.gateway.providers(), { timeout: 2000 }).toEqual([]);
    expect(t.chats.tools.size).toBe(0);
  });
});

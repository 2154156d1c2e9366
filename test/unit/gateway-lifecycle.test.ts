/** push, session.lifecycle, shutdown and stop, FIFO (spec `push`, `session.lifecycle`, "Ordering"). */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Client, ctx, greet, sleep, startGateway, text, type TestGateway } from '../support/gateway-helpers.js';

async function bound(t: TestGateway, name = 'prov', session = 'chat-1'): Promise<Client> {
  const c = await Client.open(t.url);
  await c.bind(t, name, [greet()], session);
  expect(await c.next()).toMatchObject({ type: 'session.lifecycle', state: 'started' });
  return c;
}

describe('gateway push', () => {
  it('keep / surface / inject reach chats.push; stream defaults to the provider name', async () => {
    const t = await startGateway();
    const c = await bound(t);
    c.send({ type: 'push', level: 'keep', event: 'k' });
    c.send({ type: 'push', level: 'surface', event: 's', stream: 'detour', metadata: { url: 'x', n: 1 } });
    c.send({ type: 'push', level: 'inject', event: 'i', sessionId: 'chat-1', extra: true });
    await expect.poll(() => t.chats.pushes.length).toBe(3);
    expect(t.chats.pushes).toEqual([
      { chatId: 'chat-1', provider: 'prov', stream: 'prov', level: 'keep', text: 'k' },
      { chatId: 'chat-1', provider: 'prov', stream: 'detour', level: 'surface', text: 's', metadata: { url: 'x', n: 1 } },
      { chatId: 'chat-1', provider: 'prov', stream: 'prov', level: 'inject', text: 'i' },
    ]);
  });

  it('rejects a bad push without storing it', async () => {
    const t = await startGateway();
    const c = await bound(t);
    await c.expectError({ type: 'push', level: 'keep', event: '' }, 'INVALID_JSON');
    await c.expectError({ type: 'push', level: 'shout', event: 'x' }, 'INVALID_JSON');
    await c.expectError({ type: 'push', level: 'keep', event: 'x', metadata: [1] }, 'INVALID_JSON');
    const e = await c.expectError({ type: 'push', level: 'keep', event: 'x', sessionId: 'chat-2' }, 'INVALID_SESSION');
    expect(e).toMatchObject({ replyTo: 'push', sessionId: 'chat-1' });
    expect(t.chats.pushes).toEqual([]);
  });

  it('handles messages in order (per-connection FIFO)', async () => {
    const t = await startGateway({ rateLimitPerSecond: 10_000 });
    const c = await bound(t);
    for (let i = 0; i < 500; i++) c.send({ type: 'push', level: 'keep', event: String(i) });
    await expect.poll(() => t.chats.pushes.length).toBe(500);
    expect(t.chats.pushes.map((p) => p.text)).toEqual(Array.from({ length: 500 }, (_, i) => String(i)));
  });
});

describe('gateway lifecycle', () => {
  it('started → idle → shutdown.pending → close (provider says goodbye)', async () => {
    const t = await startGateway({}, { shutdownDeadlineMs: 5_000 });
    const c = await bound(t);
    const other = await bound(t, 'elsewhere', 'chat-2');
    t.gateway.chatStarted('chat-1');
    t.gateway.chatIdle('chat-1');
    const ended = t.gateway.chatEnded('chat-1');
    expect(await c.next()).toEqual({ type: 'session.lifecycle', sessionId: 'chat-1', state: 'started' });
    expect(await c.next()).toEqual({ type: 'session.lifecycle', sessionId: 'chat-1', state: 'idle' });
    expect(await c.next()).toEqual({ type: 'session.lifecycle', sessionId: 'chat-1', state: 'shutdown.pending', deadline: 5_000 });
    const before = Date.now();
    c.send({ type: 'goodbye', reason: 'session ending' });
    await ended;
    expect(Date.now() - before).toBeLessThan(1_000); // goodbye, not the deadline
    expect((await c.closed).code).toBe(1000);
    expect(t.gateway.providers().map((p) => p.name)).toEqual(['elsewhere']);
    // The other chat heard nothing.
    await sleep(50);
    expect(other.inbox).toEqual([]);
  });

  it('closes a provider that ignores shutdown.pending at the deadline; in-flight calls DISCONNECTED', async () => {
    const t = await startGateway({}, { shutdownDeadlineMs: 150 });
    const c = await bound(t);
    const pending = t.chats.tool('chat-1', 'prov', 'greet').call({}, ctx());
    await c.next('tool.call');
    const started = Date.now();
    await t.gateway.chatEnded('chat-1');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(await c.next()).toMatchObject({ state: 'shutdown.pending', deadline: 150 });
    expect((await c.closed).code).toBe(1001);
    expect(text(await pending)).toMatch(/^DISCONNECTED: /);
    expect(t.chats.tools.size).toBe(0);
  });

  it('chatEnded for a chat without providers resolves at once', async () => {
    const t = await startGateway();
    await t.gateway.chatEnded('chat-1');
  });

  it('stop(): shutdown.pending to every bound provider, closes all, removes the token file', async () => {
    const t = await startGateway({}, { shutdownDeadlineMs: 150 });
    const a = await bound(t, 'a');
    const b = await bound(t, 'b', 'chat-2');
    const unbound = await Client.open(t.url);
    await unbound.auth(t.gateway.token);
    b.ws.on('message', (d) => {
      if (JSON.parse(String(d)).state === 'shutdown.pending') b.send({ type: 'goodbye' });
    });
    await t.gateway.stop();
    expect(await a.next()).toMatchObject({ type: 'session.lifecycle', sessionId: 'chat-1', state: 'shutdown.pending' });
    expect((await a.closed).code).toBe(1001);
    expect((await b.closed).code).toBe(1000);
    expect((await unbound.closed).code).toBe(1001);
    expect(existsSync(t.gateway.tokenFile)).toBe(false);
    expect(t.gateway.providers()).toEqual([]);
    expect(t.chats.tools.size).toBe(0);
    // The port is closed.
    await expect(Client.open(t.url)).rejects.toThrow();
  });
});

/** Who may connect: Origin refused, Host must be loopback, connection cap, WebSocket only. */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { isLoopbackHost } from '../../src/peers/gateway/index.js';
import { Client, startGateway } from '../support/gateway-helpers.js';

/** A raw upgrade request; resolves with the HTTP status the gateway answered. */
function upgrade(port: number, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('gateway upgrade checks', () => {
  it('accepts a plain local client', async () => {
    const t = await startGateway();
    expect(await upgrade(t.port, { Host: `127.0.0.1:${t.port}` })).toBe(101);
    expect(await upgrade(t.port, { Host: `localhost:${t.port}` })).toBe(101);
  });

  it('refuses any request with an Origin header with 403, before the upgrade', async () => {
    const t = await startGateway();
    expect(await upgrade(t.port, { Host: `127.0.0.1:${t.port}`, Origin: 'https://evil.example' })).toBe(403);
    expect(await upgrade(t.port, { Host: `127.0.0.1:${t.port}`, Origin: 'null' })).toBe(403);
    // The real ws client too: the handshake fails with 403.
    const ws = new WebSocket(t.url, { origin: 'http://localhost' });
    const status = await new Promise<number>((r) => ws.on('unexpected-response', (_req, res) => r(res.statusCode ?? 0)));
    expect(status).toBe(403);
  });

  it('refuses a non-loopback Host (DNS rebinding) with 403', async () => {
    const t = await startGateway();
    expect(await upgrade(t.port, { Host: `evil.example:${t.port}` })).toBe(403);
    expect(await upgrade(t.port, { Host: `127.0.0.1.evil.example:${t.port}` })).toBe(403);
    expect(await upgrade(t.port, { Host: `192.168.1.10:${t.port}` })).toBe(403);
    // Loopback name, wrong port.
    expect(await upgrade(t.port, { Host: `127.0.0.1:${t.port + 1}` })).toBe(403);
  });

  it('answers plain HTTP with 426', async () => {
    const t = await startGateway();
    const status = await new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port: t.port }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(status).toBe(426);
  });

  it('refuses connections beyond maxConnections authenticated ones, and accepts again once one leaves', async () => {
    const t = await startGateway({ maxConnections: 2 });
    const a = await Client.open(t.url);
    await a.auth(t.gateway.token);
    await (await Client.open(t.url)).auth(t.gateway.token);
    expect(await upgrade(t.port, { Host: `127.0.0.1:${t.port}` })).toBe(503);
    a.send({ type: 'goodbye' });
    await a.closed;
    await (await Client.open(t.url)).auth(t.gateway.token);
  });

  it('sockets that never authenticate do not count; past their own cap the oldest is closed first', async () => {
    const t = await startGateway({ maxConnections: 2, maxUnauthenticated: 3 });
    const idle: Client[] = [];
    for (let i = 0; i < 6; i++) idle.push(await Client.open(t.url));
    // The three oldest made room for the three newest, with a reason.
    for (const c of idle.slice(0, 3)) {
      expect(await c.closed).toMatchObject({ code: 1008 });
      expect(c.inbox[0]).toMatchObject({ type: 'error', code: 'AUTH_FAILED', message: expect.stringMatching(/waiting to authenticate/) });
    }
    expect(idle.slice(3).every((c) => !c.isClosed)).toBe(true);
    // A real provider still gets in and binds, twice (maxConnections counts only these).
    await (await Client.open(t.url)).bind(t, 'one');
    await (await Client.open(t.url)).bind(t, 'two');
    expect(await upgrade(t.port, { Host: `127.0.0.1:${t.port}` })).toBe(503);
  });
});

describe('isLoopbackHost', () => {
  it('knows the loopback names, with or without the port', () => {
    expect(isLoopbackHost('127.0.0.1:9400', 9400)).toBe(true);
    expect(isLoopbackHost('localhost:9400', 9400)).toBe(true);
    expect(isLoopbackHost('LOCALHOST:9400', 9400)).toBe(true);
    expect(isLoopbackHost('[::1]:9400', 9400)).toBe(true);
    expect(isLoopbackHost('[::1]', 9400)).toBe(true);
    expect(isLoopbackHost('127.0.0.1', 9400)).toBe(true);
    expect(isLoopbackHost('127.0.0.1:9401', 9400)).toBe(false);
    expect(isLoopbackHost('[::2]:9400', 9400)).toBe(false);
    expect(isLoopbackHost('example.com', 9400)).toBe(false);
    expect(isLoopbackHost(undefined, 9400)).toBe(false);
    expect(isLoopbackHost('', 9400)).toBe(false);
  });
});

/** Gateway authentication (spec "Authentication"): token, token file, AUTH_FAILED, auth deadline. */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { Client, startGateway, sleep } from '../support/gateway-helpers.js';

// Spy on the real timingSafeEqual to prove the token check always goes through it.
const crypto = vi.hoisted(() => ({ calls: [] as Array<[number, number]> }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  return {
    ...real,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      crypto.calls.push([a.byteLength, b.byteLength]);
      return real.timingSafeEqual(a, b);
    },
  };
});
const { tokenMatches } = await import('../../src/peers/gateway/index.js');

describe('gateway token', () => {
  it('is ptk- + 128 random bits, fresh per gateway', async () => {
    const a = await startGateway();
    const b = await startGateway();
    expect(a.gateway.token).toMatch(/^ptk-[0-9a-f]{32}$/);
    expect(b.gateway.token).not.toBe(a.gateway.token);
  });

  it('is fresh on every start', async () => {
    const t = await startGateway();
    const first = t.gateway.token;
    await t.gateway.stop();
    await t.gateway.start();
    expect(t.gateway.token).not.toBe(first);
    expect(readFileSync(t.gateway.tokenFile, 'utf8')).toBe(t.gateway.token);
  });

  it('is written to <home>/gateway/provider-token (dir 0700, file 0600) and removed on stop', async () => {
    const t = await startGateway();
    expect(t.gateway.tokenFile).toBe(`${t.home}/gateway/provider-token`);
    expect(readFileSync(t.gateway.tokenFile, 'utf8')).toBe(t.gateway.token);
    expect(statSync(t.gateway.tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(t.gateway.tokenFile)).mode & 0o777).toBe(0o700);
    await t.gateway.stop();
    expect(existsSync(t.gateway.tokenFile)).toBe(false);
  });

  it('is compared in constant time, even when the lengths differ', () => {
    const token = 'ptk-00112233445566778899aabbccddeeff';
    crypto.calls.length = 0;
    expect(tokenMatches(token, token)).toBe(true);
    expect(tokenMatches(token, 'ptk-00112233445566778899aabbccddeefe')).toBe(false);
    expect(tokenMatches(token, 'ptk-short')).toBe(false);
    expect(tokenMatches(token, token + 'x')).toBe(false);
    expect(tokenMatches(token, 42)).toBe(false);
    // Every check ran one full comparison of two equal-length (sha-256) digests, whatever was given.
    expect(crypto.calls).toEqual(Array(5).fill([32, 32]));
  });
});

describe('gateway auth', () => {
  it('answers a valid auth with sessions', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    const sessions = await c.auth(t.gateway.token);
    expect(sessions).toEqual({ type: 'sessions', active: t.chats.sessions });
  });

  it('AUTH_FAILED on a wrong token: error, then the connection closes', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    const e = await c.expectError({ type: 'auth', token: 'ptk-wrong' }, 'AUTH_FAILED');
    expect(e.replyTo).toBe('auth');
    expect((await c.closed).code).toBe(1008);
  });

  it('AUTH_FAILED when the first message is not auth', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    const e = await c.expectError({ type: 'hello', name: 'x', protocolVersion: 2, session: 'chat-1' }, 'AUTH_FAILED');
    expect(e.replyTo).toBe('hello');
    await c.closed;
  });

  it('AUTH_FAILED when auth has no token', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    await c.expectError({ type: 'auth' }, 'AUTH_FAILED');
    await c.closed;
  });

  it('closes a connection that does not authenticate before the deadline', async () => {
    const t = await startGateway({}, { authTimeoutMs: 150 });
    const c = await Client.open(t.url);
    const started = Date.now();
    const e = await c.next('error');
    expect(e.code).toBe('AUTH_FAILED');
    expect((await c.closed).code).toBe(1008);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(t.gateway.providers()).toEqual([]);
  });

  it('does not close an authenticated connection at the auth deadline', async () => {
    const t = await startGateway({}, { authTimeoutMs: 100 });
    const c = await Client.open(t.url);
    await c.auth(t.gateway.token);
    await sleep(250);
    expect(c.isClosed).toBe(false);
    expect(c.inbox).toEqual([]);
  });

  it('unknown types before auth are UNKNOWN_TYPE, not fatal', async () => {
    const t = await startGateway();
    const c = await Client.open(t.url);
    const e = await c.expectError({ type: 'future.thing' }, 'UNKNOWN_TYPE');
    expect(e.replyTo).toBe('future.thing');
    await c.auth(t.gateway.token);
  });
});

/**
 * The OpenCtx host over plain HTTP: who may call (token, Origin, Host), routing, the
 * `{result}` / `{error}` envelope with JSON-RPC-like codes, body cap, and user module providers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenCtxHost, OpenCtxError, bearerMatches, diagnostics, isLoopbackHostHeader, mcpResources, moduleProvider, type OpenCtxProviderImpl } from '../../src/peers/openctx/host/index.js';
import type { Logger } from '../../src/util/log.js';

const quietLog: Logger = { error() {}, warn() {}, info() {}, debug() {} };
const token = randomBytes(24).toString('hex');

/** Raw request with full control over headers (fetch would set Host itself). */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'POST', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          /* leave as text */
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

describe('OpenCtx host over HTTP', () => {
  let host: OpenCtxHost;
  let url: string;
  let internalThrown = 0;

  const providers: Record<string, OpenCtxProviderImpl> = {
    diagnostics: diagnostics({ get: async () => [] }),
    mcp: mcpResources({ list: () => [], read: async () => '' }),
    broken: {
      meta: () => ({ name: 'broken' }),
      mentions: () => {
        internalThrown++;
        const e = new Error('database exploded');
        e.stack = 'Error: database exploded\n    at secret/path/file.ts:1:1';
        throw e;
      },
      items: () => {
        throw new OpenCtxError(-32001, 'rate limited, try later');
      },
      annotations: () => null,
    },
    bare: { meta: () => ({}) },
  };

  beforeAll(async () => {
    host = new OpenCtxHost({ host: '127.0.0.1', port: 0, token, providers, log: quietLog });
    ({ url } = await host.start());
  });
  afterAll(async () => {
    await host.stop();
  });

  const post = (name: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${url}/providers/${name}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it('start() reports a loopback URL on a free port', () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(url).port)).toBeGreaterThan(0);
  });

  it('answers meta with the token', async () => {
    const r = await post('diagnostics', { method: 'meta', params: {} });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ result: { name: 'patchbay diagnostics', annotations: {} } });
  });

  it('meta always includes name, filled from the provider key when missing', async () => {
    const r = await post('bare', { method: 'meta' });
    expect(r.body).toEqual({ result: { name: 'bare' } });
  });

  it('401 without a token', async () => {
    const r = await fetch(`${url}/providers/diagnostics`, { method: 'POST', body: JSON.stringify({ method: 'meta' }) });
    expect(r.status).toBe(401);
    const body = (await r.json()) as any;
    expect(body.error.message).toMatch(/bearer token/);
    expect(body.result).toBeUndefined();
  });

  it('401 with a wrong token, a token prefix, or a non-Bearer scheme', async () => {
    for (const authorization of [`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, `Bearer`, token]) {
      const r = await post('diagnostics', { method: 'meta' }, { authorization });
      expect(r.status, authorization).toBe(401);
      expect(r.body.error.code).toBeTypeOf('number');
    }
  });

  it('the token is not accepted as a query parameter', async () => {
    const r = await fetch(`${url}/providers/diagnostics?token=${token}`, { method: 'POST', body: JSON.stringify({ method: 'meta' }) });
    expect(r.status).toBe(401);
  });

  it('401 comes before 404: unknown providers are not revealed to callers without the token', async () => {
    const r = await fetch(`${url}/providers/nope`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(401);
  });

  it('403 for requests with an Origin header, even with the token', async () => {
    const r = await post('diagnostics', { method: 'meta' }, { origin: 'https://evil.example' });
    expect(r.status).toBe(403);
    expect(r.body.error.message).toMatch(/origin/i);
  });

  it('403 for a non-loopback Host header (DNS rebinding), even with the token', async () => {
    const port = new URL(url).port;
    for (const hostHeader of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, `10.0.0.1:${port}`]) {
      const r = await raw(`${url}/providers/diagnostics`, {
        headers: { host: hostHeader, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'meta' }),
      });
      expect(r.status, hostHeader).toBe(403);
      expect(r.body.error.message).toMatch(/loopback/);
    }
    const ok = await raw(`${url}/providers/diagnostics`, {
      headers: { host: `localhost:${port}`, authorization: `Bearer ${token}` },
      body: JSON.stringify({ method: 'meta' }),
    });
    expect(ok.status).toBe(200);
    expect(ok.body.result.name).toBe('patchbay diagnostics');
  });

  it('404 {error} for an unknown provider, naming it', async () => {
    const r = await post('nope', { method: 'meta' });
    expect(r.status).toBe(404);
    expect(r.body.error.message).toContain('"nope"');
    expect(r.body.result).toBeUndefined();
  });

  it('404 for other paths, 405 for non-POST', async () => {
    const a = await raw(`${url}/other`, { headers: { authorization: `Bearer ${token}` }, body: '{}' });
    expect(a.status).toBe(404);
    const b = await raw(`${url}/providers/diagnostics`, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
    expect(b.status).toBe(405);
  });

  it('-32601 for an unknown method, naming the method and the provider', async () => {
    const r = await post('diagnostics', { method: 'frobnicate', params: {} });
    expect(r.body.error.code).toBe(-32601);
    expect(r.body.error.message).toContain('"frobnicate"');
    expect(r.body.error.message).toContain('"diagnostics"');
    expect(r.body.error.message).toContain('supported: meta, annotations');
  });

  it('-32602 for bad params, naming the field', async () => {
    const a = await post('diagnostics', { method: 'annotations', params: { uri: 'file:///a.ts' } });
    expect(a.body.error.code).toBe(-32602);
    expect(a.body.error.message).toMatch(/^invalid params for annotations: content: /);
    const b = await post('mcp', { method: 'items', params: { mention: { title: 'x', uri: 42 } } });
    expect(b.body.error.code).toBe(-32602);
    expect(b.body.error.message).toContain('mention.uri');
    const c = await post('mcp', { method: 'mentions', params: { query: 7 } });
    expect(c.body.error.message).toContain('query');
    const d = await post('mcp', { method: 'mentions', params: {}, settings: 'nope' });
    expect(d.body.error.code).toBe(-32602);
    expect(d.body.error.message).toContain('settings');
  });

  it('-32600 for a message without a method, -32700 for broken JSON', async () => {
    const a = await post('mcp', { params: {} });
    expect(a.body.error.code).toBe(-32600);
    expect(a.body.error.message).toContain('method');
    const b = await post('mcp', '{"method": ');
    expect(b.body.error.code).toBe(-32700);
  });

  it('empty results are [] (truthy), including methods a provider does not implement', async () => {
    expect((await post('mcp', { method: 'mentions', params: { query: 'zzz' } })).body).toEqual({ result: [] });
    expect((await post('diagnostics', { method: 'annotations', params: { uri: 'file:///a.ts', content: '' } })).body).toEqual({ result: [] });
    expect((await post('diagnostics', { method: 'mentions', params: {} })).body).toEqual({ result: [] });
    expect((await post('broken', { method: 'annotations', params: { uri: 'file:///a.ts', content: '' } })).body).toEqual({ result: [] });
    expect((await post('mcp', { method: 'items', params: {} })).body).toEqual({ result: [] });
  });

  it('-32603 for a throwing provider, with the message but no stack', async () => {
    const r = await post('broken', { method: 'mentions', params: {} });
    expect(internalThrown).toBe(1);
    expect(r.status).toBe(200);
    expect(r.body.error.code).toBe(-32603);
    expect(r.body.error.message).toContain('database exploded');
    expect(r.body.error.message).toContain('"broken"');
    expect(JSON.stringify(r.body)).not.toContain('secret/path');
  });

  it('an OpenCtxError keeps its own code and message', async () => {
    const r = await post('broken', { method: 'items', params: {} });
    expect(r.body).toEqual({ error: { code: -32001, message: 'rate limited, try later' } });
  });

  it('413 for bodies over 1 MB; the host keeps serving', async () => {
    const big = JSON.stringify({ method: 'mentions', params: { query: 'x'.repeat(1024 * 1024) } });
    const r = await raw(`${url}/providers/mcp`, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: big });
    expect(r.status).toBe(413);
    expect(r.body.error.message).toContain('1048576');
    const after = await post('mcp', { method: 'mentions', params: { query: 'x'.repeat(1000) } });
    expect(after.body).toEqual({ result: [] });
  });

  it('a body just under the cap is accepted', async () => {
    const body = JSON.stringify({ method: 'mentions', params: { query: 'y'.repeat(1024 * 1024 - 100) } });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(1024 * 1024);
    const r = await post('mcp', body);
    expect(r.body).toEqual({ result: [] });
  });
});

describe('OpenCtx host helpers and lifecycle', () => {
  it('bearerMatches compares the whole token', () => {
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`Bearer ${token}0`, token)).toBe(false);
    expect(bearerMatches(undefined, token)).toBe(false);
    expect(bearerMatches('Bearer ', token)).toBe(false);
  });

  it('isLoopbackHostHeader accepts loopback names with no port or the own port only', () => {
    expect(isLoopbackHostHeader('127.0.0.1:5000', 5000)).toBe(true);
    expect(isLoopbackHostHeader('localhost', 5000)).toBe(true);
    expect(isLoopbackHostHeader('[::1]:5000', 5000)).toBe(true);
    expect(isLoopbackHostHeader('127.0.0.1:5001', 5000)).toBe(false);
    expect(isLoopbackHostHeader('example.com:5000', 5000)).toBe(false);
    expect(isLoopbackHostHeader(undefined, 5000)).toBe(false);
  });

  it('refuses non-loopback listen addresses and weak tokens', () => {
    expect(() => new OpenCtxHost({ host: '0.0.0.0' as '127.0.0.1', port: 0, token, providers: {}, log: quietLog })).toThrow(/loopback/);
    expect(() => new OpenCtxHost({ host: '127.0.0.1', port: 0, token: '', providers: {}, log: quietLog })).toThrow(/token/);
  });

  it('stop() closes the port and disposes providers', async () => {
    let disposed = 0;
    const h = new OpenCtxHost({ host: '127.0.0.1', port: 0, token, providers: { p: { meta: () => ({ name: 'p' }), dispose: () => void disposed++ } }, log: quietLog });
    const { url } = await h.start();
    // keep-alive connection open while stopping
    await fetch(`${url}/providers/p`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{"method":"meta"}' });
    await h.stop();
    expect(disposed).toBe(1);
    await expect(fetch(`${url}/providers/p`, { method: 'POST', body: '{}' })).rejects.toThrow();
  });

  it('a provider call that hangs answers -32603 after the call timeout', async () => {
    const h = new OpenCtxHost({
      host: '127.0.0.1',
      port: 0,
      token,
      callTimeoutMs: 100,
      providers: { slow: { meta: () => new Promise(() => {}) } },
      log: quietLog,
    });
    const { url } = await h.start();
    try {
      const r = await fetch(`${url}/providers/slow`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: '{"method":"meta"}' });
      const body = (await r.json()) as any;
      expect(body.error.code).toBe(-32603);
      expect(body.error.message).toContain('timed out');
    } finally {
      await h.stop();
    }
  });
});

describe('moduleProvider: a user JS module served like the built-ins', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pb-openctx-mod-'));
  const good = join(dir, 'good.mjs');
  writeFileSync(
    good,
    `export default {
       meta: (_p, settings) => ({ name: 'my provider', mentions: {} }),
       mentions: (params) => [{ title: 'hello ' + (params.query ?? ''), uri: 'my:hello' }],
       items: (params, settings) => [{ title: 'greeting', ai: { content: 'hi ' + (settings.who ?? 'nobody') + ' about ' + params.mention?.uri } }],
     };\n`,
  );
  const throwing = join(dir, 'throwing.mjs');
  writeFileSync(throwing, `throw new Error('boom at import');\n`);
  const noDefault = join(dir, 'nodefault.mjs');
  writeFileSync(noDefault, `export const x = 1;\n`);
  const methodThrows = join(dir, 'methodthrows.mjs');
  writeFileSync(methodThrows, `export default { meta() { return { name: 'mt' } }, mentions() { throw new Error('inside mentions') } };\n`);

  let host: OpenCtxHost;
  let url: string;
  beforeAll(async () => {
    host = new OpenCtxHost({
      host: '127.0.0.1',
      port: 0,
      token,
      providers: {
        good: moduleProvider(good),
        throwing: moduleProvider(throwing),
        nodefault: moduleProvider(noDefault),
        missing: moduleProvider(join(dir, 'does-not-exist.mjs')),
        methodthrows: moduleProvider(methodThrows),
      },
      log: quietLog,
    });
    ({ url } = await host.start());
  });
  afterAll(async () => {
    await host.stop();
  });

  const post = (name: string, body: unknown) =>
    fetch(`${url}/providers/${name}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));

  it('serves meta, mentions and items (with settings) from the default export', async () => {
    expect((await post('good', { method: 'meta', params: {} })).body).toEqual({ result: { name: 'my provider', mentions: {} } });
    expect((await post('good', { method: 'mentions', params: { query: 'bob' } })).body).toEqual({ result: [{ title: 'hello bob', uri: 'my:hello' }] });
    const items = await post('good', { method: 'items', params: { mention: { title: 'h', uri: 'my:hello' } }, settings: { who: 'ann' } });
    expect(items.body).toEqual({ result: [{ title: 'greeting', ai: { content: 'hi ann about my:hello' } }] });
    expect((await post('good', { method: 'annotations', params: { uri: 'file:///a', content: '' } })).body).toEqual({ result: [] });
  });

  it('import failures, missing files and missing default exports become {error}', async () => {
    const a = await post('throwing', { method: 'meta' });
    expect(a.body.error.code).toBe(-32603);
    expect(a.body.error.message).toContain('boom at import');
    const b = await post('missing', { method: 'mentions', params: {} });
    expect(b.body.error.code).toBe(-32603);
    expect(b.body.error.message).toContain('cannot load OpenCtx provider module');
    const c = await post('nodefault', { method: 'meta' });
    expect(c.body.error.message).toContain('no default export');
    // the host is still up
    expect((await post('good', { method: 'meta' })).body.result.name).toBe('my provider');
  });

  it('a throwing module method becomes -32603 naming the provider', async () => {
    const r = await post('methodthrows', { method: 'mentions', params: {} });
    expect(r.body.error).toEqual({ code: -32603, message: 'provider "methodthrows" failed in mentions: inside mentions' });
  });
});

/**
 * The OAuth client pieces on their own (src/util/oauth.ts, src/util/oauth-loopback.ts): PKCE
 * against RFC 7636 Appendix B's example, and the loopback listener against real HTTP requests.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { authorizeUrl, exchangeCode, OAuthError, pkce } from '../../src/util/oauth.js';
import { listenForRedirect } from '../../src/util/oauth-loopback.js';

function get(url: string, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: host ? { host } : {} }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('PKCE (RFC 7636)', () => {
  it('derives the S256 challenge of Appendix B', () => {
    expect(pkce('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk').challenge).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes a fresh 43-character verifier each time', () => {
    const [a, b] = [pkce(), pkce()];
    expect(a.verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.verifier).not.toBe(b.verifier);
  });

  it('puts the challenge, state and scopes in the authorization URL, keeping its own query', () => {
    const codes = pkce('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
    const url = new URL(
      authorizeUrl({ authorizationUrl: 'https://as.example/authorize?tenant=t1', clientId: 'c', redirectUri: 'http://127.0.0.1:1/callback', state: 's', pkce: codes, scopes: ['a', 'b'] }),
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: 't1',
      response_type: 'code',
      client_id: 'c',
      redirect_uri: 'http://127.0.0.1:1/callback',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      scope: 'a b',
    });
  });
});

describe('the loopback redirect listener', () => {
  it('ignores other paths and foreign Host headers, takes the one callback with our state, then closes', async () => {
    const r = await listenForRedirect({ state: 'st', timeoutMs: 10_000 });
    const base = r.redirectUri.replace('/callback', '');
    expect(await get(`${base}/favicon.ico`)).toBe(404);
    // DNS rebinding: a page served from another name must not reach the listener.
    expect(await get(`${r.redirectUri}?code=c&state=st`, 'evil.example')).toBe(400);
    expect(await get(`${r.redirectUri}?code=the-code&state=st`)).toBe(200);
    await expect(r.code).resolves.toBe('the-code');
    await expect(get(`${r.redirectUri}?code=again&state=st`)).rejects.toThrow(/ECONNREFUSED/);
  });

  it('a wrong state (a web page sending the browser here) is answered 400 and ignored; the right callback still completes', async () => {
    const r = await listenForRedirect({ state: 'st', timeoutMs: 10_000 });
    expect(await get(`${r.redirectUri}?code=c&state=other`)).toBe(400);
    expect(await get(`${r.redirectUri}?error=access_denied&state=other`)).toBe(400);
    expect(await get(`${r.redirectUri}?code=good&state=st`)).toBe(200);
    await expect(r.code).resolves.toBe('good');
  });

  it('escapes the error code it echoes into the page', async () => {
    const r = await listenForRedirect({ state: 'st', timeoutMs: 10_000 });
    const body = await new Promise<string>((resolve, reject) => {
      request(`${r.redirectUri}?error=${encodeURIComponent('<script>x</script>')}&state=st`, (res) => {
        let s = '';
        res.on('data', (c: Buffer) => (s += c.toString()));
        res.on('end', () => resolve(s));
      })
        .on('error', reject)
        .end();
    });
    expect(body).not.toContain('<script>');
    expect(body).toContain('&#60;script&#62;');
    await expect(r.code).rejects.toThrow(/refused/);
  });

  it('times out, and an abort closes it at once', async () => {
    const slow = await listenForRedirect({ state: 'st', timeoutMs: 50 });
    await expect(slow.code).rejects.toBeInstanceOf(OAuthError);
    await expect(slow.code).rejects.toThrow(/timed out/);
    const ac = new AbortController();
    const r = await listenForRedirect({ state: 'st', timeoutMs: 10_000, signal: ac.signal });
    ac.abort(new Error('cancelled: a new login started'));
    await expect(r.code).rejects.toThrow(/a new login started/);
    await expect(get(r.redirectUri)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('the token endpoint', () => {
  it('posts the form (client_secret for a confidential client) and reads the tokens; garbage is a clear error', async () => {
    const forms: Array<Record<string, string>> = [];
    let reply = JSON.stringify({ access_token: 'at-0123456789', token_type: 'bearer', expires_in: 60, refresh_token: 'rt-0123456789' });
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        forms.push(Object.fromEntries(new URLSearchParams(body)));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(reply);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const tokenUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
      const o = { tokenUrl, clientId: 'c', clientSecret: 's3cret-0123456789', code: 'k', redirectUri: 'http://127.0.0.1:1/cb', verifier: 'v' };
      const t = await exchangeCode(o);
      expect(t).toMatchObject({ accessToken: 'at-0123456789', refreshToken: 'rt-0123456789', expiresAt: expect.any(Number) });
      expect(forms[0]).toEqual({ grant_type: 'authorization_code', code: 'k', redirect_uri: 'http://127.0.0.1:1/cb', code_verifier: 'v', client_id: 'c', client_secret: 's3cret-0123456789' });
      reply = 'not json at-0123456789';
      const err = await exchangeCode(o).catch((e: unknown) => e as Error);
      expect(err).toBeInstanceOf(OAuthError);
      expect((err as Error).message).toBe('The token endpoint answered HTTP 200 with something that is not JSON');
      reply = 'x'.repeat(300 * 1024);
      await expect(exchangeCode(o)).rejects.toThrow('The token endpoint answered with more than 256 KiB: not a token response');
    } finally {
      server.close();
    }
  });

  it('the loopback listener takes a fixed port when asked', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    const r = await listenForRedirect({ state: 'st', timeoutMs: 10_000, port });
    expect(r.redirectUri).toBe(`http://127.0.0.1:${port}/callback`);
    r.close();
    await expect(r.code).rejects.toThrow(/cancelled/);
  });
});

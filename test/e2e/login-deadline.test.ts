/**
 * A login whose authorization server takes the connection and never answers (issue 31 finding 4:
 * the 30 s limit on each call was `AbortSignal.any([…, AbortSignal.timeout()])`, which Node 20 may
 * never fire; a login had not failed at 75 s). Each call now fails after its deadline with a
 * message naming the endpoint, nothing is stored, and the server goes on. The deadline is
 * shortened with PATCHBAY_OAUTH_TIMEOUT_MS; nothing here looks at a clock.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliConfig, ECA, runPatchbay, tempDir, useFakeLlmSuite, useTempDirs } from './harness.js';
import { bootLogin, storedSecrets, useFakeAuth } from './login-support.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();
const auth = useFakeAuth();
const SHORT = { PATCHBAY_OAUTH_TIMEOUT_MS: '300' };

/** A TCP server on a free port that accepts every connection, reads it, and never writes a byte. */
let silent: { server: Server; sockets: Set<Socket>; url: string };
beforeAll(async () => {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.resume();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  silent = { server, sockets, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
});
afterAll(async () => {
  for (const s of silent.sockets) s.destroy();
  await new Promise((r) => silent.server.close(r));
});

describe('a login whose authorization server never answers', () => {
  it('the device endpoint: providers/login fails with a message naming it; the server keeps serving', async () => {
    const { p, pbHome } = await bootLogin({ llm: llm(), auth: auth(), track, scratch, env: SHORT, login: { deviceAuthorizationUrl: `${silent.url}/device` } });
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'device' });
    expect(res.error?.message).toContain(`The device authorization endpoint (${silent.url}) did not answer within 300 ms`);
    expect(storedSecrets(pbHome)).toBe('');
    expect((await p.request(ECA.providersList, {})).error).toBeUndefined();
  });

  it('the token endpoint, for a pasted code: the error names it and nothing is stored', async () => {
    const { p, pbHome } = await bootLogin({ llm: llm(), auth: auth(), track, scratch, env: SHORT, login: { tokenUrl: `${silent.url}/token` } });
    const res = await p.request(ECA.providersLogin, { provider: 'acme', method: 'paste' });
    const location = new URL((await fetch(res.result.url, { redirect: 'manual' })).headers.get('location')!);
    const input = await p.request(ECA.providersLoginInput, { provider: 'acme', data: { code: location.searchParams.get('code') } });
    expect(input.error?.message).toContain(`The token endpoint (${silent.url}) did not answer within 300 ms`);
    expect(input.error?.message).toMatch(/nothing was stored/);
    expect(storedSecrets(pbHome)).toBe('');
  });

  it('`patchbay login --method device` exits 1 with the reason', async () => {
    const home = scratch(tempDir('pb-login-'));
    const config = cliConfig({
      providers: { acme: { api: 'openai-chat', url: `${llm().url}/v1`, models: { m1: {} }, login: auth().loginConfig({ deviceAuthorizationUrl: `${silent.url}/device` }) } },
      defaultModel: 'acme/m1',
    });
    const r = await runPatchbay(['login', 'acme', '--method', 'device'], { home, env: { PATCHBAY_CONFIG: config, PATCHBAY_SECRET_STORE: 'file', ...SHORT }, stdin: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`The device authorization endpoint (${silent.url}) did not answer within 300 ms`);
  });
});

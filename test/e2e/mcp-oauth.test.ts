/**
 * MCP OAuth from the editor's side, over real stdio, against an OAuth-protected MCP server with its
 * own authorization server (test/fixtures/mcp-oauth.mjs) and a scripted browser
 * (test/fixtures/oauth-browser.mjs, as $BROWSER). The order follows ECA: a remote server that
 * answers 401 shows `requires-auth` (`src/eca/features/tools/mcp.clj` `initialize-mcp-oauth`);
 * `mcp/connectServer` goes `starting` → `running` once the browser comes back to the loopback
 * callback (`connect-server!`), or `failed` when the sign-in fails; `mcp/logoutServer` forgets the
 * credentials and restarts the server, which shows `requires-auth` again (`logout-server!`). The
 * plugins send these as eca-emacs `eca-mcp.el` does (`eca-mcp-connect-server` /
 * `eca-mcp-logout-server`: notifications with `{name}`) and read `status`/`hasAuth` from
 * `tool/serverUpdated` (eca-webview `src/protocol.ts` `MCPServerUpdatedParams`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture } from '../support/mcp-helpers.js';
import { ECA, EcaProc, cliConfig, runPatchbay, tempDir, useEcaProcs, useTempDirs, workspace, type Msg } from './harness.js';

const scratch = useTempDirs();
const track = useEcaProcs();

interface Fixture {
  url: string;
  base: string;
  proc: ChildProcess;
}

const fixtures: ChildProcess[] = [];
afterEach(() => {
  for (const f of fixtures.splice(0)) f.kill('SIGTERM');
});

async function startFixture(...args: string[]): Promise<Fixture> {
  const proc = spawn(process.execPath, [fixture('mcp-oauth.mjs'), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  fixtures.push(proc);
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: proc.stdout! }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`fixture exited (${code})`)));
  });
  const { url, base } = JSON.parse(line) as { url: string; base: string };
  return { url, base, proc };
}

const get = async <T>(f: Fixture, path: string): Promise<T> => (await (await fetch(`${f.base}${path}`)).json()) as T;

function server(home: string, f: Fixture, browserLog: string, env: Record<string, string> = {}): EcaProc {
  return track(
    new EcaProc({
      home,
      config: { mcpServers: { secure: { url: f.url } } },
      env: { BROWSER: `${process.execPath} ${fixture('oauth-browser.mjs')}`, OAUTH_BROWSER_LOG: browserLog, PATCHBAY_SECRET_STORE: 'file', ...env },
    }),
  );
}

const secure =
  (status: string, from = 0) =>
  (m: Msg) =>
    m.method === ECA.toolServerUpdated.method && m.params.name === 'secure' && m.params.status === status;

/** Every file patchbay wrote under its home except the secret store: logs and the SQLite store. */
function everythingButSecrets(home: string): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name !== 'secrets.json') out.push(readFileSync(p).toString('latin1'));
    }
  };
  walk(home);
  return out.join('\n');
}

const secretsFile = (home: string) => join(home, '.patchbay', 'secrets.json');
const secrets = (home: string): Record<string, string> => (existsSync(secretsFile(home)) ? (JSON.parse(readFileSync(secretsFile(home), 'utf8')) as Record<string, string>) : {});

describe('MCP OAuth from the editor (mcp/connectServer, mcp/logoutServer)', () => {
  it('requires-auth, then connectServer signs in through the browser and the loopback callback: running with hasAuth; no token in the log or the store', async () => {
    const f = await startFixture();
    const home = scratch(tempDir());
    const browserLog = join(home, 'browser.log');
    const p = server(home, f, browserLog);
    await p.initialize(scratch(workspace()));

    const waiting = await p.waitFor(secure('requires-auth'), 'secure requires-auth', 20_000);
    expect(waiting.params).toMatchObject({ type: 'mcp', url: f.url, hasAuth: false, disabled: false });
    // Nothing was registered or opened before the user asked to connect.
    expect(existsSync(browserLog)).toBe(false);
    expect((await get<Array<{ what: string }>>(f, '/_log')).map((e) => e.what)).not.toContain('register');

    const from = p.messages.length;
    p.notify(ECA.mcpConnectServer, { name: 'secure' });
    await p.waitFor(secure('starting'), 'secure starting', 10_000, from);
    const running = await p.waitFor(secure('running'), 'secure running', 30_000, from);
    expect(running.params.hasAuth).toBe(true);
    expect(running.params.tools.map((t: { name: string }) => t.name)).toEqual(['whoami', 'admin']);

    // The browser was sent to the authorization server once; PKCE S256 and the resource indicator went with it.
    const opened = readFileSync(browserLog, 'utf8').trim().split('\n');
    expect(opened).toHaveLength(1);
    expect(opened[0]).toContain(`${f.base}/authorize?`);
    const log = await get<Array<Record<string, unknown>>>(f, '/_log');
    expect(log.find((e) => e.what === 'register')?.redirect_uris).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/auth\/callback$/)]);
    expect(log.find((e) => e.what === 'authorize')).toMatchObject({ resource: f.url, method: 'S256', scope: 'mcp' });
    expect(log.find((e) => e.what === 'token')).toMatchObject({ grant: 'authorization_code', resource: f.url });

    // Tokens are in the secret store (0600) and nowhere else: not in the log, the SQLite store, or stderr.
    const tokens = await get<string[]>(f, '/_issued');
    expect(tokens.length).toBeGreaterThan(0);
    const stored = JSON.stringify(secrets(home));
    for (const t of tokens) expect(stored).toContain(t);
    expect(statSync(secretsFile(home)).mode & 0o777).toBe(0o600);
    await p.stop();
    const elsewhere = everythingButSecrets(home) + p.stderr;
    expect(elsewhere).toContain('signed in');
    for (const t of tokens) expect(elsewhere).not.toContain(t);
  });

  it('a later start uses the stored sign-in; a revoked access token is refreshed with no browser', async () => {
    const f = await startFixture();
    const home = scratch(tempDir());
    const browserLog = join(home, 'browser.log');
    const first = server(home, f, browserLog);
    await first.initialize(scratch(workspace()));
    await first.waitFor(secure('requires-auth'), 'secure requires-auth', 20_000);
    first.notify(ECA.mcpConnectServer, { name: 'secure' });
    await first.waitFor(secure('running'), 'secure running', 30_000);
    await first.stop();

    await fetch(`${f.base}/_revoke`, { method: 'POST' });
    const second = server(home, f, browserLog);
    await second.initialize(scratch(workspace()));
    const running = await second.waitFor(secure('running'), 'secure running again', 20_000);
    expect(running.params.hasAuth).toBe(true);
    expect(second.messages.some(secure('requires-auth'))).toBe(false);
    expect(readFileSync(browserLog, 'utf8').trim().split('\n')).toHaveLength(1);
    const doctor = await runPatchbay(['doctor'], { home, env: { PATCHBAY_SECRET_STORE: 'file', PATCHBAY_CONFIG: cliConfig({ mcpServers: { secure: { url: f.url } } }) }, timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/- secure: running, signed in \(OAuth\), 2 tools/);
    // doctor's own start used the refreshed token as stored: no further token request.
    expect((await get<Array<{ what: string; grant?: string }>>(f, '/_log')).filter((e) => e.what === 'token').map((e) => e.grant)).toEqual(['authorization_code', 'refresh_token']);
    await second.stop();
    for (const t of await get<string[]>(f, '/_issued')) expect(everythingButSecrets(home) + second.stderr).not.toContain(t);
  });

  it('logoutServer forgets the credentials and restarts the server: requires-auth, hasAuth false', async () => {
    const f = await startFixture();
    const home = scratch(tempDir());
    const p = server(home, f, join(home, 'browser.log'));
    await p.initialize(scratch(workspace()));
    await p.waitFor(secure('requires-auth'), 'secure requires-auth', 20_000);
    p.notify(ECA.mcpConnectServer, { name: 'secure' });
    await p.waitFor(secure('running'), 'secure running', 30_000);
    expect(Object.keys(secrets(home))).toContain('mcp/secure/tokens');

    const from = p.messages.length;
    p.notify(ECA.mcpLogoutServer, { name: 'secure' });
    const out = await p.waitFor(secure('requires-auth'), 'secure requires-auth after logout', 20_000, from);
    expect(out.params.hasAuth).toBe(false);
    // What is left is the logout's marker (for other patchbays sharing the store), with no token in it.
    expect(Object.keys(secrets(home)).filter((k) => k.startsWith('mcp/secure/'))).toEqual(['mcp/secure/tokens']);
    expect(JSON.parse(secrets(home)['mcp/secure/tokens'])).toEqual({ url: f.url, loggedOut: expect.any(Number) });
    const doctor = await runPatchbay(['doctor'], { home, env: { PATCHBAY_SECRET_STORE: 'file', PATCHBAY_CONFIG: cliConfig({ mcpServers: { secure: { url: f.url } } }) }, timeoutMs: 60_000 });
    expect(doctor.stdout).toMatch(/- secure: requires-auth \(connect it from the editor to sign in\), 0 tools/);
  });

  // ECA `remove-server!` (src/eca/features/tools/mcp.clj): removing a server from the MCP panel
  // (eca-emacs `eca-mcp--submit-remove-server`) also clears its stored OAuth credentials.
  it('removeServer of a signed-in server deletes its stored tokens and registration', async () => {
    const f = await startFixture();
    const home = scratch(tempDir());
    const configFile = join(home, 'config.json');
    writeFileSync(configFile, JSON.stringify({ mcpServers: { secure: { url: f.url } } }, null, 2));
    const p = track(
      new EcaProc({
        home,
        args: ['--config-file', configFile],
        env: { BROWSER: `${process.execPath} ${fixture('oauth-browser.mjs')}`, OAUTH_BROWSER_LOG: join(home, 'browser.log'), PATCHBAY_SECRET_STORE: 'file' },
      }),
    );
    await p.initialize(scratch(workspace()));
    await p.waitFor(secure('requires-auth'), 'secure requires-auth', 20_000);
    p.notify(ECA.mcpConnectServer, { name: 'secure' });
    await p.waitFor(secure('running'), 'secure running', 30_000);
    expect(
      Object.keys(secrets(home))
        .filter((k) => k.startsWith('mcp/secure/'))
        .sort(),
    ).toEqual(['mcp/secure/client', 'mcp/secure/tokens']);

    const res = await p.request(ECA.mcpRemoveServer, { name: 'secure' });
    expect(res.result).toEqual({ name: 'secure', removed: true });
    await p.waitFor((m) => m.method === ECA.toolServerRemoved.method && m.params.name === 'secure', 'tool/serverRemoved');
    expect(Object.keys(secrets(home)).filter((k) => k.startsWith('mcp/secure/'))).toEqual([]);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({ mcpServers: {} });
  });

  it('an authorization server answering garbage: failed with a clear error, no token stored, the server keeps answering', async () => {
    const f = await startFixture('--garbage-token');
    const home = scratch(tempDir());
    const p = server(home, f, join(home, 'browser.log'));
    await p.initialize(scratch(workspace()));
    await p.waitFor(secure('requires-auth'), 'secure requires-auth', 20_000);
    const from = p.messages.length;
    p.notify(ECA.mcpConnectServer, { name: 'secure' });
    const failed = await p.waitFor(secure('failed'), 'secure failed', 30_000, from);
    expect(failed.params.hasAuth).toBe(false);
    expect(failed.params.error).toMatch(/sign-in failed: .*not valid JSON/);
    // No second attempt through the SSE transport: the server wants OAuth, not another transport.
    expect(p.stderr).not.toMatch(/trying SSE/);
    expect(failed.params.error.length).toBeLessThan(1200);
    // The registration is kept for the next try; no token, and no PKCE verifier (one use only).
    expect(Object.keys(secrets(home))).toEqual(['mcp/secure/client']);
    // Retried unattended: requires-auth again (nothing more stored), the reason still shown, for another connect.
    const again = await p.waitFor(secure('requires-auth'), 'secure requires-auth after the failed sign-in', 20_000, p.messages.indexOf(failed));
    expect(again.params.error).toMatch(/sign-in failed/);
    expect(Object.keys(secrets(home))).toEqual(['mcp/secure/client']);
    // Still serving the editor.
    const list = await p.request(ECA.chatList, {});
    expect(list.error).toBeUndefined();
    expect(p.stderr).toMatch(/\[mcp:secure\] failed to start: sign-in failed/);
  });

  it('a sign-in the user never finishes ends with stopServer: stopped, the loopback listener closed, nothing stored but the registration', async () => {
    const f = await startFixture();
    const home = scratch(tempDir());
    const browserLog = join(home, 'browser.log');
    const p = server(home, f, browserLog, { OAUTH_BROWSER_STALL: '1' });
    await p.initialize(scratch(workspace()));
    await p.waitFor(secure('requires-auth'), 'secure requires-auth', 20_000);
    const from = p.messages.length;
    p.notify(ECA.mcpConnectServer, { name: 'secure' });
    await p.waitFor(secure('starting'), 'secure starting', 10_000, from);
    await expect.poll(() => existsSync(browserLog), { timeout: 10_000 }).toBe(true);
    const redirect = new URL(new URL(readFileSync(browserLog, 'utf8').trim()).searchParams.get('redirect_uri')!);
    // The listener answers while the sign-in is under way (a stray call with no state is refused).
    expect((await fetch(redirect)).status).toBe(400);

    p.notify(ECA.mcpStopServer, { name: 'secure' });
    await p.waitFor(secure('stopped'), 'secure stopped', 10_000, from);
    await expect
      .poll(
        async () =>
          fetch(redirect).then(
            () => 'open',
            () => 'closed',
          ),
        { timeout: 10_000 },
      )
      .toBe('closed');
    // The sign-in's PKCE verifier goes once the attempt is over.
    await expect.poll(() => Object.keys(secrets(home)), { timeout: 10_000 }).toEqual(['mcp/secure/client']);
  });

  // ECA `valid-auth-challenge?` (src/eca/oauth.clj): a 401 is an OAuth challenge only with a
  // WWW-Authenticate header; otherwise the server shows failed (eca-webview `MCPServerUpdatedParams`
  // status "failed" with its error), and the API key never leaves for another origin.
  it('a refused API key (401 with no Bearer challenge) shows failed with the 401, not requires-auth', async () => {
    const f = await startFixture('--plain-401');
    const home = scratch(tempDir());
    const p = track(new EcaProc({ home, config: { mcpServers: { secure: { url: f.url, headers: { 'X-Api-Key': 'wrong-key-value' } } } }, env: { PATCHBAY_SECRET_STORE: 'file' } }));
    await p.initialize(scratch(workspace()));
    const failed = await p.waitFor(secure('failed'), 'secure failed', 20_000);
    expect(failed.params.error).toMatch(/HTTP 401 Unauthorized .*no OAuth \(Bearer\) challenge/);
    expect(p.messages.some(secure('requires-auth'))).toBe(false);
    expect(failed.params.error).not.toContain('wrong-key-value');
  });

  // ECA `src/eca/features/tools/mcp.clj` shows the failure as the server's error
  // (`tool/serverUpdated` status "failed"); eca-webview `MCPServerUpdatedParams.error` puts it on
  // screen. A server echoing the configured key in its 401 body must not put the key there or in the log.
  it('a 401 body that echoes the configured X-Api-Key: the key is in neither the failed error nor the log', async () => {
    const f = await startFixture('--plain-401', '--echo-key');
    const home = scratch(tempDir());
    const key = 'pbk-echoed-0123456789abcdef';
    const p = track(new EcaProc({ home, config: { mcpServers: { secure: { url: f.url, headers: { 'X-Api-Key': key } } } }, env: { PATCHBAY_SECRET_STORE: 'file' } }));
    await p.initialize(scratch(workspace()));
    const failed = await p.waitFor(secure('failed'), 'secure failed', 20_000);
    expect(failed.params.error).toMatch(/HTTP 401 Unauthorized .*missing API key/);
    expect(failed.params.error).not.toContain(key);
    await p.request(ECA.chatList, {});
    expect(p.stderr).toMatch(/HTTP 401/);
    expect(p.stderr).not.toContain(key);
    expect(JSON.stringify(p.messages)).not.toContain(key);
  });

  it('connectServer for a server without OAuth (stdio) or an unknown name changes nothing and is logged', async () => {
    const home = scratch(tempDir());
    const p = track(new EcaProc({ home, config: { mcpServers: { local: { command: process.execPath, args: [fixture('mcp-notes.mjs')] } } } }));
    await p.initialize(scratch(workspace()));
    await p.waitFor((m) => m.method === ECA.toolServerUpdated.method && m.params.name === 'local' && m.params.status === 'running', 'local running', 20_000);
    const from = p.messages.length;
    p.notify(ECA.mcpConnectServer, { name: 'local' });
    p.notify(ECA.mcpConnectServer, { name: 'nobody' });
    await p.request(ECA.chatList, {});
    await expect.poll(() => p.stderr, { timeout: 10_000 }).toMatch(/connect local: .*does not sign in with OAuth/);
    await expect.poll(() => p.stderr, { timeout: 10_000 }).toMatch(/connect: no server named "nobody"/);
    expect(p.messages.slice(from).filter((m) => m.method === ECA.toolServerUpdated.method)).toEqual([]);
  });
});

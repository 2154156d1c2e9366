/**
 * `patchbay login`: the built binary as a real process, its answers piped on stdin, logins stored
 * in the file secret store of a temp PATCHBAY_HOME, OAuth against the fake authorization server
 * (test/fixtures/fake-oauth.ts), the stored key then used by `patchbay chat` against the fake LLM.
 * The steps follow ProviderLogins (the methods ECA's `providers/login` offers: eca
 * src/eca/features/login.clj, and eca-emacs eca-chat.el's login prompts: a key read without echo).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { useFakeLlm } from '../support/fake-llm-suite.js';
import { BIN, cliConfig, cliEnv, runPatchbay, tempDir, useTempDirs, type CliRun } from './harness.js';
import { useFakeAuth } from './login-support.js';
import { KEY as KEYS, usePty } from '../support/pty.js';

const scratch = useTempDirs();
const llm = useFakeLlm({ reset: 'afterEach' });
const auth = useFakeAuth();
const pty = usePty();
const KEY = 'sk-test-login-7f3a9c';
const BROWSER = `${process.execPath} ${resolve(import.meta.dirname, '../fixtures/oauth-browser.mjs')}`;

/** Provider `acme` (no key of its own) on the fake LLM, logging in at the fake authorization server. */
function config(): string {
  return cliConfig({
    providers: { acme: { api: 'openai-chat', url: `${llm().url}/v1`, models: { m1: {} }, login: auth().loginConfig() } },
    defaultModel: 'acme/m1',
    chat: { generateTitles: false, maxRetries: 0 },
  });
}

function env(extra: Record<string, string> = {}): Record<string, string> {
  return { PATCHBAY_CONFIG: config(), PATCHBAY_SECRET_STORE: 'file', ...extra };
}

function login(home: string, args: string[], stdin: string | null = '', extra: Record<string, string> = {}): Promise<CliRun> {
  return runPatchbay(['login', ...args], { home, env: env(extra), stdin });
}

function stored(home: string): Record<string, any> {
  const f = join(home, '.patchbay', 'secrets.json');
  if (!existsSync(f)) return {};
  return Object.fromEntries(Object.entries(JSON.parse(readFileSync(f, 'utf8')) as Record<string, string>).map(([k, v]) => [k, JSON.parse(v)]));
}

/** A `patchbay login` to talk with: its output so far, waiting for a line, its exit. */
const running: ChildProcess[] = [];
afterEach(() => {
  for (const c of running.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});
function interactive(home: string, args: string[], extra: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, 'login', ...args], { cwd: home, env: cliEnv(home, env(extra)), stdio: ['pipe', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const poke = (): void => waiters.splice(0).forEach((w) => w());
  child.stdout.on('data', (d: Buffer) => ((out += d.toString()), poke()));
  child.stderr.on('data', (d: Buffer) => ((err += d.toString()), poke()));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    out: () => out,
    err: () => err,
    exit,
    /** Resolves once stdout matches (generous deadline: "it happens", not how fast). */
    async until(re: RegExp): Promise<RegExpMatchArray> {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const m = re.exec(out);
        if (m) return m;
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no ${re} in stdout:\n${out}\nstderr:\n${err}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
  };
}

describe('patchbay login: API key', () => {
  it('stores a key piped on stdin, never prints it, and `patchbay chat` then sends it to the provider', { timeout: 60_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const r = await login(home, ['acme', '--method', 'api-key'], `${KEY}\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Logged in to acme (authenticated, api-key from login (manual))');
    expect(r.output).not.toContain(KEY);
    expect(stored(home)['provider/acme']).toEqual({ type: 'api-key', key: KEY });

    llm().script([{ text: 'hello from acme' }]);
    const chat = await runPatchbay(['chat', 'hi'], { home, env: env(), timeoutMs: 40_000 });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain('hello from acme');
    const req = llm().requests.find((x) => x.path === '/v1/chat/completions');
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('without a provider: lists them with their status, takes a number, then the method by number', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const p = interactive(home, []);
    const [, n] = await p.until(/(\d+)\) acme: unauthenticated/);
    await p.until(/Log in to which provider\? \[1-\d+\]: $/);
    p.child.stdin!.write('99\n'); // not a choice: asked again
    await p.until(/"99" is not one of the choices\.\n.*Log in to which provider\?.*: $/);
    p.child.stdin!.write(`${n}\n`);
    const [, m] = await p.until(/(\d+)\) Enter API key \(api-key\)/);
    await p.until(/Which method\? \[1-4\]: $/);
    p.child.stdin!.write(`${m}\n`);
    await p.until(/API Key for acme \(not shown\): $/);
    p.child.stdin!.end(`${KEY}\n`);
    expect(await p.exit).toBe(0);
    expect(p.out() + p.err()).not.toContain(KEY);
    expect(stored(home)['provider/acme']).toEqual({ type: 'api-key', key: KEY });
    // The next listing shows the login.
    const again = interactive(home, []);
    await again.until(/\d+\) acme: authenticated, api-key from login \(manual\)/);
    again.child.stdin!.end('');
    expect(await again.exit).toBe(1);
    expect(again.err()).toContain('No answer on stdin');
  });

  it('no key on stdin: exit 1, nothing stored', async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const r = await login(home, ['acme', '--method', 'api-key'], null);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('No API key entered; nothing was stored');
    expect(stored(home)).toEqual({});
  });

  it('--logout forgets the stored login', async () => {
    const home = scratch(tempDir('pb-login-home-'));
    expect((await login(home, ['acme', '--method', 'api-key'], `${KEY}\n`)).code).toBe(0);
    const out = await login(home, ['--logout', 'acme']);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('Logged out of acme.');
    expect(stored(home)['provider/acme']).toBeUndefined();
    const index = join(home, '.patchbay', 'logins.json');
    if (existsSync(index)) expect(readFileSync(index, 'utf8')).not.toContain('acme');
  });
});

describe('patchbay login: bad usage', () => {
  it('an unknown provider, a method the provider lacks, a bad --method, two providers: exit 2 with the reason', async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const unknown = await login(home, ['nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown provider "nope"; known providers:');
    expect(unknown.stderr).toContain('acme');
    const lacking = await login(home, ['openai', '--method', 'device']);
    expect(lacking.code).toBe(2);
    expect(lacking.stderr).toContain('Provider "openai" offers no "device" login (it offers: api-key)');
    const bad = await login(home, ['acme', '--method', 'magic']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--method must be one of browser, paste, device, api-key');
    expect((await login(home, ['acme', 'openai'])).code).toBe(2);
    const local = await login(home, ['ollama']);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('runs on this machine and needs no login');
    expect(stored(home)).toEqual({});
  });
});

describe('patchbay login: OAuth', () => {
  it('device code (RFC 8628): prints the URL and code, waits through authorization_pending, stores the tokens', { timeout: 30_000 }, async () => {
    auth().device = { ...auth().device, pending: 1 };
    const home = scratch(tempDir('pb-login-home-'));
    const r = await login(home, ['acme', '--method', 'device']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Open ${auth().url}/activate and enter the code`);
    expect(r.stdout).toContain('WDJB-MJHT');
    expect(r.stdout).toMatch(/Logged in to acme \((authenticated|expiring), oauth from login \(device\)/);
    const cred = stored(home)['provider/acme'];
    expect(cred).toMatchObject({ type: 'oauth', mode: 'device' });
    expect(auth().issued).toContain(cred.accessToken);
    for (const t of auth().issued) expect(r.output).not.toContain(t);
  });

  it('a refused device login exits 1 with the reason and stores nothing', { timeout: 30_000 }, async () => {
    auth().device = { ...auth().device, outcome: 'access_denied' };
    const home = scratch(tempDir('pb-login-home-'));
    const r = await login(home, ['acme', '--method', 'device']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Login to acme failed: .*access_denied|denied/);
    expect(stored(home)).toEqual({});
  });

  it('browser: opens $BROWSER on the authorization URL, the redirect comes back to the loopback listener', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const r = await login(home, ['acme', '--method', 'browser'], '', { BROWSER });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${auth().url}/authorize?`);
    expect(stored(home)['provider/acme']).toMatchObject({ type: 'oauth', mode: 'browser' });
    for (const t of auth().issued) expect(r.output).not.toContain(t);
  });

  it('paste: the code shown after the browser login is read from stdin', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    // No browser here: the user opens the printed URL themselves (fetched below, as a browser would).
    const p = interactive(home, ['acme', '--method', 'paste'], { BROWSER: 'true' });
    const [url] = await p.until(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/);
    await p.until(/Authorization code: $/);
    const redirect = await fetch(url, { redirect: 'manual' });
    const page = await (await fetch(redirect.headers.get('location')!)).text();
    p.child.stdin!.end(`${page.replace('Your code: ', '')}\n`);
    expect(await p.exit, p.err()).toBe(0);
    expect(stored(home)['provider/acme']).toMatchObject({ type: 'oauth', mode: 'paste' });
  });

  it('Ctrl-C while waiting for the browser cancels: exit 130, nothing stored, the loopback listener gone', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const p = interactive(home, ['acme', '--method', 'browser'], { BROWSER, OAUTH_BROWSER_STALL: '1' });
    const [url] = await p.until(/http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+/);
    const redirectUri = new URL(url).searchParams.get('redirect_uri')!;
    p.child.kill('SIGINT');
    expect(await p.exit).toBe(130);
    expect(p.err()).toContain('Login cancelled; nothing was stored.');
    expect(stored(home)).toEqual({});
    await expect(fetch(redirectUri)).rejects.toThrow();
  });
});

describe('patchbay login on a terminal (a real pty: test/fixtures/pty-run.py)', () => {
  const onPty = (home: string, args: string[]) => pty(process.execPath, [BIN, 'login', ...args], { cwd: home, env: cliEnv(home, env()) });

  it('the key typed is not echoed (raw mode; Backspace edits it) and is stored', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const t = onPty(home, ['acme', '--method', 'api-key']);
    await t.waitFor('API Key for acme (not shown): ');
    t.write(`${KEY}x${KEYS.backspace}${KEYS.enter}`);
    expect(await t.exit()).toBe(0);
    expect(t.text()).toContain('Logged in to acme');
    expect(t.raw).not.toContain(KEY);
    expect(t.raw).not.toContain(KEY.slice(0, 8));
    expect(stored(home)['provider/acme']).toEqual({ type: 'api-key', key: KEY });
  });

  it('Ctrl-C at the key prompt (raw mode: no SIGINT) cancels: exit 130, nothing stored', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const t = onPty(home, ['acme', '--method', 'api-key']);
    await t.waitFor('(not shown): ');
    t.write(`${KEY.slice(0, 6)}${KEYS.ctrlC}`);
    expect(await t.exit()).toBe(130);
    expect(t.text()).toContain('Login cancelled; nothing was stored.');
    expect(stored(home)).toEqual({});
  });

  it('Ctrl-C at the provider question (the terminal sends SIGINT) cancels: exit 130', { timeout: 30_000 }, async () => {
    const home = scratch(tempDir('pb-login-home-'));
    const t = onPty(home, []);
    await t.waitFor(/Log in to which provider\? \[1-\d+\]: /);
    t.write(KEYS.ctrlC);
    expect(await t.exit()).toBe(130);
    expect(t.text()).toContain('Login cancelled');
  });

  it('a spinner runs while the device login waits for the code to be entered', { timeout: 30_000 }, async () => {
    auth().device = { ...auth().device, pending: 2 };
    const home = scratch(tempDir('pb-login-home-'));
    const t = onPty(home, ['acme', '--method', 'device']);
    await t.waitFor('WDJB-MJHT');
    await t.waitFor('Waiting for the code to be entered… (Ctrl-C cancels)');
    expect(await t.exit()).toBe(0);
    expect(t.text()).toContain('Logged in to acme');
  });
});

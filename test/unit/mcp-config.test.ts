/** `mcpServers` entries: validation, bad and disabled entries as server states, the child's environment. */
import { afterEach, describe, expect, it } from 'vitest';
import { parseServerEntry } from '../../src/peers/mcp/config.js';
import { childEnv } from '../../src/peers/mcp/transport.js';
import { useHosts, captureLog, ctx, everythingBin, fixture, makeHost, text, waitFor, type TestHost } from '../support/mcp-helpers.js';

captureLog();
const host = useHosts();

/** What a user behind a TLS-inspecting proxy, in a non-English locale, has set. */
const USER_NETWORK_ENV = {
  HTTP_PROXY: 'http://proxy.corp:3128',
  HTTPS_PROXY: 'http://proxy.corp:3128',
  NO_PROXY: 'localhost,.corp',
  http_proxy: 'http://proxy.corp:3128',
  https_proxy: 'http://proxy.corp:3128',
  no_proxy: 'localhost,.corp',
  NODE_EXTRA_CA_CERTS: '/etc/corp/ca.pem',
  SSL_CERT_FILE: '/etc/corp/bundle.pem',
  SSL_CERT_DIR: '/etc/corp/certs',
  LANG: 'de_DE.UTF-8',
  LANGUAGE: 'de:en',
  LC_ALL: 'de_DE.UTF-8',
  LC_MESSAGES: 'de_DE.UTF-8',
  TMPDIR: '/var/tmp/pb-user',
  TEMP: '/var/tmp/pb-user',
  TMP: '/var/tmp/pb-user',
};

const SECRETS_ENV = {
  OPENAI_API_KEY: 'sk-openai-secret',
  ANTHROPIC_API_KEY: 'sk-ant-secret',
  GITHUB_TOKEN: 'ghp_secret',
  PATCHBAY_SECRET_STORE: 'file',
  LC_API_TOKEN: 'looks-like-a-locale',
  // The provider gateway's token: a provider among the MCP servers reads it from the run file.
  PATCHBAY_PROVIDER_TOKEN: 'ptk-secret',
  TAP_PROVIDER_TOKEN: 'ptk-secret',
};

describe('parseServerEntry', () => {
  it('accepts stdio entries as every host writes them, with defaults', () => {
    expect(parseServerEntry('a', { command: 'npx', args: ['-y', 'srv'], env: { K: 'v' } })).toEqual({
      ok: true,
      config: { kind: 'stdio', command: 'npx', args: ['-y', 'srv'], env: { K: 'v' }, disabled: false },
    });
    expect(parseServerEntry('a', { type: 'stdio', command: 'srv', disabled: true })).toEqual({
      ok: true,
      config: { kind: 'stdio', type: 'stdio', command: 'srv', args: [], env: {}, disabled: true },
    });
  });

  it('accepts remote entries', () => {
    expect(parseServerEntry('r', { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' } })).toEqual({
      ok: true,
      config: { kind: 'remote', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' }, disabled: false },
    });
    expect(parseServerEntry('r', { type: 'sse', url: 'http://localhost:1/sse' })).toMatchObject({ ok: true, config: { kind: 'remote', type: 'sse' } });
  });

  it('rejects bad entries with a message naming the entry and the field, never throwing', () => {
    const cases: Array<[unknown, RegExp]> = [
      [null, /^mcpServers\.x: expected an object with "command" or "url"$/],
      ['npx srv', /^mcpServers\.x: expected an object/],
      [{ args: ['a'] }, /^mcpServers\.x: missing "command" \(stdio\) or "url" \(remote\)$/],
      [{ command: 'a', url: 'http://h' }, /^mcpServers\.x: give either "command" or "url", not both$/],
      [{ command: '' }, /^mcpServers\.x: command: must not be empty$/],
      [{ command: 'a', args: 'b' }, /^mcpServers\.x: args: Invalid input: expected array/],
      [{ command: 'a', env: { K: 1 } }, /^mcpServers\.x: env\.K: Invalid input: expected string, received number$/],
      [{ url: 'not a url' }, /^mcpServers\.x: url: must be an http\(s\) URL$/],
      [{ url: 'ftp://h/x' }, /^mcpServers\.x: url: must be an http\(s\) URL$/],
      [{ url: 'http://h', headers: [] }, /^mcpServers\.x: headers: /],
      [{ command: 'a', disabled: 'yes' }, /^mcpServers\.x: disabled: Invalid input: expected boolean/],
    ];
    for (const [raw, msg] of cases) {
      const r = parseServerEntry('x', raw);
      expect(r.ok, JSON.stringify(raw)).toBe(false);
      if (!r.ok) expect(r.error, JSON.stringify(raw)).toMatch(msg);
    }
    expect(parseServerEntry('x', { command: 'srv', args: ['a', 1] })).toMatchObject({ ok: false, command: 'srv', args: ['a'] });
  });
});

describe('hosting configured entries', () => {
  it('reports a bad entry as failed and a disabled one as disabled, without starting them', async () => {
    const t = host({ bad: { command: 42 }, off: { command: process.execPath, args: [fixture('mcp-paged.mjs')], disabled: true } });
    expect(() => t.host.startAll()).not.toThrow();
    // startAll takes one server per event-loop turn.
    await new Promise((r) => setImmediate(r));
    expect(t.events).toEqual([
      {
        name: 'bad',
        command: '',
        args: [],
        status: 'failed',
        tools: [],
        prompts: [],
        resources: [],
        disabled: false,
        hasAuth: false,
        lastError: 'mcpServers.bad: command: Invalid input: expected string, received number',
        restarts: 0,
      },
      { name: 'off', command: process.execPath, args: [fixture('mcp-paged.mjs')], status: 'disabled', tools: [], prompts: [], resources: [], disabled: true, hasAuth: false, restarts: 0 },
    ]);
    // A manual start of the bad one fails again with the same message, and is not retried.
    await t.host.start('bad');
    expect(t.host.servers()[0]).toMatchObject({ status: 'failed', restarts: 0, lastError: t.events[0].lastError });
    // A disabled server starts by hand.
    await t.host.start('off');
    // Still `disabled` in its config (ECA's `->server` :disabled), now with its lists.
    expect(t.host.servers()[1]).toMatchObject({ status: 'running', disabled: true, prompts: expect.arrayContaining([expect.objectContaining({ name: 'p1' })]) });
    expect(t.tools.get('off__t1')).toBeDefined();
    await expect(t.host.start('nope')).rejects.toThrow('No MCP server named "nope" is configured');
  });

  it('marks a server whose command does not exist as failed with the spawn error, and retries it', async () => {
    const t = host({ ghost: { command: 'patchbay-no-such-command-xyz' } }, { restart: { baseDelayMs: 30, maxRestarts: 1 } });
    t.host.startAll();
    await waitFor(() => t.host.servers()[0].restarts === 1 && t.host.servers()[0].status === 'failed', 'the retry to fail');
    expect(t.host.servers()[0].lastError).toMatch(/^failed to start: .*ENOENT/);
    expect(t.statuses('ghost')).toEqual(['starting', 'failed', 'starting', 'failed']);
  });

  it('reports an unreachable remote server as failed, naming both transports', async () => {
    const t = host({ remote: { url: 'http://127.0.0.1:9/mcp' } }, { restart: { maxRestarts: 0 } });
    await t.host.start('remote');
    expect(t.host.servers()[0]).toMatchObject({ status: 'failed', command: 'http://127.0.0.1:9/mcp', args: [] });
    expect(t.host.servers()[0].lastError).toMatch(/^failed to start: Streamable HTTP: .*; SSE: /);
  });
});

describe('the child environment', () => {
  it('keeps the safe inherited variables from patchbay env, adds the entry env, and nothing else', () => {
    const env = childEnv({ PATH: '/custom/bin', HOME: '/home/pb', SECRET_TOKEN: 's3cret', SHELL: '() { evil; }' }, { API_KEY: 'k', PATH: '/entry/bin' });
    expect(env.HOME).toBe('/home/pb');
    expect(env.PATH).toBe('/entry/bin');
    expect(env.API_KEY).toBe('k');
    expect(env.SECRET_TOKEN).toBeUndefined();
    expect(env.SHELL).not.toBe('() { evil; }');
  });

  it('is what a real server sees (server-everything get-env)', async () => {
    const t = host(
      { everything: { command: process.execPath, args: [everythingBin, 'stdio'], env: { PATCHBAY_MCP_TEST: 'yes', MY_SERVER_KEY: 'named-on-purpose' } } },
      {
        env: {
          ...process.env,
          HOME: '/tmp/patchbay-fake-home',
          PATCHBAY_NOT_INHERITED: 'x',
          PATCHBAY_GATEWAY_URL: 'ws://127.0.0.1:1234',
          PATCHBAY_HOME: '/tmp/patchbay-fake-pb-home',
          ...USER_NETWORK_ENV,
          ...SECRETS_ENV,
        },
      },
    );
    await t.host.start('everything');
    const seen = JSON.parse(text(await t.tools.get('everything__get-env')!.call({}, ctx()))) as Record<string, string>;
    expect(seen).toMatchObject({ HOME: '/tmp/patchbay-fake-home', PATCHBAY_MCP_TEST: 'yes', PATH: process.env.PATH });
    expect(seen.PATCHBAY_NOT_INHERITED).toBeUndefined();
    // Proxies, certificates, locale and temp dirs arrive; the entry's `env` adds what it names.
    expect(seen).toMatchObject({ ...USER_NETWORK_ENV, MY_SERVER_KEY: 'named-on-purpose' });
    // Where the gateway is, so a server that is also a provider finds it (and its token in the run file).
    expect(seen).toMatchObject({ PATCHBAY_GATEWAY_URL: 'ws://127.0.0.1:1234', PATCHBAY_HOME: '/tmp/patchbay-fake-pb-home' });
    // Provider keys and tokens never do, not even one whose name fits the LC_* pattern.
    for (const key of Object.keys(SECRETS_ENV)) expect(seen[key], key).toBeUndefined();
  });
});

/**
 * The OpenCtx host driven by the real @openctx/client (0.0.30), with the built-in providers fed
 * by fakes: meta, mentions, items and annotations come back right through the whole stack.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type Range } from '@openctx/client';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  OpenCtxHost,
  diagnostics,
  eventStreams,
  mcpResources,
  workspaceFiles,
  type DiagnosticLike,
  type McpResourceLike,
  type OpenCtxProviderImpl,
  type StreamEvent,
} from '../../src/peers/openctx/host/index.js';
import type { Logger } from '../../src/util/log.js';

const quietLog: Logger = { error() {}, warn() {}, info() {}, debug() {} };

function newToken(): string {
  return randomBytes(24).toString('hex');
}

function fakeWorkspace() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'pb-openctx-')));
  const files: Record<string, string> = {
    'src/app.ts': 'export const app = 1;\n',
    'src/util/strings.ts': 'export const s = "x";\n',
    'README.md': '# demo\n',
  };
  // On disk too: the provider lists only files it can open inside the root.
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
  const reads: string[] = [];
  const deps = {
    roots: () => [root],
    query: (q: string) => [{ type: 'directory', path: 'src' }, ...Object.keys(files).map((p) => ({ type: 'file', path: p }))].filter((f) => f.path.toLowerCase().includes(q.toLowerCase())),
    read: async (path: string) => {
      reads.push(path);
      const rel = path
        .slice(root.length + 1)
        .split('\\')
        .join('/');
      const c = files[rel];
      if (c === undefined) throw new Error(`ENOENT: ${rel}`);
      return c;
    },
  };
  return { root, files, reads, deps };
}

const fakeDiagnostics: DiagnosticLike[] = [
  {
    uri: 'file:///w/src/app.ts',
    severity: 1,
    message: "Cannot find name 'foo'.",
    source: 'ts',
    range: { start: { line: 2, character: 4 }, end: { line: 2, character: 7 } },
  },
  {
    uri: 'file:///w/src/app.ts',
    severity: 'warning',
    message: 'Unused variable x',
    range: { start: { line: 5, character: 0 }, end: { line: 5, character: 1 } },
  },
  {
    uri: 'file:///w/other.ts',
    severity: 2,
    message: 'elsewhere',
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
  },
];

const fakeResources: McpResourceLike[] = [
  { uri: 'docs://guide/intro', name: 'Intro Guide', description: 'How to start', mimeType: 'text/markdown', server: 'docs' },
  { uri: 'db://schema/users', name: 'Users table', description: 'schema', mimeType: 'text/plain', server: 'postgres' },
];

const fakeEvents: StreamEvent[] = Array.from({ length: 60 }, (_, i) => ({
  id: i + 1,
  stream: 'build',
  source: 'ci',
  level: i % 10 === 0 ? 'error' : 'info',
  text: `event ${i + 1}`,
  createdAt: Date.UTC(2026, 0, 1, 0, 0, i),
}));

function builtinProviders() {
  const ws = fakeWorkspace();
  const mcpReads: Array<[string, string]> = [];
  const queries: unknown[] = [];
  const providers: Record<string, OpenCtxProviderImpl> = {
    files: workspaceFiles(ws.deps),
    diagnostics: diagnostics({ get: async (uri) => fakeDiagnostics.filter((d) => !uri || d.uri === uri) }),
    'mcp-resources': mcpResources({
      list: () => fakeResources,
      read: async (server, uri) => {
        mcpReads.push([server, uri]);
        return `content of ${uri} from ${server}`;
      },
    }),
    streams: eventStreams({
      streams: () => [
        { stream: 'build', count: 60, last: Date.UTC(2026, 0, 1, 0, 0, 59) },
        { stream: 'deploy', count: 0, last: null },
      ],
      query: (filter) => {
        queries.push(filter);
        // newest first, like a store would answer
        return fakeEvents
          .filter((e) => e.stream === filter.stream)
          .reverse()
          .slice(0, filter.limit);
      },
    }),
  };
  return { providers, ws, mcpReads, queries };
}

async function startHost(providers: Record<string, OpenCtxProviderImpl>, token = newToken()) {
  const host = new OpenCtxHost({ host: '127.0.0.1', port: 0, token, providers, log: quietLog });
  const { url } = await host.start();
  return { host, url, token };
}

// ---- the real @openctx/client against the host ------------------------------------------------
//
// @openctx/client 0.0.30's HTTP transport only attaches `authInfo.headers` when the provider URL
// is https: (lib/client/src/providerClient/transport/http.ts). The host is plain http on loopback,
// so the client is given the header by wrapping the global `fetch` it calls, for the host's URL
// only. A test below pins the limitation: with `authInfo` alone every call is refused with 401.

function withBearer(baseUrl: string, token: string): typeof fetch {
  const inner = globalThis.fetch;
  return (input, init) => {
    const target = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (!target.startsWith(baseUrl + '/')) return inner(input, init);
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return inner(input, { ...init, headers });
  };
}

describe('OpenCtx host with the real @openctx/client', () => {
  let host: OpenCtxHost;
  let url: string;
  let token: string;
  let fx: ReturnType<typeof builtinProviders>;
  let seenSettings: unknown[];
  const realFetch = globalThis.fetch;

  beforeAll(async () => {
    fx = builtinProviders();
    seenSettings = [];
    fx.providers.echo = {
      meta: (_p, settings) => {
        seenSettings.push(settings);
        return { mentions: {} };
      },
      mentions: (params, settings) => [{ title: `echo ${params.query ?? ''} ${String(settings.suffix ?? '')}`.trim(), uri: 'echo:1' }],
    };
    ({ host, url, token } = await startHost(fx.providers));
    globalThis.fetch = withBearer(url, token);
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await host.stop();
    rmSync(fx.ws.root, { recursive: true, force: true });
  });

  const errors: Array<[string, string]> = [];
  function client(names: string[], settings: Record<string, Record<string, unknown>> = {}): Client<Range> {
    const providers: Record<string, boolean | Record<string, unknown>> = {};
    for (const n of names) providers[host.providerUrl(n)] = settings[n] ?? true;
    return createClient<Range>({
      configuration: () => Promise.resolve({ enable: true, providers }),
      makeRange: (r) => r,
    });
  }
  const hook = { errorHook: (uri: string, e: unknown) => void errors.push([uri, String(e)]) };

  it('meta: every built-in reports its name and capabilities', async () => {
    const c = client(['files', 'diagnostics', 'mcp-resources', 'streams']);
    try {
      const metas = await c.meta({}, hook);
      const byName = Object.fromEntries(metas.map((m) => [m.name, m]));
      expect(Object.keys(byName).sort()).toEqual(['patchbay MCP resources', 'patchbay diagnostics', 'patchbay event streams', 'patchbay files']);
      expect(byName['patchbay files'].mentions).toEqual({});
      expect(byName['patchbay files'].providerUri).toBe(host.providerUrl('files'));
      expect(byName['patchbay diagnostics'].annotations).toEqual({});
      expect(byName['patchbay diagnostics'].mentions).toBeUndefined();
      expect(errors).toEqual([]);
    } finally {
      c.dispose();
    }
  });

  it('mentions: fuzzy file search with file:// URIs and relative titles', async () => {
    const c = client(['files']);
    try {
      const mentions = await c.mentions({ query: 'src/' }, hook);
      expect(mentions.map((m) => m.title).sort()).toEqual(['src/app.ts', 'src/util/strings.ts']);
      const app = mentions.find((m) => m.title === 'src/app.ts')!;
      expect(app.uri).toBe(pathToFileURL(join(fx.ws.root, 'src/app.ts')).href);
      expect(app.providerUri).toBe(host.providerUrl('files'));
    } finally {
      c.dispose();
    }
  });

  it('items: a file mention yields the file content for the AI', async () => {
    const c = client(['files']);
    try {
      const [mention] = await c.mentions({ query: 'README' }, hook);
      expect(mention.title).toBe('README.md');
      const items = await c.items({ mention }, hook);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ title: 'README.md', url: mention.uri, ai: { content: '# demo\n' } });
      expect(fx.ws.reads).toContain(join(fx.ws.root, 'README.md'));
    } finally {
      c.dispose();
    }
  });

  it('annotations: one per diagnostic of the document, with severity and hover', async () => {
    const c = client(['diagnostics']);
    try {
      const anns = await c.annotations({ uri: 'file:///w/src/app.ts', content: 'const a = foo;\n' }, hook);
      expect(anns).toHaveLength(2);
      expect(anns[0]).toMatchObject({
        uri: 'file:///w/src/app.ts',
        range: { start: { line: 2, character: 4 }, end: { line: 2, character: 7 } },
        item: { title: "[error] Cannot find name 'foo'.", ui: { hover: { text: "ts: Cannot find name 'foo'." } } },
      });
      expect(anns[1].item.title).toBe('[warning] Unused variable x');
      expect(anns[1].item.ui?.hover?.text).toBe('Unused variable x');
      const none = await c.annotations({ uri: 'file:///w/clean.ts', content: '' }, hook);
      expect(none).toEqual([]);
    } finally {
      c.dispose();
    }
  });

  it('MCP resources: substring mentions carry the server; items read through it', async () => {
    const c = client(['mcp-resources']);
    try {
      const mentions = await c.mentions({ query: 'GUIDE' }, hook);
      expect(mentions).toHaveLength(1);
      expect(mentions[0]).toMatchObject({ title: 'Intro Guide', uri: 'docs://guide/intro', description: 'How to start', data: { server: 'docs' } });
      const items = await c.items({ mention: mentions[0] }, hook);
      expect(items).toHaveLength(1);
      expect(items[0]).toMatchObject({ title: 'Intro Guide', ai: { content: 'content of docs://guide/intro from docs' } });
      expect(fx.mcpReads).toEqual([['docs', 'docs://guide/intro']]);
    } finally {
      c.dispose();
    }
  });

  it('event streams: stream mentions; items are the newest 50 events, oldest first', async () => {
    const c = client(['streams']);
    try {
      const mentions = await c.mentions({ query: 'bui' }, hook);
      expect(mentions).toHaveLength(1);
      expect(mentions[0]).toMatchObject({ title: 'build', uri: 'patchbay-stream:build' });
      expect(mentions[0].description).toContain('60 events');
      const items = await c.items({ mention: mentions[0] }, hook);
      expect(items).toHaveLength(1);
      const lines = items[0].ai!.content!.split('\n');
      expect(lines).toHaveLength(50);
      expect(lines[0]).toContain('event 11');
      expect(lines[49]).toBe('2026-01-01T00:00:59.000Z [info] ci: event 60');
      expect(fx.queries).toContainEqual({ stream: 'build', limit: 50 });
    } finally {
      c.dispose();
    }
  });

  it('aggregates mentions across providers; providers without mentions answer [] (no errors)', async () => {
    const before = errors.length;
    const c = client(['files', 'diagnostics', 'mcp-resources', 'streams']);
    try {
      const mentions = await c.mentions({ query: 'u' }, hook);
      const titles = mentions.map((m) => m.title);
      expect(titles).toEqual(expect.arrayContaining(['src/util/strings.ts', 'Intro Guide', 'Users table', 'build']));
      expect(errors.length).toBe(before);
    } finally {
      c.dispose();
    }
  });

  it('passes the configured provider settings through', async () => {
    const c = client(['echo'], { echo: { suffix: 'from-settings' } });
    try {
      const mentions = await c.mentions({ query: 'hi' }, hook);
      expect(mentions.map((m) => m.title)).toEqual(['echo hi from-settings']);
      const [meta] = await c.meta({}, hook);
      expect(meta.name).toBe('echo'); // filled in by the host from the provider's key
      expect(seenSettings).toContainEqual({ suffix: 'from-settings' });
    } finally {
      c.dispose();
    }
  });

  it('a provider error reaches the client with its code and message', async () => {
    const c = client(['files']);
    const seen: string[] = [];
    try {
      const items = await c.items({ mention: { title: 'x', uri: 'file:///etc/passwd' } }, { errorHook: (_u, e) => void seen.push(String(e)) });
      expect(items).toEqual([]);
      expect(seen).toHaveLength(1);
      expect(seen[0]).toContain('-32602');
      expect(seen[0]).toContain('outside the workspace roots');
    } finally {
      c.dispose();
    }
  });

  it('authInfo alone is not sent over plain http by @openctx/client 0.0.30, so the host answers 401', async () => {
    globalThis.fetch = realFetch;
    const seen: string[] = [];
    const c = createClient<Range>({
      configuration: () => Promise.resolve({ enable: true, providers: { [host.providerUrl('files')]: true } }),
      authInfo: () => Promise.resolve({ headers: { Authorization: `Bearer ${token}` } }),
      makeRange: (r) => r,
    });
    try {
      const metas = await c.meta({}, { errorHook: (_u, e) => void seen.push(String(e)) });
      expect(metas).toEqual([]);
      expect(seen.join('\n')).toContain('HTTP error 401');
    } finally {
      c.dispose();
      globalThis.fetch = withBearer(url, token);
    }
  });
});

/**
 * patchbay's side of workspace/xfiles, textDocument/xcontent and xcache/* over a real JSON-RPC
 * connection pair (the "server" end plays the language server), with a real temp directory and
 * a real in-memory SQLite cache.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';
import {
  registerSourcegraphHandlers,
  serverSupports,
  sourcegraphClientCapabilities,
  xdefinition,
  xreferences,
  type OverlayDocument,
  type SourcegraphHandlerOptions,
  type SourcegraphHandlers,
} from '../../src/peers/lsp/sourcegraph.js';
import type { XCache } from '../../src/shapes/xcache.js';
import { SqliteXCache } from '../../src/store/xcache.js';

interface Pair {
  client: MessageConnection; // patchbay
  server: MessageConnection; // the language server
  dispose(): void;
}

function pair(): Pair {
  const up = new PassThrough();
  const down = new PassThrough();
  const client = createMessageConnection(new StreamMessageReader(down), new StreamMessageWriter(up));
  const server = createMessageConnection(new StreamMessageReader(up), new StreamMessageWriter(down));
  return {
    client,
    server,
    dispose() {
      client.dispose();
      server.dispose();
      up.destroy();
      down.destroy();
    },
  };
}

function write(root: string, rel: string, text: string): void {
  const full = path.join(root, rel);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
}

const uri = (p: string): string => pathToFileURL(p).href;

let tmp: string;
let root: string;
let outside: string;

beforeAll(() => {
  tmp = mkdtempSync(path.join(tmpdir(), 'pb-lsp-sg-'));
  root = path.join(tmp, 'ws');
  outside = path.join(tmp, 'outside');
  write(outside, 'secret.ts', 'export const secret = 1;\n');
  write(root, '.gitignore', 'dist/\n*.log\n!keep.log\nnode_modules\n');
  write(root, '.git/HEAD', 'ref: refs/heads/main\n');
  write(root, 'package.json', '{"name":"ws"}\n');
  write(root, 'src/index.ts', 'export const x = 1;\n');
  write(root, 'src/debug.log', 'noise\n');
  write(root, 'src/keep.log', 'kept\n');
  write(root, 'src/gen/.gitignore', '*.gen.ts\n!important.gen.ts\n');
  write(root, 'src/gen/a.gen.ts', '// generated\n');
  write(root, 'src/gen/important.gen.ts', '// generated but tracked\n');
  write(root, 'src/gen/types.ts', 'export type T = 1;\n');
  write(root, 'dist/index.js', 'exports.x = 1;\n');
  write(root, 'node_modules/dep/index.js', 'module.exports = 1;\n');
  write(root, 'lib/util.ts', 'export const u = 2;\n');
  symlinkSync(path.join(outside, 'secret.ts'), path.join(root, 'src/leak.ts'));
});

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('client capabilities and server capability checks', () => {
  it('puts the three provider flags at the top level of ClientCapabilities', () => {
    expect(sourcegraphClientCapabilities()).toEqual({ xfilesProvider: true, xcontentProvider: true, xcacheProvider: true });
  });

  it('reads server capabilities from an InitializeResult or a bare ServerCapabilities', () => {
    const caps = { xdefinitionProvider: true, xworkspaceReferencesProvider: true, xworkspaceSymbolByProperties: false };
    expect(serverSupports({ capabilities: caps }, 'xdefinition')).toBe(true);
    expect(serverSupports({ capabilities: caps }, 'xreferences')).toBe(true);
    expect(serverSupports({ capabilities: caps }, 'xworkspaceSymbolByProperties')).toBe(false);
    expect(serverSupports(caps, 'xdefinition')).toBe(true);
    expect(serverSupports({ capabilities: { xdefinitionProvider: 'yes' } }, 'xdefinition')).toBe(false);
    expect(serverSupports(null, 'xreferences')).toBe(false);
  });
});

describe('workspace/xfiles and textDocument/xcontent', () => {
  let p: Pair;
  let handlers: SourcegraphHandlers;
  let overlay: Map<string, OverlayDocument>;

  const setup = (extra: Partial<SourcegraphHandlerOptions> = {}): void => {
    p = pair();
    overlay = new Map();
    handlers = registerSourcegraphHandlers(p.client, {
      roots: [root],
      overlay: (u) => overlay.get(u),
      overlayUris: () => overlay.keys(),
      cache: { get: () => undefined, set: () => undefined },
      namespace: 'test',
      ...extra,
    });
    p.client.listen();
    p.server.listen();
  };
  afterEach(() => {
    handlers.dispose();
    p.dispose();
  });

  const files = async (params?: unknown): Promise<string[]> => {
    const res = (await (params === undefined ? p.server.sendRequest('workspace/xfiles') : p.server.sendRequest('workspace/xfiles', params))) as Array<{
      uri: string;
    }>;
    return res.map((r) => path.relative(root, new URL(r.uri).pathname)).sort();
  };

  it('lists files only, honouring the root and nested .gitignore (with negation), skipping .git', async () => {
    setup();
    expect(await files({})).toEqual([
      '.gitignore',
      'lib/util.ts',
      'package.json',
      'src/gen/.gitignore',
      'src/gen/important.gen.ts',
      'src/gen/types.ts',
      'src/index.ts',
      'src/keep.log',
      'src/leak.ts', // a symlinked file is listed (its content is refused, see below)
    ]);
    // no params at all (as in the spec's example) works too
    expect(await files()).toHaveLength(9);
    expect(handlers.stats.xfiles).toBe(2);
  });

  it('honours base: relative to the root, absolute URI, inside an ignored directory, outside the roots', async () => {
    setup();
    expect(await files({ base: 'src/gen' })).toEqual(['src/gen/.gitignore', 'src/gen/important.gen.ts', 'src/gen/types.ts']);
    expect(await files({ base: uri(path.join(root, 'lib')) + '/' })).toEqual(['lib/util.ts']);
    expect(await files({ base: 'dist/' })).toEqual([]);
    await expect(p.server.sendRequest('workspace/xfiles', { base: uri(outside) })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('outside the workspace roots'),
    });
    await expect(p.server.sendRequest('workspace/xfiles', { base: 42 })).rejects.toBeInstanceOf(ResponseError);
  });

  it('includes overlay-only files (not ignored ones), and applies a .gitignore that exists only in the overlay', async () => {
    setup();
    overlay.set(uri(path.join(root, 'src/new.ts')), { text: 'export {};\n' });
    overlay.set(uri(path.join(root, 'src/index.ts')), { text: 'edited\n' }); // also on disk: listed once
    overlay.set(uri(path.join(root, 'dist/new.js')), { text: '' }); // ignored by the root .gitignore
    overlay.set(uri(path.join(root, 'lib/.gitignore')), { text: 'util.ts\n' }); // overlay-only rules
    overlay.set(uri(path.join(outside, 'x.ts')), { text: '' }); // outside the roots
    const all = await files({});
    expect(all).toContain('src/new.ts');
    expect(all).toContain('lib/.gitignore');
    expect(all).not.toContain('lib/util.ts');
    expect(all).not.toContain('dist/new.js');
    expect(all.filter((f) => f === 'src/index.ts')).toHaveLength(1);
    expect(all.some((f) => f.startsWith('..'))).toBe(false);
  });

  it('xcontent returns a full TextDocumentItem from the overlay first, else from disk', async () => {
    setup();
    const indexUri = uri(path.join(root, 'src/index.ts'));
    expect(await p.server.sendRequest('textDocument/xcontent', { textDocument: { uri: uri(path.join(root, 'lib/util.ts')) } })).toEqual({
      uri: uri(path.join(root, 'lib/util.ts')),
      languageId: 'typescript',
      version: 0,
      text: 'export const u = 2;\n',
    });
    overlay.set(indexUri, { text: 'export const x = 2; // unsaved\n', version: 5, languageId: 'typescriptreact' });
    expect(await p.server.sendRequest('textDocument/xcontent', { textDocument: { uri: indexUri } })).toEqual({
      uri: indexUri,
      languageId: 'typescriptreact',
      version: 5,
      text: 'export const x = 2; // unsaved\n',
    });
    // gitignored files inside the root are still readable (servers ask for e.g. node_modules typings)
    const dep = (await p.server.sendRequest('textDocument/xcontent', {
      textDocument: { uri: uri(path.join(root, 'node_modules/dep/index.js')) },
    })) as { languageId: string; text: string };
    expect(dep).toMatchObject({ languageId: 'javascript', text: 'module.exports = 1;\n' });
    expect(handlers.stats.contentUris).toHaveLength(3);
  });

  it('xcontent names a file with the language id the server was opened with (one table: kotlin, toml)', async () => {
    setup();
    const kt = path.join(root, 'lib/Main.kt');
    const toml = path.join(root, 'lib/Cargo.toml');
    writeFileSync(kt, 'fun main() {}\n');
    writeFileSync(toml, '[package]\n');
    try {
      expect(await p.server.sendRequest('textDocument/xcontent', { textDocument: { uri: uri(kt) } })).toMatchObject({ languageId: 'kotlin' });
      expect(await p.server.sendRequest('textDocument/xcontent', { textDocument: { uri: uri(toml) } })).toMatchObject({ languageId: 'toml' });
    } finally {
      rmSync(kt);
      rmSync(toml);
    }
  });

  it('xcontent answers unknown files, directories, other schemes and anything outside the roots with an error', async () => {
    setup();
    const ask = (u: unknown) => p.server.sendRequest('textDocument/xcontent', { textDocument: { uri: u } });
    await expect(ask(uri(path.join(root, 'src/missing.ts')))).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('unknown file') });
    await expect(ask(uri(path.join(root, 'src')))).rejects.toMatchObject({ message: expect.stringContaining('not a file') });
    await expect(ask(uri(path.join(outside, 'secret.ts')))).rejects.toMatchObject({ message: expect.stringContaining('outside the workspace roots') });
    await expect(ask(uri(path.join(root, '../outside/secret.ts')))).rejects.toBeInstanceOf(ResponseError);
    await expect(ask(uri(path.join(root, 'src/leak.ts')))).rejects.toMatchObject({ message: expect.stringContaining('resolves outside') });
    await expect(ask('git://github.com/x/y')).rejects.toMatchObject({ message: expect.stringContaining('not a file URI') });
    await expect(ask(7)).rejects.toMatchObject({ code: -32602 });
    await expect(p.server.sendRequest('textDocument/xcontent')).rejects.toMatchObject({ code: -32602 });
  });

  it('xcontent refuses files above maxFileBytes', async () => {
    setup({ maxFileBytes: 4 });
    await expect(p.server.sendRequest('textDocument/xcontent', { textDocument: { uri: uri(path.join(root, 'package.json')) } })).rejects.toMatchObject({
      message: expect.stringContaining('too large'),
    });
  });
});

describe('xcache with SQLite', () => {
  let db: Database.Database;
  let cache: SqliteXCache;
  beforeAll(() => {
    db = new Database(':memory:');
    cache = new SqliteXCache(db);
  });
  afterAll(() => db.close());

  it('stores JSON values per namespace and key in the xcache table', () => {
    cache.set('ns1', 'k', { a: [1, 'two', null] });
    cache.set('ns2', 'k', 42);
    cache.set('ns2', 'float', 0.1);
    cache.set('ns2', 'numeric-string', '42');
    cache.set('ns2', 'undefined', undefined);
    expect(cache.get('ns2', 'float')).toBe(0.1);
    expect(cache.get('ns2', 'numeric-string')).toBe('42');
    expect(cache.get('ns2', 'undefined')).toBeNull();
    expect(cache.get('ns1', 'k')).toEqual({ a: [1, 'two', null] });
    expect(cache.get('ns2', 'k')).toBe(42);
    expect(cache.get('ns3', 'k')).toBeUndefined();
    cache.set('ns1', 'k', 'replaced');
    expect(cache.get('ns1', 'k')).toBe('replaced');
    const rows = db.prepare("SELECT ns, key, json(value) AS value, updated_at FROM xcache WHERE key = 'k' ORDER BY ns").all() as Array<{ ns: string; key: string; value: string; updated_at: number }>;
    expect(rows.map((r) => [r.ns, r.key, r.value])).toEqual([
      ['ns1', 'k', '"replaced"'],
      ['ns2', 'k', '42'],
    ]);
    expect(rows[0].updated_at).toBeGreaterThan(0);
    new SqliteXCache(db); // a second instance on the same database keeps the data
    expect(cache.get('ns2', 'k')).toBe(42);
    cache.clear('ns2');
    expect(cache.get('ns2', 'k')).toBeUndefined();
    expect(cache.get('ns1', 'k')).toBe('replaced');
  });

  it('xcache/get and xcache/set from two servers stay in their own namespaces; instances of one server share', async () => {
    const conns = [pair(), pair(), pair()];
    const regs = conns.map((c, i) => {
      const r = registerSourcegraphHandlers(c.client, {
        roots: [root],
        overlay: () => undefined,
        cache,
        namespace: i < 2 ? 'typescript' : 'go',
      });
      c.client.listen();
      c.server.listen();
      return r;
    });
    const [ts1, ts2, go] = conns.map((c) => c.server);
    await ts1.sendNotification('xcache/set', { key: 'index:lodash@4', value: { symbols: ['map'] } });
    await go.sendNotification('xcache/set', { key: 'index:lodash@4', value: 'go-value' });
    // notifications: wait until they have been applied
    await expect.poll(() => cache.get('go', 'index:lodash@4')).toBe('go-value');
    await expect.poll(() => cache.get('typescript', 'index:lodash@4')).toEqual({ symbols: ['map'] });
    expect(await ts2.sendRequest('xcache/get', { key: 'index:lodash@4' })).toEqual({ symbols: ['map'] });
    expect(await go.sendRequest('xcache/get', { key: 'index:lodash@4' })).toBe('go-value');
    expect(await ts1.sendRequest('xcache/get', { key: 'missing' })).toBeNull();
    await expect(ts1.sendRequest('xcache/get', { nokey: true })).rejects.toMatchObject({ code: -32602 });
    // a malformed set is dropped, the connection keeps working
    await ts1.sendNotification('xcache/set', { value: 1 });
    expect(await ts1.sendRequest('xcache/get', { key: 'index:lodash@4' })).toEqual({ symbols: ['map'] });
    expect(regs[0].stats).toMatchObject({ xcacheSet: 2, xcacheGet: 3 });
    regs.forEach((r) => r.dispose());
    conns.forEach((c) => c.dispose());
  });

  it('a failing cache turns xcache/get into an error and xcache/set into a logged no-op', async () => {
    const c = pair();
    const logs: string[] = [];
    const broken: XCache = {
      get: () => {
        throw new Error('disk full');
      },
      set: () => {
        throw new Error('disk full');
      },
    };
    const r = registerSourcegraphHandlers(c.client, { roots: [root], overlay: () => undefined, cache: broken, namespace: 'x', log: (m) => logs.push(m) });
    c.client.listen();
    c.server.listen();
    await c.server.sendNotification('xcache/set', { key: 'k', value: 1 });
    await expect(c.server.sendRequest('xcache/get', { key: 'k' })).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('disk full') });
    expect(logs.some((l) => l.startsWith('xcache/set k: disk full'))).toBe(true);
    r.dispose();
    c.dispose();
  });
});

describe('helpers validate what the server answers', () => {
  it('xdefinition / xreferences reject malformed results and map null to []', async () => {
    const c = pair();
    let answer: unknown = null;
    let lastParams: unknown;
    c.server.onRequest('textDocument/xdefinition', () => answer);
    c.server.onRequest('workspace/xreferences', (params: unknown) => {
      lastParams = params;
      return answer;
    });
    c.client.listen();
    c.server.listen();
    const pos = { textDocument: { uri: 'file:///a.ts' }, position: { line: 0, character: 0 } };
    expect(await xdefinition(c.client, pos)).toEqual([]);
    answer = [{ symbol: { name: 'f' } }];
    expect(await xdefinition(c.client, pos)).toEqual([{ symbol: { name: 'f' } }]);
    answer = [{ symbol: { name: 'f' }, location: { uri: 'file:///a.ts' } }];
    await expect(xdefinition(c.client, pos)).rejects.toThrow(/malformed location/);
    answer = { not: 'an array' };
    await expect(xdefinition(c.client, pos)).rejects.toThrow(/not an array/);
    answer = [{ reference: { uri: 'file:///b.ts', range: { start: { line: 1, character: 2 }, end: { line: 1, character: 3 } } }, symbol: { name: 'f' } }];
    expect(await xreferences(c.client, { query: { name: 'f' }, limit: 5 })).toHaveLength(1);
    expect(lastParams).toEqual({ query: { name: 'f' }, hints: {}, limit: 5 });
    answer = [{ symbol: { name: 'f' } }];
    await expect(xreferences(c.client, { query: { name: 'f' } })).rejects.toThrow(/not a ReferenceInformation/);
    c.dispose();
  });

  it('aborting an in-flight helper rejects at once and sends $/cancelRequest to the server', async () => {
    const c = pair();
    const sawCancel = hangUntilCancelled(c.server, 'textDocument/xdefinition');
    c.client.listen();
    c.server.listen();
    const ac = new AbortController();
    const pending = xdefinition(c.client, { textDocument: { uri: 'file:///a.ts' }, position: { line: 0, character: 0 } }, ac.signal);
    setTimeout(() => ac.abort(new Error('timeout')), 20);
    await expect(pending).rejects.toThrow('textDocument/xdefinition aborted: timeout');
    await expect.poll(sawCancel).toBe(true);
    c.dispose();
  });

  it('a helper whose server never answers fails at its deadline and sends $/cancelRequest', async () => {
    const c = pair();
    const sawCancel = hangUntilCancelled(c.server, 'workspace/xreferences');
    c.client.listen();
    c.server.listen();
    await expect(xreferences(c.client, { query: { name: 'f' } }, undefined, 150)).rejects.toThrow('workspace/xreferences timed out after 150 ms');
    await expect.poll(sawCancel).toBe(true);
    c.dispose();
  });
});

/** The server side of `method` never answers until the client cancels; returns whether it saw the cancel. */
function hangUntilCancelled(server: ReturnType<typeof pair>['server'], method: string): () => boolean {
  let saw = false;
  server.onRequest(method, (_params: unknown, token: { onCancellationRequested(cb: () => void): void }) => {
    return new Promise((resolve) => {
      token.onCancellationRequested(() => {
        saw = true;
        resolve([]);
      });
    });
  });
  return () => saw;
}

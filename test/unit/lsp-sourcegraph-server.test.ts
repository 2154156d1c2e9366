/**
 * The Sourcegraph extensions against the real javascript-typescript-langserver: the workspace root
 * does not exist on disk, the project lives only in patchbay's overlay, so every file the server
 * knows it read through our workspace/xfiles and textDocument/xcontent handlers.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';
import {
  registerSourcegraphHandlers,
  serverSupports,
  sourcegraphClientCapabilities,
  workspaceSymbolByDescriptor,
  xdefinition,
  xreferences,
  type OverlayDocument,
  type SourcegraphHandlers,
  type SymbolDescriptor,
} from '../../src/peers/lsp/sourcegraph.js';
import { SqliteXCache } from '../../src/store/xcache.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const fixtureDir = path.resolve(here, '../fixtures/lsp-sourcegraph/project');
const ROOT_URI = 'file:///overlay/project';
const serverMain = createRequire(import.meta.url).resolve('javascript-typescript-langserver/lib/language-server-stdio.js');

/** The fixture project, keyed by its URI under the (non-existent) overlay root. */
function loadOverlay(): Map<string, OverlayDocument> {
  const docs = new Map<string, OverlayDocument>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) walk(full);
      else docs.set(`${ROOT_URI}/${path.relative(fixtureDir, full).split(path.sep).join('/')}`, { text: readFileSync(full, 'utf8'), version: 7 });
    }
  };
  walk(fixtureDir);
  return docs;
}

describe('javascript-typescript-langserver through patchbay overlay (xfiles/xcontent)', () => {
  let child: ChildProcessWithoutNullStreams;
  let connection: MessageConnection;
  let handlers: SourcegraphHandlers;
  let initResult: unknown;
  let xdefSymbol: SymbolDescriptor | undefined;
  let stderr = '';
  const overlay = loadOverlay();
  const db = new Database(':memory:');
  const cache = new SqliteXCache(db);

  beforeAll(async () => {
    expect(existsSync('/overlay/project')).toBe(false); // the root really is not on disk
    child = spawn(process.execPath, [serverMain], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    handlers = registerSourcegraphHandlers(connection, {
      roots: [ROOT_URI],
      overlay: (uri) => overlay.get(uri),
      overlayUris: () => overlay.keys(),
      cache,
      namespace: 'javascript-typescript-langserver',
    });
    connection.listen();
    initResult = await connection.sendRequest('initialize', {
      processId: process.pid,
      rootUri: ROOT_URI,
      capabilities: { ...sourcegraphClientCapabilities() },
      workspaceFolders: null,
    });
    await connection.sendNotification('initialized', {});
  });

  afterAll(async () => {
    try {
      await Promise.race([connection.sendRequest('shutdown'), new Promise((r) => setTimeout(r, 2000))]);
      await connection.sendNotification('exit');
    } catch {
      /* already gone */
    }
    await new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve();
      }, 3000);
      child.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
    });
    handlers.dispose();
    connection.dispose();
    db.close();
  });

  it('advertises xdefinition and xreferences, but not xworkspaceSymbolByProperties', () => {
    expect(serverSupports(initResult, 'xdefinition')).toBe(true);
    expect(serverSupports(initResult, 'xreferences')).toBe(true);
    // The server implements workspace/symbol with `symbol` (tested below) yet does not advertise it.
    expect(serverSupports(initResult, 'xworkspaceSymbolByProperties')).toBe(false);
  });

  it('textDocument/xdefinition on the usage in b.ts returns a SymbolDescriptor and a location in a.ts', async () => {
    const bText = overlay.get(`${ROOT_URI}/src/b.ts`)!.text;
    const line = bText.split('\n').findIndex((l) => l.includes("greet('patchbay')"));
    const character = bText.split('\n')[line].indexOf("greet('patchbay')") + 2;
    const defs = await xdefinition(connection, { textDocument: { uri: `${ROOT_URI}/src/b.ts` }, position: { line, character } });
    expect(defs).toHaveLength(1);
    const [def] = defs;
    expect(def.symbol).toMatchObject({
      name: 'greet',
      kind: 'function',
      // paths are made relative to rootPath by plain string removal, hence the leading slash
      containerName: '"/src/a"',
      filePath: '/src/a.ts',
      // the package descriptor comes from package.json, which the server also read through xcontent
      package: { name: 'overlay-fixture', version: '1.2.3' },
    });
    xdefSymbol = def.symbol;
    expect(def.location?.uri).toBe(`${ROOT_URI}/src/a.ts`);
    expect(def.location?.range.start).toEqual({ line: 0, character: 16 }); // `greet` in `export function greet(`

    // Everything came through patchbay: the file list and each file's content.
    expect(handlers.stats.xfiles).toBeGreaterThanOrEqual(1);
    expect(handlers.stats.contentUris).toEqual(expect.arrayContaining([`${ROOT_URI}/src/a.ts`, `${ROOT_URI}/src/b.ts`]));
    expect(handlers.stats.contentUris.some((u) => u.endsWith('/package.json'))).toBe(true);
  });

  it('workspace/xreferences finds the references in b.ts for the descriptor xdefinition returned', async () => {
    expect(xdefSymbol).toBeDefined();
    // The server matches `query.package.name` against the defining file's path (meant for
    // dependencies under node_modules/<name>), so a workspace-own symbol is queried without it.
    const { package: pkg, ...query } = xdefSymbol!;
    expect(pkg).toBeDefined();
    expect(await xreferences(connection, { query: xdefSymbol! })).toEqual([]);
    const refs = await xreferences(connection, { query });
    const inB = refs.filter((r) => r.reference.uri === `${ROOT_URI}/src/b.ts`);
    const bLines = overlay.get(`${ROOT_URI}/src/b.ts`)!.text.split('\n');
    // the import specifier and the call
    expect(inB.map((r) => r.reference.range.start.line).sort()).toEqual([0, 2]);
    for (const r of inB) {
      expect(r.symbol).toMatchObject({ name: 'greet', kind: 'function', filePath: '/src/a.ts' });
      const { start, end } = r.reference.range;
      expect(bLines[start.line].slice(start.character, end.character).trim()).toBe('greet');
    }
    // and the use inside a.ts (Greeter.say)
    expect(refs.some((r) => r.reference.uri === `${ROOT_URI}/src/a.ts` && r.reference.range.start.line === 8)).toBe(true);
    // limit is enforced
    expect(await xreferences(connection, { query: { name: 'greet', kind: 'function' }, limit: 1 })).toHaveLength(1);
  });

  it('workspace/symbol with a SymbolDescriptor finds the class definition', async () => {
    const syms = await workspaceSymbolByDescriptor(connection, { symbol: { name: 'Greeter', kind: 'class' } });
    expect(syms.length).toBeGreaterThanOrEqual(1);
    expect(syms[0]).toMatchObject({ name: 'Greeter', location: { uri: `${ROOT_URI}/src/a.ts` } });
  });

  it('an aborted xdefinition rejects', async () => {
    const ac = new AbortController();
    ac.abort(new Error('user cancelled'));
    await expect(xdefinition(connection, { textDocument: { uri: `${ROOT_URI}/src/b.ts` }, position: { line: 2, character: 33 } }, ac.signal)).rejects.toThrow(/aborted: user cancelled/);
  });

  it('the server never got a file it asked for from anywhere but the overlay', () => {
    // Every content request was for a URI under the overlay root (no disk fallback is possible: the root is absent).
    for (const uri of handlers.stats.contentUris) expect(uri.startsWith(`${ROOT_URI}/`)).toBe(true);
    expect(stderr).not.toMatch(/ENOENT.*overlay\/project\/src/);
  });
});

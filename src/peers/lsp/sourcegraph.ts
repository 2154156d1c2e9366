/**
 * Sourcegraph extensions to LSP (specs/lsp-sourcegraph-extensions.md), self-contained so the LSP
 * client in this folder can opt in per language server:
 *
 * - client side of the files extension: `workspace/xfiles`, `textDocument/xcontent` (the server
 *   reads the workspace through patchbay — its in-memory overlay first, then the disk);
 * - client side of the cache extension: `xcache/get`, `xcache/set` (persisted by the store, `store/xcache.ts`, handed over as `PeerHost.xcache`);
 * - helpers for the SymbolDescriptor extensions a server may provide: `textDocument/xdefinition`,
 *   `workspace/xreferences`, `workspace/symbol` with `symbol`.
 *
 * Everything the server sends is validated here; a bad request gets a ResponseError, a bad
 * notification is dropped, a bad response makes the helper throw a clear Error.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CancellationToken, ResponseError, type Disposable, type MessageConnection } from 'vscode-jsonrpc';
import type {
  CacheGetParams,
  CacheSetParams,
  ContentParams,
  FilesParams,
  Location,
  ReferenceInformation,
  SymbolDescriptor,
  SymbolInformation,
  SymbolLocationInformation,
  TextDocumentIdentifier,
  TextDocumentItem,
  TextDocumentPositionParams,
} from '../../protocol/lsp/index.js';
import { isRecord } from '../../util/guards.js';
import { GITIGNORE, ignoredBy, parseGitignore, type ParsedGitignore } from '../../util/gitignore.js';
import { isWithin } from '../../util/paths.js';
import type { XCache } from '../../shapes/xcache.js';
import { languageIdOf } from './language-ids.js';
import { RpcErrorCode as ErrorCodes } from '../../rpc/errors.js';
import { request } from '../../rpc/request.js';

// Wire types: src/protocol/lsp/sourcegraph.ts (re-exported for this module's callers).
export type { SymbolDescriptor, SymbolLocationInformation, ReferenceInformation, FilesParams, ContentParams, CacheGetParams, CacheSetParams };

export const XFILES = 'workspace/xfiles';
export const XCONTENT = 'textDocument/xcontent';
export const XCACHE_GET = 'xcache/get';
export const XCACHE_SET = 'xcache/set';
export const XDEFINITION = 'textDocument/xdefinition';
export const XREFERENCES = 'workspace/xreferences';
export const WORKSPACE_SYMBOL = 'workspace/symbol';

/** The deadline of the helpers' requests when the caller gives none: the LSP client's own request timeout. */
export const XREQUEST_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// Capabilities

export interface SourcegraphClientCapabilities {
  xfilesProvider: true;
  xcontentProvider: true;
  xcacheProvider: true;
}

/**
 * Fields to merge into `InitializeParams.capabilities` (top level of ClientCapabilities, per the
 * spec). Servers such as javascript-typescript-langserver only switch to reading files through
 * the client when BOTH xfilesProvider and xcontentProvider are set.
 */
export function sourcegraphClientCapabilities(): SourcegraphClientCapabilities {
  return { xfilesProvider: true, xcontentProvider: true, xcacheProvider: true };
}

export type SourcegraphServerFeature = 'xdefinition' | 'xreferences' | 'xworkspaceSymbolByProperties';

const SERVER_CAPABILITY: Record<SourcegraphServerFeature, string> = {
  xdefinition: 'xdefinitionProvider',
  xreferences: 'xworkspaceReferencesProvider',
  xworkspaceSymbolByProperties: 'xworkspaceSymbolByProperties',
};

/** Whether an `initialize` result (or its `capabilities`) advertises a SymbolDescriptor extension. */
export function serverSupports(initializeResult: unknown, feature: SourcegraphServerFeature): boolean {
  if (!isRecord(initializeResult)) return false;
  const caps = isRecord(initializeResult.capabilities) ? initializeResult.capabilities : initializeResult;
  return caps[SERVER_CAPABILITY[feature]] === true;
}

// ---------------------------------------------------------------------------------------------
// Client-side handlers: workspace/xfiles, textDocument/xcontent, xcache/*

export interface OverlayDocument {
  text: string;
  languageId?: string;
  version?: number;
}

export interface SourcegraphHandlerOptions {
  /** Workspace roots: absolute paths or `file://` URIs. The first is the server's rootPath (relative `base`). */
  roots: string[];
  /** patchbay's in-memory documents, by URI; consulted before the disk. */
  overlay: (uri: string) => OverlayDocument | undefined;
  /**
   * URIs of every overlay document, so that `workspace/xfiles` can list files that exist only
   * in memory (the `overlay` lookup function alone cannot be enumerated).
   */
  overlayUris?: () => Iterable<string>;
  cache: XCache;
  /** Cache namespace: one per language server (shared across its workspaces and instances). */
  namespace: string;
  /** Cap on the number of files one xfiles answer lists (default 100 000). */
  maxFiles?: number;
  /** Largest file xcontent reads from disk (default 16 MiB). */
  maxFileBytes?: number;
  /** Called with handler failures worth logging (never with expected ResponseErrors). */
  log?: (message: string) => void;
}

export interface SourcegraphHandlerStats {
  xfiles: number;
  xcontent: number;
  xcacheGet: number;
  xcacheSet: number;
  /** URIs requested through xcontent, in order. */
  contentUris: string[];
}

export interface SourcegraphHandlers extends Disposable {
  /** How often the server used each extension (for diagnostics and tests). */
  readonly stats: SourcegraphHandlerStats;
}

/** Registers the client side of the files and cache extensions on a connection to a language server. */
export function registerSourcegraphHandlers(connection: MessageConnection, opts: SourcegraphHandlerOptions): SourcegraphHandlers {
  const stats: SourcegraphHandlerStats = { xfiles: 0, xcontent: 0, xcacheGet: 0, xcacheSet: 0, contentUris: [] };
  const log = opts.log ?? (() => undefined);
  const disposables: Disposable[] = [];

  disposables.push(
    connection.onRequest(XFILES, async (...args: unknown[]) => {
      stats.xfiles++;
      const { params, token } = splitArgs(args);
      let base: string | undefined;
      if (params !== undefined && params !== null) {
        if (!isRecord(params) || (params.base !== undefined && params.base !== null && typeof params.base !== 'string')) {
          throw new ResponseError(ErrorCodes.InvalidParams, 'workspace/xfiles: params.base must be a string');
        }
        base = typeof params.base === 'string' && params.base !== '' ? params.base : undefined;
      }
      return listWorkspaceFiles(opts, base, token);
    }),
  );

  disposables.push(
    connection.onRequest(XCONTENT, async (...args: unknown[]) => {
      stats.xcontent++;
      const { params } = splitArgs(args);
      if (!isRecord(params) || !isRecord(params.textDocument) || typeof params.textDocument.uri !== 'string') {
        throw new ResponseError(ErrorCodes.InvalidParams, 'textDocument/xcontent: params.textDocument.uri must be a string');
      }
      stats.contentUris.push(params.textDocument.uri);
      return readDocument(opts, params.textDocument.uri);
    }),
  );

  disposables.push(
    connection.onRequest(XCACHE_GET, (...args: unknown[]) => {
      stats.xcacheGet++;
      const { params } = splitArgs(args);
      if (!isRecord(params) || typeof params.key !== 'string') {
        throw new ResponseError(ErrorCodes.InvalidParams, 'xcache/get: params.key must be a string');
      }
      try {
        const value = opts.cache.get(opts.namespace, params.key);
        return value === undefined ? null : value;
      } catch (err) {
        log(`xcache/get ${params.key}: ${errorMessage(err)}`);
        throw new ResponseError(ErrorCodes.InternalError, `xcache/get failed: ${errorMessage(err)}`);
      }
    }),
  );

  disposables.push(
    connection.onNotification(XCACHE_SET, (...args: unknown[]) => {
      stats.xcacheSet++;
      const params = args[0];
      if (!isRecord(params) || typeof params.key !== 'string') {
        log('xcache/set: dropped a notification without a string key');
        return;
      }
      try {
        opts.cache.set(opts.namespace, params.key, params.value === undefined ? null : params.value);
      } catch (err) {
        // A notification: the server must not depend on the item being stored.
        log(`xcache/set ${params.key}: ${errorMessage(err)}`);
      }
    }),
  );

  return {
    stats,
    dispose() {
      for (const d of disposables.splice(0)) d.dispose();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// workspace/xfiles

/**
 * Files (never directories) under `base` (default: every root), as URIs: the disk, minus what
 * .gitignore files (root and nested, read from the overlay first) exclude and minus `.git/`,
 * plus overlay-only documents. `base` may be a URI or a path relative to the first root; a base
 * outside every root is refused.
 */
export async function listWorkspaceFiles(opts: SourcegraphHandlerOptions, base?: string, token: CancellationToken = CancellationToken.None): Promise<TextDocumentIdentifier[]> {
  const roots = normalizeRoots(opts.roots);
  if (roots.length === 0) throw new ResponseError(ErrorCodes.InvalidRequest, 'workspace/xfiles: no workspace roots');
  const maxFiles = opts.maxFiles ?? 100_000;

  let bases: Array<{ root: string; dir: string }>;
  if (base === undefined) {
    bases = roots.map((root) => ({ root, dir: root }));
  } else {
    const dir = resolveBase(roots[0], base);
    const root = owningRoot(roots, dir);
    if (root === undefined) {
      throw new ResponseError(ErrorCodes.InvalidParams, `workspace/xfiles: base ${base} is outside the workspace roots`);
    }
    bases = [{ root, dir }];
  }

  const seen = new Set<string>();
  const out: TextDocumentIdentifier[] = [];
  const add = (file: string): boolean => {
    if (seen.has(file)) return true;
    if (out.length >= maxFiles) return false;
    seen.add(file);
    out.push({ uri: pathToFileURL(file).href });
    return true;
  };

  for (const { root, dir } of bases) {
    const rules = new GitignoreRules(root, opts.overlay);
    // The base itself may sit inside an ignored directory.
    if (dir !== root && (await rules.ignored(path.relative(root, dir), true))) continue;
    const stack = [dir];
    while (stack.length > 0) {
      if (token.isCancellationRequested) throw new ResponseError(ErrorCodes.RequestCancelled, 'workspace/xfiles cancelled');
      const current = stack.pop()!;
      let entries: import('node:fs').Dirent[];
      try {
        entries = await fsp.readdir(current, { withFileTypes: true });
      } catch {
        continue; // missing or unreadable directory: nothing on disk (the overlay may still have files)
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        const full = path.join(current, entry.name);
        const rel = path.relative(root, full);
        let isDir = entry.isDirectory();
        let isFile = entry.isFile();
        if (entry.isSymbolicLink()) {
          // Symlinked files are listed; symlinked directories are not followed (no loops, no escapes).
          try {
            const st = await fsp.stat(full);
            isFile = st.isFile();
            isDir = false;
          } catch {
            continue;
          }
        }
        if (isDir) {
          if (entry.name === '.git') continue;
          if (!(await rules.ignored(rel, true))) stack.push(full);
        } else if (isFile) {
          if (!(await rules.ignored(rel, false)) && !add(full)) return out;
        }
      }
    }
    // Overlay-only documents under this base.
    for (const uri of opts.overlayUris?.() ?? []) {
      const file = uriToPath(uri);
      if (file === undefined || !isWithin(dir, file) || file === dir) continue;
      const rel = path.relative(root, file);
      if (rel.split(path.sep).includes('.git')) continue;
      if (await rules.ignored(rel, false)) continue;
      if (!add(file)) return out;
    }
  }
  return out;
}

/**
 * Git's .gitignore semantics across nested files: for each path prefix, the deepest .gitignore
 * with a matching rule decides (negation included); an ignored directory hides everything below.
 */
class GitignoreRules {
  private readonly perDir = new Map<string, Promise<ParsedGitignore | undefined>>();
  private readonly verdicts = new Map<string, boolean>();

  constructor(
    private readonly root: string,
    private readonly overlay: SourcegraphHandlerOptions['overlay'],
  ) {}

  async ignored(rel: string, isDir: boolean): Promise<boolean> {
    if (rel === '' || rel.startsWith('..')) return false;
    const segs = rel.split(path.sep);
    for (let i = 0; i < segs.length; i++) {
      const prefixIsDir = i < segs.length - 1 || isDir;
      const key = segs.slice(0, i + 1).join('/') + (prefixIsDir ? '/' : '');
      let verdict = this.verdicts.get(key);
      if (verdict === undefined) {
        const chain: Array<[ParsedGitignore, string]> = [];
        for (let j = 0; j <= i; j++) {
          const rules = await this.rulesFor(segs.slice(0, j));
          if (rules) chain.push([rules, segs.slice(j, i + 1).join('/') + (prefixIsDir ? '/' : '')]);
        }
        verdict = ignoredBy(chain);
        this.verdicts.set(key, verdict);
      }
      if (verdict) return true;
    }
    return false;
  }

  private rulesFor(dirSegs: string[]): Promise<ParsedGitignore | undefined> {
    const dir = path.join(this.root, ...dirSegs);
    let p = this.perDir.get(dir);
    if (!p) {
      p = this.load(path.join(dir, GITIGNORE));
      this.perDir.set(dir, p);
    }
    return p;
  }

  private async load(file: string): Promise<ParsedGitignore | undefined> {
    let text = overlayLookup(this.overlay, file)?.text;
    if (text === undefined) {
      try {
        text = await fsp.readFile(file, 'utf8');
      } catch {
        return undefined;
      }
    }
    return parseGitignore(text);
  }
}

// ---------------------------------------------------------------------------------------------
// textDocument/xcontent

/**
 * The full TextDocumentItem for a URI inside the roots: the overlay's document if patchbay has
 * one, else the file on disk. Unknown files, directories and anything outside the roots get a
 * ResponseError.
 */
export async function readDocument(opts: SourcegraphHandlerOptions, uri: string): Promise<TextDocumentItem> {
  const file = uriToPath(uri);
  if (file === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `textDocument/xcontent: not a file URI: ${uri}`);
  const roots = normalizeRoots(opts.roots);
  const root = owningRoot(roots, file);
  if (root === undefined || file === root) {
    throw new ResponseError(ErrorCodes.InvalidParams, `textDocument/xcontent: ${uri} is outside the workspace roots`);
  }
  const doc = opts.overlay(uri) ?? overlayLookup(opts.overlay, file);
  if (doc) {
    return { uri, languageId: doc.languageId ?? languageIdOf(file), version: doc.version ?? 0, text: doc.text };
  }
  // Refuse symlinks that lead out of the roots.
  let real: string;
  try {
    real = await fsp.realpath(file);
  } catch {
    throw new ResponseError(ErrorCodes.InvalidParams, `textDocument/xcontent: unknown file ${uri}`);
  }
  const realRoots = await Promise.all(roots.map((r) => fsp.realpath(r).catch(() => r)));
  if (owningRoot(realRoots, real) === undefined) {
    throw new ResponseError(ErrorCodes.InvalidParams, `textDocument/xcontent: ${uri} resolves outside the workspace roots`);
  }
  const st = await fsp.stat(real);
  if (!st.isFile()) throw new ResponseError(ErrorCodes.InvalidParams, `textDocument/xcontent: not a file: ${uri}`);
  const max = opts.maxFileBytes ?? 16 * 1024 * 1024;
  if (st.size > max) {
    throw new ResponseError(ErrorCodes.InvalidParams, `textDocument/xcontent: ${uri} is too large (${st.size} bytes > ${max})`);
  }
  const text = await fsp.readFile(real, 'utf8');
  return { uri, languageId: languageIdOf(file), version: 0, text };
}

// ---------------------------------------------------------------------------------------------
// Helpers that use the SymbolDescriptor extensions of a server

/** `textDocument/xdefinition`: symbol metadata (and, when known, the location) of the definition at a position. */
export async function xdefinition(connection: MessageConnection, params: TextDocumentPositionParams, signal?: AbortSignal, timeoutMs = XREQUEST_TIMEOUT_MS): Promise<SymbolLocationInformation[]> {
  const result = await send(connection, XDEFINITION, params, signal, timeoutMs);
  return asArray(result, XDEFINITION).map((item, i) => {
    if (!isRecord(item) || !isRecord(item.symbol)) throw badResponse(XDEFINITION, `item ${i} has no symbol object`);
    const out: SymbolLocationInformation = { symbol: item.symbol };
    if (item.location !== undefined && item.location !== null) {
      if (!isLocation(item.location)) throw badResponse(XDEFINITION, `item ${i} has a malformed location`);
      out.location = item.location;
    }
    return out;
  });
}

export interface XReferencesParams {
  query: Partial<SymbolDescriptor>;
  hints?: Record<string, unknown>;
  /** Sent to the server (some honour it) and enforced on the result. */
  limit?: number;
}

/** `workspace/xreferences`: project-wide references to a symbol described by a (partial) SymbolDescriptor. */
export async function xreferences(connection: MessageConnection, params: XReferencesParams, signal?: AbortSignal, timeoutMs = XREQUEST_TIMEOUT_MS): Promise<ReferenceInformation[]> {
  const wire: Record<string, unknown> = { query: params.query, hints: params.hints ?? {} };
  if (params.limit !== undefined) wire.limit = params.limit;
  const result = await send(connection, XREFERENCES, wire, signal, timeoutMs);
  const refs = asArray(result, XREFERENCES).map((item, i) => {
    if (!isRecord(item) || !isRecord(item.symbol) || !isLocation(item.reference)) {
      throw badResponse(XREFERENCES, `item ${i} is not a ReferenceInformation`);
    }
    return { reference: item.reference, symbol: item.symbol };
  });
  return params.limit !== undefined && params.limit >= 0 ? refs.slice(0, params.limit) : refs;
}

export interface WorkspaceSymbolByDescriptorParams {
  symbol: Partial<SymbolDescriptor>;
  /** Optional fuzzy query, ANDed with `symbol`. */
  query?: string;
  limit?: number;
}

/** `workspace/symbol` with a SymbolDescriptor (`WorkspaceSymbolParams.symbol`): exact-as-possible definitions. */
export async function workspaceSymbolByDescriptor(
  connection: MessageConnection,
  params: WorkspaceSymbolByDescriptorParams,
  signal?: AbortSignal,
  timeoutMs = XREQUEST_TIMEOUT_MS,
): Promise<SymbolInformation[]> {
  const wire: Record<string, unknown> = { symbol: params.symbol, query: params.query ?? '' };
  if (params.limit !== undefined) wire.limit = params.limit;
  const result = await send(connection, WORKSPACE_SYMBOL, wire, signal, timeoutMs);
  const symbols = asArray(result, WORKSPACE_SYMBOL).map((item, i) => {
    if (!isRecord(item) || typeof item.name !== 'string' || typeof item.kind !== 'number' || !isLocation(item.location)) {
      throw badResponse(WORKSPACE_SYMBOL, `item ${i} is not a SymbolInformation`);
    }
    return item as unknown as SymbolInformation;
  });
  return params.limit !== undefined && params.limit >= 0 ? symbols.slice(0, params.limit) : symbols;
}

// ---------------------------------------------------------------------------------------------
// internals

/** A request to the language server: it times out, `signal` cancels it, and both send $/cancelRequest. */
function send(connection: MessageConnection, method: string, params: unknown, signal: AbortSignal | undefined, timeoutMs: number): Promise<unknown> {
  return request(connection, method, params, { timeoutMs, signal, cancel: 'lsp' });
}

function asArray(result: unknown, method: string): unknown[] {
  if (result === null || result === undefined) return [];
  if (!Array.isArray(result)) throw badResponse(method, 'result is not an array');
  return result;
}

function badResponse(method: string, why: string): Error {
  return new Error(`${method}: malformed response from the language server: ${why}`);
}

function isPosition(v: unknown): boolean {
  return isRecord(v) && typeof v.line === 'number' && typeof v.character === 'number';
}

function isLocation(v: unknown): v is Location {
  return isRecord(v) && typeof v.uri === 'string' && isRecord(v.range) && isPosition(v.range.start) && isPosition(v.range.end);
}

function splitArgs(args: unknown[]): { params: unknown; token: CancellationToken } {
  const last = args[args.length - 1];
  if (args.length > 0 && CancellationToken.is(last)) {
    return { params: args.length > 1 ? args[0] : undefined, token: last };
  }
  return { params: args[0], token: CancellationToken.None };
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** An absolute, normalised path for a `file:` URI; undefined for any other scheme or a malformed URI. */
function uriToPath(uri: string): string | undefined {
  if (!/^file:/i.test(uri)) return undefined;
  try {
    return path.resolve(fileURLToPath(uri));
  } catch {
    return undefined;
  }
}

function normalizeRoots(roots: string[]): string[] {
  const out: string[] = [];
  for (const r of roots) {
    const p = /^[a-z][a-z0-9+.-]*:/i.test(r) && !/^[a-z]:[\\/]/i.test(r) ? uriToPath(r) : path.resolve(r);
    if (p !== undefined && !out.includes(p)) out.push(p);
  }
  return out;
}

function resolveBase(firstRoot: string, base: string): string {
  if (/^file:/i.test(base)) {
    const p = uriToPath(base);
    if (p === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `workspace/xfiles: malformed base URI ${base}`);
    return p;
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(base) && !/^[a-z]:[\\/]/i.test(base)) {
    throw new ResponseError(ErrorCodes.InvalidParams, `workspace/xfiles: unsupported base URI ${base}`);
  }
  let rel = base;
  try {
    rel = decodeURIComponent(base);
  } catch {
    /* keep as is */
  }
  return path.resolve(firstRoot, rel);
}

/** The deepest root containing `file`. */
function owningRoot(roots: string[], file: string): string | undefined {
  let best: string | undefined;
  for (const r of roots) if (isWithin(r, file) && (best === undefined || r.length > best.length)) best = r;
  return best;
}

/** Overlay lookup by path, trying patchbay's canonical URI spelling. */
function overlayLookup(overlay: SourcegraphHandlerOptions['overlay'], file: string): OverlayDocument | undefined {
  return overlay(pathToFileURL(file).href);
}

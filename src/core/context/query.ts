/**
 * `chat/queryContext` (specs/eca-protocol.md "Chat Query Context"): what the editor offers
 * after `@`. Like ECA, the answer is, in order: the server-computed contexts (`repoMap`, and a
 * bare `cursor` the editor fills in), the workspace roots, then either the listing of a folder
 * the query names as a path (`./src/`, `../x`, `~/notes`, `/etc/`), or the workspace files
 * and directories matching the query fuzzily, then MCP resources. A blank query offers
 * everything.
 */
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve, sep } from 'node:path';
import type { Context as ChatContext, ResourceContext, OfferedContext } from '../../shapes/context.js';
import type { FileIndex } from './file-index.js';
import { fuzzyScore, NO_MATCH } from './fuzzy.js';

export interface QueryContextsOptions {
  /** Most file/directory entries returned (default 100, as ECA). */
  limit?: number;
  /** Base for `./` and `../` queries (default: the first index's root). */
  roots?: string[];
  /** Resources offered by the connected MCP servers. */
  resources?: ResourceContext[];
  /** Mentions their providers already matched to the query (OpenCtx): offered as they are. */
  mentions?: ResourceContext[];
  /** Contexts the chat already has; they are not offered again. */
  exclude?: ChatContext[];
}

/** Keyword contexts and the words that find them. */
const SPECIAL: Array<{ word: string; ctx: OfferedContext }> = [
  { word: 'repomap', ctx: { type: 'repoMap' } },
  { word: 'cursor', ctx: { type: 'cursor' } },
];

export function queryContexts(indexes: FileIndex[], query: string, opts: QueryContextsOptions = {}): OfferedContext[] {
  const limit = opts.limit ?? 100;
  const q = query.trim();
  const ql = q.toLowerCase().replace(/\s+/g, '');
  const roots = opts.roots ?? indexes.map((ix) => ix.root);
  const out: OfferedContext[] = [];

  // Few, named things: matched by substring, not fuzzily (a fuzzy `chat` would match `patchbay-ctx`).
  const named = (...names: string[]): boolean => !ql || names.some((n) => n.toLowerCase().replace(/\s+/g, '').includes(ql));

  for (const s of SPECIAL) if (named(s.word)) out.push(s.ctx);
  for (const root of roots) if (named(basename(root))) out.push({ type: 'directory', path: root });

  const asPath = pathQuery(q, roots[0]);
  if (asPath !== undefined) out.push(...listPath(asPath, limit));
  else out.push(...searchIndexes(indexes, q, limit));

  for (const r of opts.resources ?? []) if (named(r.name, r.uri, r.server)) out.push({ ...r, type: 'resource' });
  for (const m of opts.mentions ?? []) out.push({ ...m, type: 'resource' });

  return dedupe(out, opts.exclude ?? []);
}

/** Merge the indexes' results by score. */
function searchIndexes(indexes: FileIndex[], q: string, limit: number): ChatContext[] {
  const hits = indexes.flatMap((ix) => ix.query(q, limit));
  if (indexes.length > 1) hits.sort((a, b) => b.score - a.score || a.path.length - b.path.length);
  return hits.slice(0, limit).map((h) => ({ type: h.type, path: h.path }));
}

/** The absolute path a query names, when it is written as a path. */
function pathQuery(q: string, base: string | undefined): string | undefined {
  if (q === '~' || q.startsWith('~/')) return join(homedir(), q.slice(1));
  if (q.startsWith('/')) return q;
  if (base && (q === '.' || q === '..' || q.startsWith('./') || q.startsWith('../'))) return join(base, q);
  return undefined;
}

/**
 * The entries of the folder a path query names; when it ends mid-name (`./src/co`), the
 * parent's entries whose name matches what was typed. Folders first.
 */
function listPath(p: string, limit: number): ChatContext[] {
  const trailing = p.endsWith('/') || p.endsWith(sep);
  let dir = resolve(p);
  let partial = '';
  if (!trailing && !isDir(dir)) {
    partial = basename(dir).toLowerCase();
    dir = dirname(dir);
  }
  let ents: Dirent[];
  try {
    ents = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const matched = ents
    .filter((e) => !partial || fuzzyScore(e.name.toLowerCase(), e.name, 0, partial) !== NO_MATCH)
    .map((e) => ({ dir: e.isDirectory() || (e.isSymbolicLink() && isDir(join(dir, e.name))), name: e.name }))
    .sort((a, b) => Number(b.dir) - Number(a.dir) || (a.name < b.name ? -1 : 1));
  return matched.slice(0, limit).map((e): ChatContext => ({ type: e.dir ? 'directory' : 'file', path: join(dir, e.name) }));
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function keyOf(c: OfferedContext): string {
  switch (c.type) {
    case 'file':
    case 'directory':
      return `${c.type}:${c.path}`;
    case 'resource':
      return `mcp:${c.server}:${c.uri}`;
    case 'web':
      return `web:${c.url}`;
    default:
      return c.type;
  }
}

function dedupe(list: OfferedContext[], exclude: ChatContext[]): OfferedContext[] {
  // A file already attached whole is not offered again; one attached by a line range still is.
  const seen = new Set(exclude.filter((c) => !(c.type === 'file' && c.linesRange)).map(keyOf));
  return list.filter((c) => {
    const k = keyOf(c);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

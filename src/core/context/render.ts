/**
 * Turn a prompt's contexts into the text put in the LLM input, one tagged block each (shape
 * after ECA's `contexts-str`). A context that cannot be rendered (missing file, failed fetch)
 * becomes a short error block plus an entry in `errors`; rendering never throws.
 */
import { isWithin, resolvePath } from '../../util/paths.js';
import { stat } from 'node:fs/promises';
import { readBounded } from '../../util/small-file.js';
import { resolve } from 'node:path';
import type { Context as ChatContext, CursorContext, DirectoryContext, FileContext, ResourceContext, WebContext } from '../../shapes/context.js';
import { errorMessage } from '../../util/log.js';
import { listFiles } from './listing.js';
import { renderTree } from './tree.js';
import { fetchWebText } from './web.js';

export interface RenderOptions {
  /** Workspace roots; relative paths resolve against the first. */
  roots: string[];
  signal: AbortSignal;
  webMaxChars: number;
  repoMapMaxEntries: number;
  readResource?: (ctx: ResourceContext, signal: AbortSignal) => Promise<string>;
  /** Entries listed for a directory context (default 500). */
  directoryMaxEntries?: number;
  /** Bytes read from a file context before truncating (default 1 MiB). */
  fileMaxBytes?: number;
  /** Web fetch timeout (default 15 s). */
  webTimeoutMs?: number;
  /** Use `git ls-files` inside git work trees (default true). */
  useGit?: boolean;
  /** Annotations for a file (e.g. from OpenCtx providers), rendered beside its content; '' for none. */
  annotate?: (path: string, content: string, signal: AbortSignal) => Promise<string>;
}

export interface RenderedContexts {
  text: string;
  errors: string[];
}

/** A walk of a huge folder outside git stops here. */
const WALK_MAX_FILES = 200_000;

class ContextError extends Error {}

export async function renderContexts(contexts: ChatContext[], opts: RenderOptions): Promise<RenderedContexts> {
  const errors: Array<string | undefined> = [];
  const blocks = await Promise.all(
    contexts.map(async (ctx, i) => {
      try {
        opts.signal.throwIfAborted();
        return await renderOne(ctx, opts);
      } catch (e) {
        const msg = opts.signal.aborted ? 'cancelled' : errorMessage(e);
        const what = describe(ctx, opts);
        errors[i] = `${ctx.type}${what ? ` ${what}` : ''}: ${msg}`;
        return errorBlock(ctx, msg, opts);
      }
    }),
  );
  return { text: blocks.join('\n'), errors: errors.filter((e): e is string => e !== undefined) };
}

function renderOne(ctx: ChatContext, opts: RenderOptions): Promise<string> {
  switch (ctx.type) {
    case 'file':
      return renderFile(ctx, opts);
    case 'directory':
      return renderDirectory(ctx, opts);
    case 'web':
      return renderWeb(ctx, opts);
    case 'repoMap':
      return renderRepoMap(opts);
    case 'cursor':
      return renderCursor(ctx, opts);
    case 'resource':
      return renderResource(ctx, opts);
    case 'text':
      return Promise.resolve(tag('text', { label: ctx.label }, ctx.content));
    case 'image':
      // Images go to the model as image parts (images.ts takes them out first); only a marker here.
      return Promise.resolve(tag('image', { mediaType: ctx.mediaType }));
  }
}

// --- paths and tags -------------------------------------------------------------------------

function attr(v: string | number): string {
  return `"${String(v).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`;
}

function tag(name: string, attrs: Record<string, string | number | undefined>, body?: string): string {
  const a = Object.entries(attrs)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}=${attr(v as string | number)}`)
    .join('');
  return body === undefined ? `<${name}${a}/>` : `<${name}${a}>\n${body}\n</${name}>`;
}

function describe(ctx: ChatContext, opts: RenderOptions): string {
  switch (ctx.type) {
    case 'file':
    case 'directory':
    case 'cursor':
      return resolvePath(ctx.path, opts.roots);
    case 'web':
      return ctx.url;
    case 'resource':
      return ctx.uri;
    case 'repoMap':
      return '';
    case 'text':
      return ctx.label ?? 'text';
    case 'image':
      return ctx.mediaType;
  }
}

function errorBlock(ctx: ChatContext, msg: string, opts: RenderOptions): string {
  switch (ctx.type) {
    case 'file':
    case 'directory':
    case 'cursor':
      return tag(ctx.type, { path: describe(ctx, opts), error: msg });
    case 'web':
      return tag('web', { url: ctx.url, error: msg });
    case 'resource':
      return tag('resource', { uri: ctx.uri, server: ctx.server, error: msg });
    case 'repoMap':
      return tag('repoMap', { error: msg });
    case 'text':
      return tag('text', { label: ctx.label, error: msg });
    case 'image':
      return tag('image', { mediaType: ctx.mediaType, error: msg });
  }
}

function fsMessage(e: unknown, path: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `not found: ${path}`;
  if (code === 'EACCES' || code === 'EPERM') return `permission denied: ${path}`;
  if (code === 'EISDIR') return `is a directory: ${path}`;
  if (code === 'ENOTDIR') return `not a directory: ${path}`;
  return errorMessage(e);
}

// --- file -----------------------------------------------------------------------------------

async function readText(path: string, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  let r;
  try {
    r = await readBounded(path, maxBytes);
  } catch (e) {
    throw new ContextError(fsMessage(e, path));
  }
  if (r.kind === 'directory') throw new ContextError(`is a directory: ${path} (use a directory context)`);
  if (r.kind === 'other') throw new ContextError(`not a regular file: ${path}`);
  if (r.bytes.subarray(0, 8192).includes(0)) throw new ContextError(`binary file: ${path}`);
  return { text: r.bytes.toString('utf8'), truncated: r.more };
}

function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

async function renderFile(ctx: FileContext, opts: RenderOptions): Promise<string> {
  const path = resolvePath(ctx.path, opts.roots);
  const maxBytes = opts.fileMaxBytes ?? 1 << 20;
  const { text, truncated } = await readText(path, maxBytes);
  const notes = opts.annotate ? await opts.annotate(path, text, opts.signal).catch(() => '') : '';
  const beside = notes ? `\n${notes}` : '';
  if (!ctx.linesRange) {
    const note = truncated ? `\n[truncated: showing the first ${maxBytes} bytes]` : '';
    return tag('file', { path }, text + note) + beside;
  }
  const lines = splitLines(text);
  const start = Math.max(1, ctx.linesRange.start);
  const end = Math.min(lines.length, ctx.linesRange.end);
  if (ctx.linesRange.end < ctx.linesRange.start) {
    throw new ContextError(`invalid line range ${ctx.linesRange.start}-${ctx.linesRange.end}`);
  }
  if (start > lines.length) {
    throw new ContextError(`line range ${ctx.linesRange.start}-${ctx.linesRange.end} is past the end (${lines.length} lines)`);
  }
  return tag('file', { path, lines: `${start}-${end}` }, lines.slice(start - 1, end).join('\n')) + beside;
}

// --- directory and repo map -----------------------------------------------------------------

/** The workspace root holding `p`, for its `.gitignore` files. */
function rootOf(p: string, roots: string[]): string | undefined {
  return roots
    .map((r) => resolve(r))
    .filter((r) => isWithin(r, p))
    .sort((a, b) => b.length - a.length)[0];
}

async function renderDirectory(ctx: DirectoryContext, opts: RenderOptions): Promise<string> {
  const path = resolvePath(ctx.path, opts.roots);
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    throw new ContextError(fsMessage(e, path));
  }
  if (!st.isDirectory()) throw new ContextError(`not a directory: ${path}`);
  const { files } = await listFiles(path, {
    signal: opts.signal,
    useGit: opts.useGit,
    ignoreFrom: rootOf(path, opts.roots),
    maxFiles: WALK_MAX_FILES,
  });
  const max = opts.directoryMaxEntries ?? 500;
  const tree = renderTree([{ label: `${path}/`, files }], max);
  return tag('directory', { path }, tree.text + leftOut(tree.total, tree.shown));
}

function leftOut(total: number, shown: number): string {
  return total > shown ? `\n[${total - shown} of ${total} entries left out]` : '';
}

export interface RepoMapOptions {
  signal?: AbortSignal;
  /** Entries (files and folders) shown before the rest are counted as left out. */
  maxEntries: number;
  useGit?: boolean;
}

/**
 * The workspaces' structure as an indented tree (`git ls-files` inside git, a gitignore-aware
 * walk elsewhere), capped at `maxEntries` with a notice of how many were left out.
 */
export async function buildRepoMap(roots: string[], opts: RepoMapOptions): Promise<string> {
  const sources = await Promise.all(
    roots.map(async (r) => {
      const root = resolve(r);
      const { files } = await listFiles(root, { signal: opts.signal, useGit: opts.useGit, maxFiles: WALK_MAX_FILES });
      return { label: `${root}/`, files };
    }),
  );
  const tree = renderTree(sources, opts.maxEntries);
  return tree.text + leftOut(tree.total, tree.shown);
}

async function renderRepoMap(opts: RenderOptions): Promise<string> {
  if (opts.roots.length === 0) throw new ContextError('no workspace folders');
  const map = await buildRepoMap(opts.roots, { signal: opts.signal, maxEntries: opts.repoMapMaxEntries, useGit: opts.useGit });
  return tag('repoMap', { description: 'Workspace structure as a tree; indentation shows nesting, folders end with /' }, map);
}

// --- web, cursor, MCP resource --------------------------------------------------------------

async function renderWeb(ctx: WebContext, opts: RenderOptions): Promise<string> {
  const text = await fetchWebText(ctx.url, {
    signal: opts.signal,
    maxChars: opts.webMaxChars,
    timeoutMs: opts.webTimeoutMs,
  });
  return tag('web', { url: ctx.url }, text);
}

/** Positions arrive 1-based (as ECA editors send them) and are used 0-based here; the tag shows them 1-based. */
async function renderCursor(ctx: CursorContext, opts: RenderOptions): Promise<string> {
  const path = resolvePath(ctx.path, opts.roots);
  const zero = (p: { line: number; character: number }) => ({ line: Math.max(0, p.line - 1), character: Math.max(0, p.character - 1) });
  const start = zero(ctx.position.start);
  const end = zero(ctx.position.end);
  const attrs = {
    description: 'Editor cursor; line and character are 1-based',
    path,
    line: start.line + 1,
    character: start.character + 1,
  };
  if (start.line === end.line && start.character === end.character) return tag('cursor', attrs);
  const { text } = await readText(path, opts.fileMaxBytes ?? 1 << 20);
  const lines = splitLines(text);
  const [a, b] = start.line < end.line || (start.line === end.line && start.character <= end.character) ? [start, end] : [end, start];
  if (a.line >= lines.length) throw new ContextError(`selection starts past the end of ${path}`);
  const picked = lines.slice(a.line, b.line + 1);
  const lastIdx = picked.length - 1;
  if (b.line < lines.length) picked[lastIdx] = picked[lastIdx].slice(0, b.character);
  picked[0] = picked[0].slice(a.character);
  return tag('cursor', { ...attrs, line: a.line + 1, character: a.character + 1, endLine: b.line + 1, endCharacter: b.character + 1 }, picked.join('\n'));
}

async function renderResource(ctx: ResourceContext, opts: RenderOptions): Promise<string> {
  if (!opts.readResource) throw new ContextError('resources are not available here');
  const text = await opts.readResource(ctx, opts.signal);
  return tag('resource', { uri: ctx.uri, name: ctx.name, server: ctx.server, mimeType: ctx.mimeType || undefined }, text);
}

/**
 * `@mentions` in a typed prompt become ECA contexts: `@src/a.ts` → `{type:'file', path}`,
 * `@src/` → `{type:'directory', path}`, `@repoMap`, `@https://…` → `{type:'web', url}`. The
 * `@token` stays in the message text. Tab completion offers what `chat/queryContext` and
 * `chat/queryCommands` answer, MCP resources and OpenCtx mentions included: they have no
 * text form, so they are offered as `@<server>:<name>` (whitespace dropped; OpenCtx ones have
 * server `openctx:<provider>`) and a picked one is sent as the context the server offered.
 */
import { statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import type { ChatContext } from '../protocol/eca/context.js';

const MENTION = /(^|\s)@(\S+)/g;
const TRAILING_PUNCT = /[.,;:!?)\]}'"`]+$/;

/** Contexts the completer already resolved, by token (without `@`). */
export type KnownMentions = Map<string, ChatContext>;

function fsContext(token: string, cwd: string): ChatContext | undefined {
  const p = token === '~' || token.startsWith('~/') ? join(homedir(), token.slice(1)) : resolve(cwd, token);
  try {
    const st = statSync(p);
    if (st.isDirectory()) return { type: 'directory', path: p };
    if (st.isFile()) return { type: 'file', path: p };
  } catch {
    /* not a path */
  }
  return undefined;
}

function resolveToken(token: string, cwd: string, known?: KnownMentions): ChatContext | undefined {
  const hit = known?.get(token);
  if (hit) return hit;
  if (token.toLowerCase() === 'repomap') return { type: 'repoMap' };
  if (/^https?:\/\/\S+$/i.test(token)) return { type: 'web', url: token };
  return fsContext(token, cwd);
}

/** The contexts the message mentions (deduplicated, in order); unknown mentions are left alone. */
export function mentionsToContexts(message: string, cwd: string, known?: KnownMentions): ChatContext[] {
  const out: ChatContext[] = [];
  const seen = new Set<string>();
  for (const m of message.matchAll(MENTION)) {
    const token = m[2];
    let ctx = resolveToken(token, cwd, known);
    if (!ctx && TRAILING_PUNCT.test(token)) {
      const bare = token.replace(TRAILING_PUNCT, '');
      if (bare) ctx = resolveToken(bare, cwd, known);
    }
    if (!ctx) continue;
    const key = JSON.stringify(ctx);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(ctx);
  }
  return out;
}

/** A context as `chat/queryContext` offers it (only the fields a token is made of are read). */
export interface OfferedContext {
  type: string;
  path?: string;
  url?: string;
  server?: string;
  name?: string;
}

/** `@token` for an offered context, or undefined when a terminal cannot use it. */
export function tokenFor(ctx: OfferedContext, cwd: string): string | undefined {
  if (ctx.type === 'repoMap') return 'repoMap';
  if (ctx.type === 'mcpResource' && ctx.server && ctx.name) return `${ctx.server}:${ctx.name.replace(/\s+/g, '')}`;
  if (ctx.type === 'web' && ctx.url) return ctx.url;
  if ((ctx.type === 'file' || ctx.type === 'directory') && ctx.path) {
    let shown = ctx.path;
    if (isAbsolute(shown)) {
      const rel = relative(cwd, shown);
      shown = rel === '' ? '.' : !rel.startsWith('..') && !isAbsolute(rel) ? rel : shown;
    }
    if (/\s/.test(shown)) return undefined; // a mention is one whitespace-free token
    return ctx.type === 'directory' && !shown.endsWith('/') ? `${shown}/` : shown;
  }
  return undefined; // cursor (no editor here)
}

/**
 * What to ask the server for `@partial`: `everything:Res` asks for `Res` (resources and mentions
 * are matched by their name, not by `server:name`); a URL is asked for as it is.
 */
export function contextQuery(partial: string): string {
  if (/^https?:/i.test(partial)) return partial;
  const colon = partial.lastIndexOf(':');
  return colon < 0 ? partial : partial.slice(colon + 1);
}

export interface CompletionSources {
  queryContext(query: string): Promise<OfferedContext[]>;
  queryCommands(query: string): Promise<Array<{ name: string }>>;
  /** Commands the client handles itself (`exit`, `new`, …). */
  localCommands: string[];
}

/** Readline completion for `@partial` (last token) and `/partial` (whole line). */
export async function complete(line: string, cwd: string, src: CompletionSources, known: KnownMentions): Promise<[string[], string]> {
  const at = /(?:^|\s)@(\S*)$/.exec(line);
  if (at) {
    const partial = at[1];
    const offered = await src.queryContext(contextQuery(partial));
    const tokens: string[] = [];
    for (const ctx of offered) {
      const token = tokenFor(ctx, cwd);
      if (!token || tokens.includes(`@${token}`)) continue;
      if (ctx.type === 'file' || ctx.type === 'directory' || ctx.type === 'repoMap' || ctx.type === 'web' || ctx.type === 'mcpResource') {
        known.set(token, ctx as ChatContext);
        known.set(token.replace(/\/$/, ''), ctx as ChatContext);
      }
      tokens.push(`@${token}`);
      if (tokens.length >= 50) break;
    }
    return [completionList(tokens, `@${partial}`), `@${partial}`];
  }
  const slash = /^\/(\S*)$/.exec(line);
  if (slash) {
    const q = slash[1];
    const names = (await src.queryCommands(q)).map((c) => `/${c.name}`);
    for (const l of src.localCommands) if (l.startsWith(q) && !names.includes(`/${l}`)) names.push(`/${l}`);
    return [completionList(names, line), line];
  }
  return [[], line];
}

/**
 * What readline gets. It inserts the common prefix of the candidates, and replaces the typed
 * text when that prefix does not extend it (Node ≥ 18), so: candidates extending what was typed
 * when there are any; a single fuzzy match as is (it replaces the typed text); several fuzzy
 * matches plus the typed text itself, so they are listed and nothing typed is lost.
 */
export function completionList(candidates: string[], typed: string): string[] {
  const prefixed = candidates.filter((c) => c.startsWith(typed));
  if (prefixed.length) return prefixed;
  if (candidates.length <= 1) return candidates;
  return [...candidates, typed];
}

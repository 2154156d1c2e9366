/**
 * Selector matching (spec "Meta": `Selector`; protocol `AnnotationSelector`). Pure functions.
 *
 * - `path` is a picomatch glob. The spec says it matches the resource's hostname and path; the
 *   reference client (`@openctx/client` matchSelectors) tests the path alone, without its leading
 *   slash. Providers are written against either reading, so a glob matching any candidate counts.
 *   When workspace roots are given, the path relative to a containing root is a candidate too.
 * - `contentContains` is a plain substring test.
 * - Every condition of one selector must hold; any one selector of the list may match.
 * - `undefined` selects every resource; an empty list selects none.
 */
import picomatch from 'picomatch';
import { fileURLToPath } from 'node:url';
import { relative, isAbsolute, sep } from 'node:path';
import type { Selector } from './schema.js';

export interface SelectorResource {
  /** The resource's URI (`file:` URL, `https:` URL, …). */
  uri: string;
  /** The resource's content; without it, a `contentContains` condition fails. */
  content?: string;
}

const matcherCache = new Map<string, (s: string) => boolean>();
function globMatcher(glob: string): (s: string) => boolean {
  let m = matcherCache.get(glob);
  if (!m) {
    m = picomatch(glob, { dot: true });
    if (matcherCache.size > 500) matcherCache.clear();
    matcherCache.set(glob, m);
  }
  return m;
}

function trimLeadingSlash(s: string): string {
  return s.replace(/^\/+/, '');
}

/** The strings a `path` glob is tried against, most specific reading first. */
export function pathCandidates(uri: string, roots: readonly string[] = []): string[] {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    // Not a URL: treat it as a plain path.
    return [...new Set([uri, trimLeadingSlash(uri)])];
  }
  let pathname = url.pathname;
  try {
    pathname = decodeURIComponent(pathname);
  } catch {
    /* keep the encoded form */
  }
  const out = [trimLeadingSlash(url.hostname + pathname), trimLeadingSlash(pathname)];
  if (url.protocol === 'file:' && roots.length > 0) {
    let file: string | undefined;
    try {
      file = fileURLToPath(url);
    } catch {
      file = undefined;
    }
    if (file) {
      for (const root of roots) {
        const rel = relative(root, file);
        if (rel && !rel.startsWith('..') && !isAbsolute(rel)) out.push(rel.split(sep).join('/'));
      }
    }
  }
  return [...new Set(out)];
}

/** Whether one selector's every condition holds for the resource. */
export function matchSelector(selector: Selector, resource: SelectorResource, roots: readonly string[] = []): boolean {
  if (selector.path !== undefined) {
    const m = globMatcher(selector.path);
    if (!pathCandidates(resource.uri, roots).some((c) => m(c))) return false;
  }
  if (selector.contentContains !== undefined) {
    if (resource.content === undefined || !resource.content.includes(selector.contentContains)) return false;
  }
  return true;
}

/** Whether a provider with these selectors is called for the resource. */
export function matchSelectors(selectors: readonly Selector[] | undefined, resource: SelectorResource, roots: readonly string[] = []): boolean {
  if (selectors === undefined) return true;
  return selectors.some((s) => matchSelector(s, resource, roots));
}

/**
 * Protocol `items.messageSelectors`: regular-expression patterns tried against the message.
 * Undefined selects every message; an invalid pattern never matches.
 */
export function matchMessageSelectors(selectors: ReadonlyArray<{ pattern: string }> | undefined, message: string): boolean {
  if (selectors === undefined) return true;
  return selectors.some((s) => {
    try {
      return new RegExp(s.pattern).test(message);
    } catch {
      return false;
    }
  });
}

/**
 * `toolCall.approval.insideWorkspace` (ECA 0.172): folders the tools treat as inside the
 * workspace. A path there is judged as one in a workspace folder: no asking because it is
 * outside, and the containment checks made when a tool opens it (util/contained.ts) let it
 * through. The config's approval rules still apply (a write there asks unless allowed, as in a
 * workspace folder). The workspace folders themselves are unchanged: relative paths, the default
 * working directory and what the prompt lists stay theirs.
 *
 * Each entry is a folder path: absolute, `~` or `~/…` (the home folder), or relative to the
 * first workspace folder (as ECA resolves its other relative config paths); a blank entry is
 * ignored. No globs: a folder covers everything below it. From an untrusted workspace's own
 * config the key is held back (config/held-back.ts): it widens where tools go unasked.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** The folders of `entries`, resolved (see above), without duplicates. */
export function insideWorkspaceFolders(entries: readonly string[] | undefined, roots: readonly string[], home: string = homedir()): string[] {
  const out: string[] = [];
  for (const raw of entries ?? []) {
    const p = raw.trim();
    if (!p) continue;
    const abs = p === '~' ? home : p.startsWith('~/') ? join(home, p.slice(2)) : isAbsolute(p) ? resolve(p) : roots[0] ? resolve(roots[0], p) : undefined;
    if (abs && !out.includes(abs)) out.push(abs);
  }
  return out;
}

/**
 * The folders a tool call is contained in: the workspace folders first (the first stays the
 * default for relative paths), then the configured `insideWorkspace` ones not already among them.
 */
export function toolRoots(roots: string[], entries: readonly string[] | undefined, home?: string): string[] {
  const extra = insideWorkspaceFolders(entries, roots, home).filter((f) => !roots.some((r) => resolve(r) === f));
  return extra.length ? [...roots, ...extra] : roots;
}

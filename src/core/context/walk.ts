/**
 * A plain directory walk that honours `.gitignore` files the way git does (nested ones apply
 * below their folder, and a deeper file can re-include what a shallower one ignored), for
 * workspaces outside git. `.git` and `node_modules` are always skipped; symlinks are listed,
 * never followed.
 *
 * The walk is written once, as a generator that asks for directory listings and file reads a
 * level at a time; `walkSync` and `walkAsync` answer those requests with sync or async fs.
 */
import type { Dirent } from 'node:fs';
import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { readSmallFile, readSmallFileSync } from '../../util/small-file.js';
import { GITIGNORE, ignoredBy, parseGitignore, type ParsedGitignore } from '../../util/gitignore.js';

/** A `.gitignore` longer than this is read only this far (a repo's own files are not trusted to be sane). */
const MAX_IGNORE_BYTES = 1024 * 1024;

const ALWAYS_SKIPPED = new Set(['.git', 'node_modules']);

export interface WalkOptions {
  /** Stop after this many files. */
  maxFiles?: number;
  /**
   * A folder above the walked one (the workspace root) whose `.gitignore` files, down to the
   * walked folder, also apply.
   */
  ignoreFrom?: string;
}

/** One `.gitignore`: a path relative to the walked folder is made relative to the file's folder. */
interface Matcher {
  ig: ParsedGitignore;
  prefix: string;
  strip: number;
}

type Request = { kind: 'readdir'; paths: string[] } | { kind: 'read'; paths: string[] };
type Response = Array<Dirent[] | string | undefined>;

function isIgnored(chain: readonly Matcher[], rel: string, isDir: boolean): boolean {
  return ignoredBy(chain.map((m) => [m.ig, m.prefix + rel.slice(m.strip) + (isDir ? '/' : '')] as const));
}

function* walkSteps(root: string, opts: WalkOptions): Generator<Request, string[], Response> {
  const maxFiles = opts.maxFiles ?? Number.POSITIVE_INFINITY;
  let chain: Matcher[] = [];
  if (opts.ignoreFrom) {
    const up = relative(opts.ignoreFrom, root);
    if (up && !up.startsWith('..')) {
      // Ancestors from the workspace root down to (not including) the walked folder.
      const ancestors: string[] = [];
      for (let d = dirname(root); ; d = dirname(d)) {
        ancestors.unshift(d);
        if (d === opts.ignoreFrom || d === dirname(d)) break;
      }
      const texts = yield { kind: 'read', paths: ancestors.map((a) => join(a, GITIGNORE)) };
      ancestors.forEach((a, i) => {
        const text = texts[i];
        if (typeof text !== 'string') return;
        const prefix = relative(a, root).split(sep).join('/') + '/';
        chain.push({ ig: parseGitignore(text), prefix, strip: 0 });
      });
    }
  }

  const files: string[] = [];
  let level: Array<{ rel: string; chain: Matcher[] }> = [{ rel: '', chain }];
  while (level.length > 0) {
    const listings = yield { kind: 'readdir', paths: level.map((d) => join(root, d.rel)) };
    const withIgnore = level.flatMap((d, i) => {
      const l = listings[i];
      return Array.isArray(l) && l.some((e) => e.name === GITIGNORE && !e.isDirectory()) ? [i] : [];
    });
    const texts = withIgnore.length ? yield { kind: 'read', paths: withIgnore.map((i) => join(root, level[i].rel, GITIGNORE)) } : [];
    const textOf = new Map<number, Response[number]>(withIgnore.map((d, k) => [d, texts[k]]));
    const next: typeof level = [];
    for (let i = 0; i < level.length; i++) {
      const listing = listings[i];
      if (!Array.isArray(listing)) continue;
      const dir = level[i];
      chain = dir.chain;
      const text = textOf.get(i);
      if (typeof text === 'string') {
        chain = [...chain, { ig: parseGitignore(text), prefix: '', strip: dir.rel ? dir.rel.length + 1 : 0 }];
      }
      for (const ent of listing) {
        if (ALWAYS_SKIPPED.has(ent.name)) continue;
        const rel = dir.rel ? `${dir.rel}/${ent.name}` : ent.name;
        const isDir = ent.isDirectory();
        if (isIgnored(chain, rel, isDir)) continue;
        if (isDir) next.push({ rel, chain });
        else {
          files.push(rel);
          if (files.length >= maxFiles) return files;
        }
      }
    }
    level = next;
  }
  return files;
}

/** Files under `root`, relative and `/`-separated, breadth-first. */
export function walkSync(root: string, opts: WalkOptions = {}): string[] {
  const steps = walkSteps(root, opts);
  let r = steps.next([]);
  while (!r.done) {
    const req = r.value;
    const res: Response = req.paths.map((p) => {
      try {
        return req.kind === 'readdir' ? readdirSync(p, { withFileTypes: true }) : readSmallFileSync(p, MAX_IGNORE_BYTES);
      } catch {
        return undefined;
      }
    });
    r = steps.next(res);
  }
  return r.value;
}

const CONCURRENCY = 32;

export async function walkAsync(root: string, opts: WalkOptions & { signal?: AbortSignal } = {}): Promise<string[]> {
  const steps = walkSteps(root, opts);
  let r = steps.next([]);
  while (!r.done) {
    opts.signal?.throwIfAborted();
    const req = r.value;
    const res: Response = new Array(req.paths.length);
    for (let i = 0; i < req.paths.length; i += CONCURRENCY) {
      const batch = req.paths.slice(i, i + CONCURRENCY).map(async (p, j) => {
        try {
          res[i + j] = req.kind === 'readdir' ? await readdir(p, { withFileTypes: true }) : await readSmallFile(p, MAX_IGNORE_BYTES);
        } catch {
          res[i + j] = undefined;
        }
      });
      await Promise.all(batch);
    }
    r = steps.next(res);
  }
  return r.value;
}

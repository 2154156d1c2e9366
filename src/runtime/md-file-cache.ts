/**
 * Markdown files of the agent runtime (skills, custom commands) read on every use, cheaply: a
 * folder is listed again only when its mtime moved, a file parsed again only when its mtime or size
 * did. So edits, new files and new folders apply at the next prompt with no watcher, and a prompt
 * with 50 skills costs about a hundred `stat` calls.
 *
 * Synchronous on purpose: the system prompt's sections and the command list are read synchronously
 * (core/turn/prompt-sections.ts, core/chat/commands.ts), and a stat of a cached file is microseconds.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { readBoundedSync } from '../util/small-file.js';
import { isAbsolute, join, relative } from 'node:path';
import type { AgentFileSource } from '../config/agent-files.js';
import { errorMessage } from '../util/log.js';

export interface ScannedFile<T> {
  path: string;
  /** Its real path (symlinks resolved), taken when it was read. */
  real: string;
  source: AgentFileSource;
  value: T;
}

export interface Scan<T> {
  files: ScannedFile<T>[];
  /** Folders or files that exist but could not be read, and config entries that name nothing. */
  problems: { path: string; message: string }[];
  /** A key that changes whenever any listed file or its content did. */
  key: string;
}

export interface ScanRules {
  match(name: string): boolean;
  /** Stop descending below a folder that holds a match (a skill's own folder holds no skills). */
  leaf?: boolean;
  maxDepth?: number;
  limit?: number;
  /** How many folders one scan may visit (every one is stat-ed at each use). */
  maxDirs?: number;
}

interface Entry {
  name: string;
  dir: boolean;
  file: boolean;
}

/** Files bigger than this are not read: a runaway file must not stall every prompt. */
const MAX_BYTES = 256 * 1024;

/**
 * A scan runs synchronously at every prompt: a skills folder that is (or links to) a big tree, say
 * a config entry naming the repository itself, must not stall the server. Past this many folders
 * the scan stops and says so.
 */
const MAX_DIRS = 2000;

export class MdFileCache<T> {
  private dirs = new Map<string, { mtimeMs: number; entries: Entry[] }>();
  private files = new Map<string, { mtimeMs: number; size: number; real: string; value: T }>();

  constructor(private readonly parse: (text: string, path: string) => T) {}

  scan(sources: AgentFileSource[], rules: ScanRules): Scan<T> {
    const maxDepth = rules.maxDepth ?? 8;
    const limit = rules.limit ?? 1000;
    const out: ScannedFile<T>[] = [];
    const problems: Scan<T>['problems'] = [];
    const seenFiles = new Set<string>();
    const seenDirs = new Map<string, { mtimeMs: number; entries: Entry[] }>();
    const keyParts: string[] = [];
    // Each real folder is walked once: a link to a folder above it (`a -> ..`) would otherwise
    // walk the same tree again under every new name, growing as (links)^depth.
    const walked = new Set<string>();
    const maxDirs = rules.maxDirs ?? MAX_DIRS;
    let cut = false;
    let cutFiles = false;

    const take = (path: string, source: AgentFileSource): void => {
      if (seenFiles.has(path)) return;
      if (out.length >= limit) {
        if (!cutFiles) problems.push({ path: source.path, message: `more than ${limit} files; the rest were not read` });
        cutFiles = true;
        return;
      }
      seenFiles.add(path);
      try {
        const st = statSync(path);
        let hit = this.files.get(path);
        if (!hit || hit.mtimeMs !== st.mtimeMs || hit.size !== st.size) {
          // Opened without blocking and only when a regular file: a FIFO would hang the read.
          const r = readBoundedSync(path, MAX_BYTES, { whole: true });
          if (r.kind !== 'file') throw new Error('not a regular file');
          if (r.more) throw new Error(`larger than ${MAX_BYTES / 1024} KiB`);
          const text = r.bytes.toString('utf8');
          hit = { mtimeMs: st.mtimeMs, size: st.size, real: realpathSync(path), value: this.parse(text, path) };
          this.files.set(path, hit);
        }
        out.push({ path, real: hit.real, source, value: hit.value });
        keyParts.push(`${path}\0${hit.mtimeMs}\0${hit.size}`);
      } catch (e) {
        problems.push({ path, message: errorMessage(e) });
      }
    };

    const list = (dir: string, mtimeMs: number): Entry[] => {
      const cached = this.dirs.get(dir);
      if (cached && cached.mtimeMs === mtimeMs) return (seenDirs.set(dir, cached), cached.entries);
      const entries: Entry[] = [];
      for (const ent of readdirSync(dir, { withFileTypes: true })) {
        let isDir = ent.isDirectory();
        let isFile = ent.isFile();
        if (ent.isSymbolicLink()) {
          try {
            const t = statSync(join(dir, ent.name));
            isDir = t.isDirectory();
            isFile = t.isFile();
          } catch {
            continue;
          }
        }
        entries.push({ name: ent.name, dir: isDir, file: isFile });
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const fresh = { mtimeMs, entries };
      seenDirs.set(dir, fresh);
      return entries;
    };

    const walk = (dir: string, st: { mtimeMs: number; dev: number; ino: number }, depth: number, source: AgentFileSource): void => {
      const id = `${st.dev}:${st.ino}`;
      if (walked.has(id)) return;
      if (walked.size >= maxDirs) {
        if (!cut) problems.push({ path: source.path, message: `more than ${maxDirs} folders; the rest were not read` });
        cut = true;
        return;
      }
      walked.add(id);
      const mtimeMs = st.mtimeMs;
      let entries: Entry[];
      try {
        entries = list(dir, mtimeMs);
      } catch (e) {
        problems.push({ path: dir, message: errorMessage(e) });
        return;
      }
      const matches = entries.filter((e) => e.file && rules.match(e.name));
      for (const m of matches) take(join(dir, m.name), source);
      if (rules.leaf && matches.length) return;
      if (depth >= maxDepth) return;
      for (const e of entries) {
        if (!e.dir || e.name.startsWith('.') || e.name === 'node_modules') continue;
        const sub = join(dir, e.name);
        let st;
        try {
          st = statSync(sub);
        } catch {
          continue;
        }
        walk(sub, st, depth + 1, source);
      }
    };

    for (const source of sources) {
      let st;
      try {
        st = statSync(source.path);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') problems.push({ path: source.path, message: errorMessage(e) });
        else if (source.origin.startsWith('config ')) problems.push({ path: source.path, message: 'not found' });
        continue;
      }
      if (st.isFile()) take(source.path, source);
      else if (st.isDirectory()) walk(source.path, st, 1, source);
    }
    // Forget what is no longer there, so the cache cannot grow without bound.
    this.dirs = seenDirs;
    for (const p of [...this.files.keys()]) if (!seenFiles.has(p)) this.files.delete(p);
    return { files: out, problems, key: keyParts.join('\n') };
  }
}

/** A path as the user knows it: relative to its workspace folder, `~/…` under home, else whole. */
export function displayPath(path: string, roots: readonly string[], home: string): string {
  for (const r of roots) {
    const rel = relative(r, path);
    if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel;
  }
  const rel = relative(home, path);
  if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return `~/${rel}`;
  return path;
}

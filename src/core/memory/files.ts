/**
 * Memory files (ECA docs/config/memory.md "File format"): Markdown with YAML front-matter naming
 * the memory (`name`, `description`, both required) and optionally its `type` and `tags`. Reading
 * is lenient: a file that does not parse is skipped with its reason, never an error, so one bad
 * file never breaks a prompt. Writing is strict (`memoryContentError`): a write that would leave
 * a file the index cannot read is refused before it reaches disk.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseFrontMatter } from '../../config/frontmatter.js';
import { errorMessage } from '../../util/log.js';
import type { MemoryDir, MemoryTier } from './dirs.js';

export interface MemoryEntry {
  /** Absolute path: a memory's identity (a rename is a new memory). */
  path: string;
  tier: MemoryTier;
  label: string;
  name: string;
  description: string;
  /** `note` when the file names none. */
  type: string;
  tags: string[];
  mtimeMs: number;
  /** sha256 of the body (what follows the front-matter, in the part read): the usage ledger's change signal. */
  bodyHash: string;
}

export interface SkippedMemory {
  path: string;
  tier: MemoryTier;
  label: string;
  reason: string;
}

/** At most this many tags count per memory (the rest stay in the file; consolidation trims them). */
const MAX_TAGS = 3;
/** A folder tree deeper than this is not followed (a symlink loop must end somewhere). */
const MAX_DEPTH = 8;
/** And a store bigger than this is not read further: memory is meant to stay small. */
const MAX_FILES = 5_000;

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');

/**
 * A memory's front-matter is a few short lines; a longer one is refused and skipped unparsed:
 * YAML with many keys parses in quadratic time (1 MB took minutes, freezing every chat).
 */
export const MAX_FRONT_MATTER = 16 * 1024;
/** What is read of a memory file: its front-matter at most, in UTF-8 (the body is not needed). */
const HEAD_BYTES = 4 * MAX_FRONT_MATTER + 1;

/** The front-matter's data, or why `content` is not a valid memory file (worded for the model to fix and retry). */
function frontMatterOf(content: string): { data: Record<string, unknown> } | { error: string } {
  // Only whole lines up to the cap, so a closing line found there is the one a full parse finds.
  const head = content.length > MAX_FRONT_MATTER ? content.slice(0, content.lastIndexOf('\n', MAX_FRONT_MATTER) + 1) : content;
  const fm = parseFrontMatter(head);
  if (!fm.present) return { error: 'Invalid memory file content: it must start with YAML front-matter (a "---" line, `name:` and `description:`, a "---" line); fix and retry.' };
  if (head !== content && fm.error && !/^---[ \t]*$/m.test(head.replace(/^\uFEFF?---[ \t]*\r?\n/, ''))) {
    return {
      error: `Invalid memory file content: the front-matter is longer than ${MAX_FRONT_MATTER} characters (keep it to name, description, type and tags; details go in the body); fix and retry.`,
    };
  }
  if (fm.error) return { error: `Invalid memory file content: the YAML front-matter does not parse (${fm.error}); fix and retry.` };
  for (const key of ['name', 'description']) {
    if (!text(fm.data[key]))
      return { error: `Invalid memory file content: the YAML front-matter is missing the required key \`${key}\` (memory files need a non-blank name and description); fix and retry.` };
  }
  return { data: fm.data };
}

/** Why `content` is not a valid memory file, or undefined when it is. Worded for the model to fix and retry. */
export function memoryContentError(content: string): string | undefined {
  const fm = frontMatterOf(content);
  return 'error' in fm ? fm.error : undefined;
}

function tagsOf(v: unknown): string[] {
  const raw = typeof v === 'string' ? v.split(',') : Array.isArray(v) ? v.filter((t): t is string => typeof t === 'string') : [];
  const tags = raw.map((t) => t.trim().toLowerCase()).filter(Boolean);
  return [...new Set(tags)].slice(0, MAX_TAGS);
}

type Parsed = { name: string; description: string; type: string; tags: string[] };

/** The memory in `content`, or why it is skipped. */
export function parseMemory(content: string): Parsed | { skip: string } {
  const fm = frontMatterOf(content);
  if ('error' in fm) return { skip: fm.error };
  const { data } = fm;
  return { name: text(data.name), description: text(data.description), type: text(data.type) || 'note', tags: tagsOf(data.tags) };
}

/**
 * The hash of a memory's body: the front-matter is left out, so a retag or a new description
 * (what /memory-consolidate mostly does) is no change of the knowledge. Only called on a file
 * that parsed, so its front-matter is closed.
 */
function bodyHash(content: string): string {
  return createHash('sha256').update(parseFrontMatter(content).body.trim(), 'utf8').digest('hex');
}

/**
 * The first HEAD_BYTES of a regular file. Opened non-blocking and checked on the open file: a
 * FIFO swapped in since the folder was listed must not block the server.
 */
function readHead(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw new Error('not a regular file');
    const buf = Buffer.alloc(HEAD_BYTES);
    let n = 0;
    for (let got = -1; got !== 0 && n < HEAD_BYTES; n += got) got = readSync(fd, buf, n, HEAD_BYTES - n, n);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** mtime and size → what the file held then: a store is read every turn, unchanged files once. */
type Read = (Parsed & { bodyHash: string }) | { skip: string };

const cache = new Map<string, { mtimeMs: number; size: number; parsed: Read }>();

function readEntry(path: string): { parsed: Read; mtimeMs: number } {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    return { parsed: { skip: `cannot read file: ${errorMessage(e)}` }, mtimeMs: 0 };
  }
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return { parsed: hit.parsed, mtimeMs: st.mtimeMs };
  let parsed: Read;
  try {
    const head = readHead(path);
    const memory = parseMemory(head);
    parsed = 'skip' in memory ? memory : { ...memory, bodyHash: bodyHash(head) };
  } catch (e) {
    parsed = { skip: `cannot read file: ${errorMessage(e)}` };
  }
  cache.set(path, { mtimeMs: st.mtimeMs, size: st.size, parsed });
  return { parsed, mtimeMs: st.mtimeMs };
}

/**
 * Directory entries looked at per memory folder, at most: a link in it to `/` or a big home
 * would otherwise walk the whole disk on every turn (synchronously, freezing every chat).
 */
export const MAX_ENTRIES = 20_000;

interface Walk {
  out: string[];
  seen: Set<string>;
  entries: number;
}

/**
 * Every `.md` below `dir` (symlinks followed: the folder is the user's own, a dotfiles link is
 * meant), each real folder once (a link loop ends), bounded in depth, files and entries looked at.
 */
function markdownFiles(dir: string, depth: number, w: Walk): void {
  if (depth > MAX_DEPTH || w.out.length >= MAX_FILES || w.entries > MAX_ENTRIES) return;
  try {
    const real = realpathSync(dir);
    if (w.seen.has(real)) return;
    w.seen.add(real);
  } catch {
    return;
  }
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    if (w.out.length >= MAX_FILES || ++w.entries > MAX_ENTRIES) break;
    const p = join(dir, name);
    let st;
    try {
      st = statSync(p);
    } catch {
      continue;
    }
    if (st.isDirectory()) markdownFiles(p, depth + 1, w);
    else if (st.isFile() && name.endsWith('.md')) w.out.push(p);
  }
}

/** One folder's memories, newest file first, and the files skipped (in path order). */
export function scanDir(d: MemoryDir): { entries: MemoryEntry[]; skipped: SkippedMemory[] } {
  const entries: MemoryEntry[] = [];
  const skipped: SkippedMemory[] = [];
  const walk: Walk = { out: [], seen: new Set(), entries: 0 };
  markdownFiles(d.dir, 0, walk);
  // Said where memory/list, doctor and /memory-consolidate show it: memories past the cut are missing.
  if (walk.entries > MAX_ENTRIES)
    skipped.push({ path: d.dir, tier: d.tier, label: d.label, reason: `the folder (with the links in it) holds more than ${MAX_ENTRIES} entries; the rest was not read` });
  for (const path of walk.out) {
    const { parsed, mtimeMs } = readEntry(path);
    if ('skip' in parsed) skipped.push({ path, tier: d.tier, label: d.label, reason: parsed.skip });
    else entries.push({ path, tier: d.tier, label: d.label, ...parsed, mtimeMs });
  }
  entries.sort((a, b) => b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path));
  return { entries, skipped };
}

/** Every folder's memories, folder by folder in the order given. */
export function scanDirs(dirs: readonly MemoryDir[]): { entries: MemoryEntry[]; skipped: SkippedMemory[] } {
  const all = dirs.map(scanDir);
  return { entries: all.flatMap((s) => s.entries), skipped: all.flatMap((s) => s.skipped) };
}

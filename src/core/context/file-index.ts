/**
 * Every file and directory of one workspace root, for `chat/queryContext` (@-mentions).
 *
 * Lifecycle: cold → built on first need (`warm()` builds ahead of time; a query on a cold index
 * builds synchronously so the first answer is complete) → kept fresh. Freshness comes from
 * watching the indexed directories (non-recursive `fs.watch` on each, up to a cap — Node 20's
 * recursive mode on Linux watches every file, synchronously), which marks the index dirty and
 * rebuilds after a debounce; where coverage is incomplete, a TTL rebuilds in the background
 * (and a 30× longer one where it is complete, for events lost in races).
 * A rebuild never blocks a query: the previous snapshot is served until the new one is swapped in.
 */
import { watch, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import { logger, errorMessage } from '../../util/log.js';
import { charMask, maxFuzzyScore, maxPathScore, NO_MATCH, scorePath } from './fuzzy.js';
import { listFiles, listFilesSync, type Listing, type ListingMode } from './listing.js';

const log = logger('file-index');

export interface FileIndexEntry {
  type: 'file' | 'directory';
  /** Absolute. */
  path: string;
  score: number;
}

export interface FileIndexOptions {
  /** Watch directories for changes (default true). */
  watch?: boolean;
  /** Rebuild in the background when older than this and not fully watched (default 10 s; ×30 when watched). */
  ttlMs?: number;
  /** Delay between a change and the rebuild it triggers (default 200 ms). */
  debounceMs?: number;
  /** Watch at most this many directories, shallowest first (default 4096). */
  maxWatchedDirs?: number;
  /** Use `git ls-files` inside git work trees (default true). */
  useGit?: boolean;
}

/** One immutable build: parallel arrays, so the query loop touches no objects. */
interface Snapshot {
  mode: ListingMode;
  builtAt: number;
  count: number;
  paths: string[];
  lower: string[];
  masks: Int32Array;
  /** `charMask` of the basename alone. */
  baseMasks: Int32Array;
  /** Where the basename starts. */
  base: Int32Array;
  depth: Uint16Array;
  isDir: Uint8Array;
  /** Directories, shallowest first. */
  dirs: string[];
}

/** Tie-breaks encoded into one number: higher score first, then shorter path. */
const LEN_SLOTS = 4096;

function buildSnapshot(listing: Listing): Snapshot {
  const files = listing.files;
  const dirSet = new Set<string>();
  for (const f of files) {
    for (let i = f.lastIndexOf('/'); i > 0; i = f.lastIndexOf('/', i - 1)) {
      const d = f.slice(0, i);
      if (dirSet.has(d)) break;
      dirSet.add(d);
    }
  }
  const dirs = [...dirSet];
  const unsorted = files.concat(dirs);
  const count = unsorted.length;
  // Shortest first (a stable counting sort): the query loop can stop once no longer path could
  // enter the top k, since ties go to the shorter path.
  const order = byLength(unsorted);
  // Re-create the strings in scan order: the query loop reads them in sequence, and strings
  // still scattered across the listing's memory cost cache misses (measured: 2× slower).
  const sorted = new Array<string>(count);
  for (let i = 0; i < count; i++) sorted[i] = unsorted[order[i]];
  const paths = count ? sorted.join('\0').split('\0') : [];
  const lower = new Array<string>(count);
  const masks = new Int32Array(count);
  const baseMasks = new Int32Array(count);
  const base = new Int32Array(count);
  const depth = new Uint16Array(count);
  const isDir = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const p = paths[i];
    const l = p.toLowerCase();
    lower[i] = l;
    masks[i] = charMask(l);
    base[i] = p.lastIndexOf('/') + 1;
    baseMasks[i] = base[i] === 0 ? masks[i] : charMask(l.slice(base[i]));
    let d = 0;
    for (let j = p.indexOf('/'); j !== -1; j = p.indexOf('/', j + 1)) d++;
    depth[i] = d;
    isDir[i] = order[i] >= files.length ? 1 : 0;
  }
  dirs.sort((a, b) => depthOf(a) - depthOf(b) || (a < b ? -1 : 1));
  return { mode: listing.mode, builtAt: Date.now(), count, paths, lower, masks, baseMasks, base, depth, isDir, dirs };
}

function byLength(paths: string[]): Int32Array {
  let max = 0;
  for (const p of paths) if (p.length > max) max = p.length;
  const starts = new Int32Array(max + 2);
  for (const p of paths) starts[p.length + 1]++;
  for (let l = 1; l < starts.length; l++) starts[l] += starts[l - 1];
  const order = new Int32Array(paths.length);
  for (let i = 0; i < paths.length; i++) order[starts[paths[i].length]++] = i;
  return order;
}

function depthOf(p: string): number {
  let d = 0;
  for (let j = p.indexOf('/'); j !== -1; j = p.indexOf('/', j + 1)) d++;
  return d;
}

export class FileIndex {
  readonly root: string;
  private readonly opts: Required<FileIndexOptions>;
  private snap: Snapshot | undefined;
  private building: Promise<void> | undefined;
  private buildAbort: AbortController | undefined;
  private dirty = false;
  private disposed = false;
  private debounce: NodeJS.Timeout | undefined;
  private readonly watchers = new Map<string, FSWatcher>();
  private fullyWatched = false;

  constructor(root: string, opts: FileIndexOptions = {}) {
    this.root = resolve(root);
    this.opts = {
      watch: opts.watch ?? true,
      ttlMs: opts.ttlMs ?? 10_000,
      debounceMs: opts.debounceMs ?? 200,
      maxWatchedDirs: opts.maxWatchedDirs ?? 4096,
      useGit: opts.useGit ?? true,
    };
  }

  /** Build (or refresh a dirty index) ahead of the first query. */
  warm(): Promise<void> {
    if (this.snap && !this.dirty) return Promise.resolve();
    return this.rebuild();
  }

  /** Number of entries (files + directories) in the current snapshot; 0 before the first build. */
  get size(): number {
    return this.snap?.count ?? 0;
  }

  get mode(): ListingMode | undefined {
    return this.snap?.mode;
  }

  /** Fuzzy search; a blank query lists the top-level entries. */
  query(q: string, limit = 50): FileIndexEntry[] {
    const s = this.current();
    if (!s || limit <= 0) return [];
    const ql = q.replace(/\s+/g, '').toLowerCase();
    if (!ql) return this.topLevel(s, limit);

    const qmask = charMask(ql);
    const qHasSlash = ql.includes('/');
    const { count, lower, paths, masks, baseMasks, base } = s;
    const heap = new TopK(limit);
    const bestKey = maxPathScore(ql.length, qHasSlash) * LEN_SLOTS + LEN_SLOTS - 1;
    // Above this, a match spread over the directories cannot enter: the basename must match.
    const basenameOnlyAbove = qHasSlash ? Number.POSITIVE_INFINITY : maxFuzzyScore(ql.length);
    let mustBeat = -1;
    let minKey = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < count; i++) {
      const l = lower[i];
      const len = l.length < LEN_SLOTS ? l.length : LEN_SLOTS - 1;
      // Paths only get longer from here: once even a perfect score could not enter, stop.
      if (bestKey - len <= minKey) break;
      if (((mustBeat > basenameOnlyAbove ? baseMasks[i] : masks[i]) & qmask) !== qmask) continue;
      const sc = scorePath(l, paths[i], base[i], ql, qHasSlash, mustBeat);
      if (sc === NO_MATCH || sc < mustBeat) continue;
      if (heap.push(sc * LEN_SLOTS + (LEN_SLOTS - 1 - len), i)) {
        minKey = heap.min;
        mustBeat = Math.floor(minKey / LEN_SLOTS);
      }
    }
    return heap.drain().map(([key, i]) => this.entry(s, i, Math.floor(key / LEN_SLOTS)));
  }

  /** Close the watchers and stop any build in flight. */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.debounce);
    this.buildAbort?.abort();
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
  }

  private entry(s: Snapshot, i: number, score: number): FileIndexEntry {
    return { type: s.isDir[i] ? 'directory' : 'file', path: join(this.root, s.paths[i]), score };
  }

  private topLevel(s: Snapshot, limit: number): FileIndexEntry[] {
    const picked: number[] = [];
    for (let d = 0; picked.length < limit && d < 3; d++) {
      const atDepth: number[] = [];
      for (let i = 0; i < s.count; i++) if (s.depth[i] === d) atDepth.push(i);
      atDepth.sort((a, b) => s.isDir[b] - s.isDir[a] || (s.lower[a] < s.lower[b] ? -1 : 1));
      for (const i of atDepth) {
        if (picked.length >= limit) break;
        picked.push(i);
      }
    }
    return picked.map((i) => this.entry(s, i, 0));
  }

  /** The snapshot to answer from, scheduling a background refresh when it may be stale. */
  private current(): Snapshot | undefined {
    if (this.disposed) return this.snap;
    if (!this.snap) {
      try {
        this.install(buildSnapshot(listFilesSync(this.root, { useGit: this.opts.useGit })));
      } catch (e) {
        log.warn(`index of ${this.root} failed: ${errorMessage(e)}`);
        return undefined;
      }
    } else {
      // Watched folders report changes; the long TTL then only covers events lost in races
      // (a file created in a new folder before its watcher started).
      const ttl = this.fullyWatched ? this.opts.ttlMs * 30 : this.opts.ttlMs;
      if (this.dirty || Date.now() - this.snap.builtAt > ttl) void this.rebuild();
    }
    return this.snap;
  }

  private rebuild(): Promise<void> {
    if (this.building) return this.building;
    if (this.disposed) return Promise.resolve();
    clearTimeout(this.debounce);
    this.dirty = false;
    const ac = new AbortController();
    this.buildAbort = ac;
    this.building = listFiles(this.root, { useGit: this.opts.useGit, signal: ac.signal })
      .then((listing) => {
        if (!this.disposed) this.install(buildSnapshot(listing));
      })
      .catch((e: unknown) => {
        if (!this.disposed) log.warn(`index of ${this.root} failed: ${errorMessage(e)}`);
      })
      .finally(() => {
        this.building = undefined;
        this.buildAbort = undefined;
        // Changes that arrived during the build.
        if (this.dirty && !this.disposed) this.schedule();
      });
    return this.building;
  }

  private install(s: Snapshot): void {
    this.snap = s;
    if (this.opts.watch) this.syncWatchers(s);
  }

  private schedule(): void {
    this.dirty = true;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.rebuild(), this.opts.debounceMs);
    this.debounce.unref();
  }

  /** Watch the root and the indexed directories (shallowest first, up to the cap). */
  private syncWatchers(s: Snapshot): void {
    const wanted = ['', ...s.dirs].slice(0, this.opts.maxWatchedDirs);
    const keep = new Set(wanted);
    for (const [rel, w] of this.watchers) {
      if (!keep.has(rel)) {
        w.close();
        this.watchers.delete(rel);
      }
    }
    let complete = wanted.length === s.dirs.length + 1;
    for (const rel of wanted) {
      if (this.watchers.has(rel)) continue;
      try {
        const w = watch(join(this.root, rel), { persistent: false }, (event, name) => this.onChange(event, name));
        w.on('error', () => {
          w.close();
          this.watchers.delete(rel);
          this.fullyWatched = false;
          this.schedule();
        });
        this.watchers.set(rel, w);
      } catch {
        complete = false;
      }
    }
    this.fullyWatched = complete;
  }

  private onChange(event: string, name: string | Buffer | null): void {
    if (this.disposed) return;
    const n = name?.toString() ?? '';
    // Only the set of paths matters: creations, deletions and renames, and ignore-rule edits.
    if (event === 'rename' || n === '.gitignore' || n === '') this.schedule();
  }
}

/** A fixed-size min-heap of (key, index): keeps the `k` largest keys seen. */
class TopK {
  private readonly keys: Float64Array;
  private readonly idx: Int32Array;
  private n = 0;

  constructor(private readonly k: number) {
    this.keys = new Float64Array(k);
    this.idx = new Int32Array(k);
  }

  /** The smallest kept key, once full; -Infinity before. */
  get min(): number {
    return this.n < this.k ? Number.NEGATIVE_INFINITY : this.keys[0];
  }

  /** Keep (key, i) if it ranks among the k largest; true when the heap changed. */
  push(key: number, i: number): boolean {
    const { keys, idx } = this;
    if (this.n < this.k) {
      let c = this.n++;
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (keys[p] <= key) break;
        keys[c] = keys[p];
        idx[c] = idx[p];
        c = p;
      }
      keys[c] = key;
      idx[c] = i;
      return true;
    }
    if (key <= keys[0]) return false;
    // Replace the root and sift down.
    let c = 0;
    const n = this.n;
    for (;;) {
      const l = 2 * c + 1;
      if (l >= n) break;
      const r = l + 1;
      const m = r < n && keys[r] < keys[l] ? r : l;
      if (keys[m] >= key) break;
      keys[c] = keys[m];
      idx[c] = idx[m];
      c = m;
    }
    keys[c] = key;
    idx[c] = i;
    return true;
  }

  /** Entries, best first. */
  drain(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let i = 0; i < this.n; i++) out.push([this.keys[i], this.idx[i]]);
    return out.sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  }
}

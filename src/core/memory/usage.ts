/**
 * The usage ledger (ECA docs/config/memory.md "Usage tracking"): patchbay's own bookkeeping at
 * `<memory-root>/usage.json`, beside the memory folders (never in one, so never scanned as a
 * memory). Per memory file, keyed by absolute path: how often `read_file` opened it and when last,
 * and a hash of its body with the time that hash last changed — when the knowledge changed, not
 * when the file was written (a retag by `/memory-consolidate` must not make a stale memory look
 * fresh). Internal state, not part of the memory format; the model never edits it.
 *
 * Each update holds a lock file across patchbay processes, re-reads the file, applies the change
 * and replaces the file through a unique temporary file (rename is atomic on one file system).
 * An invalid file counts as empty (with a warning) and is replaced by the next update; a failed
 * update is logged. Neither ever touches a memory file.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { withFileLock } from '../../util/file-lock.js';
import { errorMessage, logger } from '../../util/log.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../../util/private-dir.js';

const log = logger('memory');

export const USAGE_FILE = 'usage.json';

const recordSchema = z.object({
  reads: z.number().int().min(0).optional(),
  lastReadAt: z.number().optional(),
  bodyHash: z.string().optional(),
  changedAt: z.number().optional(),
});
export type UsageRecord = z.infer<typeof recordSchema>;
export type Ledger = Record<string, UsageRecord>;

const ledgerSchema = z.object({ version: z.literal(1), files: z.record(z.string(), recordSchema) });

/** The ledger's file for a memory root. */
export function usageFile(memoryRoot: string): string {
  return join(memoryRoot, USAGE_FILE);
}

/** The lock file an update holds, and the prefix of its temporary files: both are the ledger's too. */
export const isLedgerPath = (abs: string, memoryRoot: string): boolean => {
  const file = usageFile(memoryRoot);
  return abs === file || abs.startsWith(`${file}.`);
};

/** A read of the ledger must not hang on a huge file: one this big is no ledger of a small store. */
const MAX_LEDGER_BYTES = 8 * 1024 * 1024;

const LOCK = { staleMs: 10_000, waitMs: 5_000 };

export class UsageLedger {
  /** The content last warned about, so an invalid file is said once, not on every turn. */
  private warned: string | undefined;

  constructor(readonly file: string) {}

  /** The ledger on disk now: a missing file is empty; so is an invalid one, with a warning. Never throws. */
  read(): Ledger {
    let raw: string;
    try {
      if (statSync(this.file).size > MAX_LEDGER_BYTES) return this.invalid('the file is too large', 'size');
      raw = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      return this.invalid(errorMessage(e), 'unreadable');
    }
    let data: unknown;
    try {
      data = JSON.parse(raw);
    } catch (e) {
      return this.invalid(`not JSON (${errorMessage(e)})`, raw);
    }
    const parsed = ledgerSchema.safeParse(data);
    if (!parsed.success) return this.invalid('not a usage ledger', raw);
    this.warned = undefined;
    return parsed.data.files;
  }

  private invalid(why: string, seen: string): Ledger {
    if (this.warned !== seen) log.warn(`the memory usage ledger ${this.file} is invalid (${why}); it counts as empty and is replaced at the next update`);
    this.warned = seen;
    return {};
  }

  /**
   * Applies `change` to the latest ledger on disk (records of files gone are dropped first), under
   * the lock, and replaces the file when the result differs. Returns the ledger after, or the one
   * read when the update failed (logged; never thrown).
   */
  async update(change: (ledger: Ledger) => Ledger): Promise<Ledger> {
    try {
      ensurePrivateDir(dirname(this.file));
      return await withFileLock(`${this.file}.lock`, LOCK, async () => {
        const before = this.read();
        const after = change(prune(before));
        if (JSON.stringify(after) !== JSON.stringify(before)) this.replace(after);
        return after;
      });
    } catch (e) {
      log.warn(`could not update the memory usage ledger ${this.file}: ${errorMessage(e)}`);
      return this.read();
    }
  }

  private replace(ledger: Ledger): void {
    const tmp = `${this.file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify({ version: 1, files: ledger })}\n`, { mode: PRIVATE_FILE_MODE });
      renameSync(tmp, this.file);
    } finally {
      rmSync(tmp, { force: true });
    }
  }
}

/** The ledger without records of files that no longer exist. */
function prune(ledger: Ledger): Ledger {
  return Object.fromEntries(Object.entries(ledger).filter(([path]) => existsSync(path)));
}

/** One more read of `path` now (a peer process with a clock ahead never moves `lastReadAt` back). */
export function withRead(ledger: Ledger, path: string, now: number): Ledger {
  const rec = ledger[path] ?? {};
  return { ...ledger, [path]: { ...rec, reads: (rec.reads ?? 0) + 1, lastReadAt: Math.max(rec.lastReadAt ?? 0, now) } };
}

/** What a scan saw of a memory's body. */
export interface BodySeen {
  path: string;
  bodyHash: string;
  mtimeMs: number;
}

/**
 * The body changes a scan observed against `ledger`: a new hash moves `changedAt` to now; a file
 * seen the first time is dated by its mtime (turning the ledger on changes no memory's age). A
 * body as recorded gives nothing, so a steady store writes nothing.
 */
export function bodyChanges(seen: readonly BodySeen[], ledger: Ledger, now: number): Ledger {
  const out: Ledger = {};
  for (const s of seen) {
    const rec = ledger[s.path];
    if (rec?.bodyHash === s.bodyHash) continue;
    out[s.path] = { bodyHash: s.bodyHash, changedAt: rec?.bodyHash === undefined ? (rec?.changedAt ?? s.mtimeMs) : now };
  }
  return out;
}

/** `ledger` with `changes` merged in: each change is applied only if the body recorded still differs (a peer may have recorded it first). */
export function mergeBodyChanges(ledger: Ledger, changes: Ledger): Ledger {
  const out = { ...ledger };
  for (const [path, c] of Object.entries(changes)) {
    const rec = out[path];
    if (rec?.bodyHash === c.bodyHash) continue;
    out[path] = { ...rec, ...c };
  }
  return out;
}

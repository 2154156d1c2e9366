/**
 * The order of the index within each memory folder (ECA docs/config/memory.md "Always-on index"):
 * by read history and the time the body last changed, older observations weighing less. A
 * memory's score is its reads, discounted by the age of the last one, plus the recency of its body
 * change, both halving every HALF_LIFE_DAYS. Without reads that is the most recently changed body
 * first. The formula is internal (ECA's is too) and may change; `memory/list` keeps file mtimes.
 */
import type { MemoryEntry } from './files.js';
import type { Ledger } from './usage.js';

const DAY_MS = 86_400_000;
export const HALF_LIFE_DAYS = 30;

/** A memory as the index and the consolidation snapshot see it: with its usage. */
export interface RankedEntry extends MemoryEntry {
  /** When the body last changed (the ledger's, else the file's mtime): "updated Nd ago". */
  changedAt: number;
  reads: number;
  lastReadAt?: number;
}

/** 1 for now, ½ for HALF_LIFE_DAYS ago, and so on; a time in the future counts as now. */
const weight = (at: number, now: number): number => 0.5 ** (Math.max(0, now - at) / (HALF_LIFE_DAYS * DAY_MS));

export function score(e: Pick<RankedEntry, 'changedAt' | 'reads' | 'lastReadAt'>, now: number): number {
  const reads = e.reads > 0 && e.lastReadAt !== undefined ? e.reads * weight(e.lastReadAt, now) : 0;
  return reads + weight(e.changedAt, now);
}

/** `entries` with their usage from `ledger`. */
export function withUsage(entries: readonly MemoryEntry[], ledger: Ledger): RankedEntry[] {
  return entries.map((e) => {
    const u = ledger[e.path];
    return { ...e, changedAt: u?.changedAt ?? e.mtimeMs, reads: u?.reads ?? 0, ...(u?.lastReadAt !== undefined ? { lastReadAt: u.lastReadAt } : {}) };
  });
}

/** Each folder's run of entries (they come folder by folder) sorted by score, best first; the folders keep their order. */
export function rankEntries(entries: readonly RankedEntry[], now: number): RankedEntry[] {
  const out: RankedEntry[] = [];
  let run: RankedEntry[] = [];
  const flush = () => {
    const scored = run.map((e) => ({ e, s: score(e, now) }));
    scored.sort((a, b) => b.s - a.s || b.e.changedAt - a.e.changedAt || a.e.path.localeCompare(b.e.path));
    out.push(...scored.map((x) => x.e));
    run = [];
  };
  for (const e of entries) {
    const head = run[0];
    if (head && (head.tier !== e.tier || head.label !== e.label)) flush();
    run.push(e);
  }
  flush();
  return out;
}

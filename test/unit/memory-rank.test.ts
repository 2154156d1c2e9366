/**
 * The index's ranking and the usage ledger's rules (core/memory/rank.ts, core/memory/usage.ts;
 * ECA docs/config/memory.md "Always-on index", "Usage tracking").
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyChanges, HALF_LIFE_DAYS, mergeBodyChanges, rankEntries, score, UsageLedger, withRead, withUsage, type MemoryEntry, type RankedEntry } from '../../src/core/memory/index.js';
import { removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
async function temp(): Promise<string> {
  const d = await tempDir('pb-ledger-');
  dirs.push(d);
  return d;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map(removeDir));
});

const DAY = 86_400_000;
const now = 1_000 * DAY;

const entry = (name: string, changedDaysAgo: number, usage: { reads?: number; lastReadDaysAgo?: number } = {}, label = 'global'): RankedEntry => ({
  path: `/m/${label}/${name}.md`,
  tier: label === 'global' ? 'global' : 'personal',
  label,
  name,
  description: name,
  type: 'note',
  tags: [],
  mtimeMs: now - changedDaysAgo * DAY,
  bodyHash: name,
  changedAt: now - changedDaysAgo * DAY,
  reads: usage.reads ?? 0,
  ...(usage.lastReadDaysAgo !== undefined ? { lastReadAt: now - usage.lastReadDaysAgo * DAY } : {}),
});
const names = (es: RankedEntry[]) => es.map((e) => e.name);

describe('ranking', () => {
  it('without reads: the most recently changed body first', () => {
    expect(names(rankEntries([entry('old', 40), entry('new', 1), entry('mid', 10)], now))).toEqual(['new', 'mid', 'old']);
  });

  it('reads lift a memory above newer unread ones', () => {
    expect(names(rankEntries([entry('new', 1), entry('read', 20, { reads: 1, lastReadDaysAgo: 0 })], now))).toEqual(['read', 'new']);
  });

  it('older reads weigh less: many reads long ago lose to a few recent ones', () => {
    const stale = entry('stale', 30, { reads: 10, lastReadDaysAgo: 10 * HALF_LIFE_DAYS });
    const fresh = entry('fresh', 30, { reads: 2, lastReadDaysAgo: 1 });
    expect(score(fresh, now)).toBeGreaterThan(score(stale, now));
    expect(names(rankEntries([stale, fresh], now))).toEqual(['fresh', 'stale']);
  });

  it('a weight halves every half-life', () => {
    expect(score(entry('x', 0), now)).toBeCloseTo(1);
    expect(score(entry('x', HALF_LIFE_DAYS), now)).toBeCloseTo(0.5);
    expect(score(entry('x', HALF_LIFE_DAYS, { reads: 4, lastReadDaysAgo: HALF_LIFE_DAYS }), now)).toBeCloseTo(2.5);
    // A time ahead of ours (another machine's clock) counts as now, never more.
    expect(score(entry('x', -5), now)).toBeCloseTo(1);
  });

  it('each folder is ranked on its own; the folders keep their order', () => {
    const ranked = rankEntries([entry('p-old', 9, {}, 'proj'), entry('p-new', 1, {}, 'proj'), entry('g-old', 9), entry('g-read', 50, { reads: 3, lastReadDaysAgo: 0 })], now);
    expect(names(ranked)).toEqual(['p-new', 'p-old', 'g-read', 'g-old']);
  });

  it('withUsage: the ledger dates and counts a memory; without a record its mtime and no reads', () => {
    const e: MemoryEntry = { path: '/m/a.md', tier: 'global', label: 'global', name: 'a', description: 'a', type: 'note', tags: [], mtimeMs: 5, bodyHash: 'h' };
    expect(withUsage([e], {})[0]).toMatchObject({ changedAt: 5, reads: 0 });
    expect(withUsage([e], { '/m/a.md': { reads: 2, lastReadAt: 9, changedAt: 3, bodyHash: 'h' } })[0]).toMatchObject({ changedAt: 3, reads: 2, lastReadAt: 9 });
  });
});

describe('the ledger rules', () => {
  it('a first sight is dated by mtime, a new body by now, an unchanged one not at all', () => {
    const seen = [
      { path: '/a', bodyHash: 'h1', mtimeMs: 100 },
      { path: '/b', bodyHash: 'new', mtimeMs: 100 },
      { path: '/c', bodyHash: 'same', mtimeMs: 100 },
    ];
    const ledger = { '/b': { bodyHash: 'old', changedAt: 50, reads: 3 }, '/c': { bodyHash: 'same', changedAt: 40 } };
    const changes = bodyChanges(seen, ledger, 999);
    expect(changes).toEqual({ '/a': { bodyHash: 'h1', changedAt: 100 }, '/b': { bodyHash: 'new', changedAt: 999 } });
    // Merged, the reads stay.
    expect(mergeBodyChanges(ledger, changes)['/b']).toEqual({ bodyHash: 'new', changedAt: 999, reads: 3 });
    // A peer that recorded the same body first keeps its date.
    expect(mergeBodyChanges({ '/b': { bodyHash: 'new', changedAt: 500 } }, changes)['/b']).toEqual({ bodyHash: 'new', changedAt: 500 });
  });

  it('a read adds one and never moves lastReadAt back', () => {
    expect(withRead({}, '/a', 10)).toEqual({ '/a': { reads: 1, lastReadAt: 10 } });
    expect(withRead({ '/a': { reads: 2, lastReadAt: 50, bodyHash: 'h' } }, '/a', 10)).toEqual({ '/a': { reads: 3, lastReadAt: 50, bodyHash: 'h' } });
  });

  it('the file: invalid is empty, an update replaces it, records of files gone are dropped', async () => {
    const dir = await temp();
    const kept = join(dir, 'kept.md');
    writeFileSync(kept, 'x');
    const file = join(dir, 'usage.json');
    const ledger = new UsageLedger(file);
    expect(ledger.read()).toEqual({});
    writeFileSync(file, '[1, 2]');
    expect(ledger.read()).toEqual({});
    await ledger.update((l) => withRead(withRead(l, kept, 1), join(dir, 'gone.md'), 1));
    expect(ledger.read()).toEqual({ [kept]: { reads: 1, lastReadAt: 1 }, [join(dir, 'gone.md')]: { reads: 1, lastReadAt: 1 } });
    await ledger.update((l) => withRead(l, kept, 2));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, files: { [kept]: { reads: 2, lastReadAt: 2 } } });
  });

  it('concurrent updates in one process lose nothing', async () => {
    const dir = await temp();
    const kept = join(dir, 'kept.md');
    writeFileSync(kept, 'x');
    const a = new UsageLedger(join(dir, 'usage.json'));
    const b = new UsageLedger(join(dir, 'usage.json'));
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).update((l) => withRead(l, kept, i))));
    expect(a.read()[kept]?.reads).toBe(10);
  });
});

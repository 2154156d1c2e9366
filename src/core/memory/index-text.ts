/**
 * The memory index appended to each user turn (ECA docs/config/memory.md "Always-on index"):
 * `## Memory`, then one heading per memory folder with a `Tags in use:` line and one line per
 * memory, best ranked first (./rank.ts). Bounded by `maxEntries` and by an estimate of `maxTokens` for the whole
 * block: entries are dropped from the end, with a line telling the model more exist and how to
 * find them; when not even that fits, there is no index (the folders stay in the system prompt).
 */
import type { MemoryEntry as Scanned } from './files.js';

/** A memory, with when its body last changed when the usage ledger knows (./usage.ts), else its mtime counts. */
type MemoryEntry = Scanned & { changedAt?: number };

export interface MemoryIndexItem {
  name: string;
  type: string;
  /** The folder's label: the project folder's name, or `global`. */
  source: string;
  path: string;
}

export interface MemoryIndex {
  /** The block the model reads; '' when nothing fits (then `count` is 0). */
  text: string;
  count: number;
  totalCount: number;
  items: MemoryIndexItem[];
}

/** A description longer than this is cut in the index: one bloated entry must not eat the budget. */
const MAX_DESCRIPTION = 120;
const MAX_TAGS_LINE = 100;
const DAY_MS = 86_400_000;

/** The estimate the rest of patchbay uses (core/turn/context-size.ts): four characters a token. */
const tokens = (s: string): number => Math.ceil(s.length / 4);

function cut(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function entryLine(e: MemoryEntry, now: number): string {
  const days = Math.max(0, Math.floor((now - (e.changedAt ?? e.mtimeMs)) / DAY_MS));
  return `- ${cut(e.name, MAX_DESCRIPTION)} [${e.type}] (updated ${days}d ago) — ${cut(e.description, MAX_DESCRIPTION)}`;
}

/** `Tags in use: ci(3), docker`: most-used first, so a writer reuses a tag instead of inventing a variant. */
function tagsLine(group: MemoryEntry[]): string | undefined {
  const counts = new Map<string, number>();
  for (const e of group) for (const t of e.tags) counts.set(t, (counts.get(t) ?? 0) + 1);
  if (!counts.size) return undefined;
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return cut(`Tags in use: ${sorted.map(([t, n]) => (n > 1 ? `${t}(${n})` : t)).join(', ')}`, MAX_TAGS_LINE);
}

function render(shown: MemoryEntry[], total: number, now: number): string {
  const lines = ['## Memory'];
  let label: string | undefined;
  let group: MemoryEntry[] = [];
  const flush = () => {
    if (!group.length) return;
    lines.push(`## ${group[0]!.label}`);
    const tags = tagsLine(group);
    if (tags) lines.push(tags);
    for (const e of group) lines.push(entryLine(e, now));
    group = [];
  };
  for (const e of shown) {
    if (e.label !== label || (group[0] && group[0].tier !== e.tier)) flush();
    label = e.label;
    group.push(e);
  }
  flush();
  if (total > shown.length) {
    lines.push(
      `Showing ${shown.length} of ${total} memories; more exist. If a task needs knowledge you expect to be stored but do not see listed, search the memory folders for its keyword (grep) rather than opening files one by one.`,
    );
  }
  return lines.join('\n');
}

/** The index of `entries` (already in folder order, ranked in each: ./rank.ts), within the limits. */
export function memoryIndex(entries: readonly MemoryEntry[], limits: { maxEntries: number; maxTokens: number }, now = Date.now()): MemoryIndex {
  const total = entries.length;
  const none: MemoryIndex = { text: '', count: 0, totalCount: total, items: [] };
  if (!total || limits.maxTokens <= 0) return none;
  let shown = entries.slice(0, Math.max(0, limits.maxEntries));
  let text = render(shown, total, now);
  while (shown.length && tokens(text) > limits.maxTokens) {
    shown = shown.slice(0, -1);
    text = render(shown, total, now);
  }
  // Not even the notice fits: no index (the folders stay in the system prompt). A notice alone
  // (no entry fits) still tells the model there is memory to search, as ECA's does.
  if (tokens(text) > limits.maxTokens) return none;
  return { text, count: shown.length, totalCount: total, items: shown.map((e) => ({ name: e.name, type: e.type, source: e.label, path: e.path })) };
}

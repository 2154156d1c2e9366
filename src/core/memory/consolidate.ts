/**
 * `/memory-consolidate` (ECA docs/config/memory.md "Consolidating memory"): a prompt asking the
 * model to tidy the chat's memory folders with its normal file tools, with the folder list and a
 * snapshot of every memory (and every file the index skips) attached, since a command's turn does
 * not get the index.
 */
import type { MemoryDir } from './dirs.js';
import type { SkippedMemory } from './files.js';
import type { RankedEntry } from './rank.js';
import { relative } from 'node:path';

export const CONSOLIDATE_PROMPT = [
  'Tidy up my memory files in the folders listed below, following the memory write guidance. This asks for cleanup; it does not let you turn things I said in this chat into lasting preferences.',
  '',
  '1. Merge memories about the same topic; keep different topics apart.',
  '2. Check a fact before removing it as stale. Age or a low read count alone is no reason to delete; keep what is useful from a memory you merge away, above all from one read often.',
  '3. Cut filler, copied code, logs and chat history. Keep facts, conditions, evidence and fixes with their file or symbol references, and my exact words, errors, paths and commands.',
  '4. Keep a preference only with evidence I asked for it to last, in my words and scope. List preferences whose permission is unclear for me to review; do not delete them silently.',
  '5. Fix the front-matter and descriptions as the guidance says, keeping unknown fields and types. Use one spelling per tag (the most used one) and drop tags that group nothing. Leave files that need no change alone.',
  '6. Remove secrets, and tell me each one you removed.',
  '7. Suggest moving team rules or procedures to AGENTS.md or the project rules; do not move them yourself.',
  '',
  'Make small, clear edits and new files directly. For deletions, merges and large or uncertain rewrites, show me the plan and wait for my answer first, unless my added instructions say otherwise.',
  'End with a list of every file you created, changed or deleted, and why.',
].join('\n');

const DAY_MS = 86_400_000;
const days = (at: number, now: number): number => Math.max(0, Math.floor((now - at) / DAY_MS));

/**
 * The folders and every memory in them, for the consolidating turn, with its usage: the age of its
 * body (when the knowledge last changed), how often it was read and how long ago last.
 */
export function consolidateSnapshot(dirs: readonly MemoryDir[], entries: readonly RankedEntry[], skipped: readonly SkippedMemory[], now = Date.now()): string {
  const lines = ['Memory folders:', ...dirs.map((d) => `- ${d.dir} (${d.label})`), '', 'Memories:'];
  let any = false;
  for (const d of dirs) {
    const group = entries.filter((e) => e.tier === d.tier && e.label === d.label && e.path.startsWith(d.dir));
    if (!group.length) continue;
    any = true;
    lines.push(`**${d.dir} (${d.label})**`);
    for (const e of group) {
      const usage = e.reads ? `read ${e.reads}×, last ${days(e.lastReadAt ?? now, now)}d ago` : 'never read';
      lines.push(`- ${e.name} [${e.type}] (${relative(d.dir, e.path)}) — age ${days(e.changedAt, now)}d; ${usage}${e.tags.length ? `; tags: ${e.tags.join(', ')}` : ''}`);
    }
  }
  if (!any) lines.push('(no memory files)');
  if (skipped.length) {
    lines.push('', 'Files the index skips (fix them so they can be read, or delete them):', ...skipped.map((s) => `- ${s.path} — ${s.reason}`));
  }
  return lines.join('\n');
}

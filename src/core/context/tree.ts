/**
 * A compact indented tree of file paths, for the repo map and directory contexts. When capped,
 * shallow entries win (breadth first), so the model sees the whole shape of the workspace
 * rather than the first corner of it; a folder with hidden children says how many.
 */

export interface TreeSource {
  /** The top line, e.g. the absolute root path. */
  label: string;
  /** Relative, `/`-separated file paths. */
  files: string[];
}

export interface RenderedTree {
  text: string;
  /** Entries (files and directories, without the labels) in total and shown. */
  total: number;
  shown: number;
}

interface Entry {
  src: number;
  rel: string;
  depth: number;
  dir: boolean;
}

function parentOf(rel: string): string {
  const i = rel.lastIndexOf('/');
  return i < 0 ? '' : rel.slice(0, i);
}

export function renderTree(sources: TreeSource[], maxEntries: number): RenderedTree {
  const entries: Entry[] = [];
  const childCount = new Map<string, number>();
  sources.forEach((s, src) => {
    const dirs = new Set<string>();
    const add = (rel: string, dir: boolean): void => {
      let depth = 0;
      for (let j = rel.indexOf('/'); j !== -1; j = rel.indexOf('/', j + 1)) depth++;
      entries.push({ src, rel, depth, dir });
      const pk = `${src}\0${parentOf(rel)}`;
      childCount.set(pk, (childCount.get(pk) ?? 0) + 1);
    };
    for (const f of s.files) {
      for (let i = f.lastIndexOf('/'); i > 0; i = f.lastIndexOf('/', i - 1)) {
        const d = f.slice(0, i);
        if (dirs.has(d)) break;
        dirs.add(d);
      }
    }
    for (const d of dirs) add(d, true);
    for (const f of new Set(s.files)) if (!dirs.has(f)) add(f, false);
  });

  const included = pickShallowest(entries, Math.max(0, maxEntries));
  const children = new Map<string, Entry[]>();
  for (const e of included) {
    const pk = `${e.src}\0${parentOf(e.rel)}`;
    const list = children.get(pk);
    if (list) list.push(e);
    else children.set(pk, [e]);
  }
  const lines: string[] = [];
  const more = (key: string): string => {
    const hidden = (childCount.get(key) ?? 0) - (children.get(key)?.length ?? 0);
    return hidden > 0 ? ` (${hidden} more)` : '';
  };
  const emit = (src: number, parent: string, indent: string): void => {
    const list = children.get(`${src}\0${parent}`);
    if (!list) return;
    list.sort((a, b) => Number(b.dir) - Number(a.dir) || (a.rel < b.rel ? -1 : 1));
    for (const e of list) {
      const name = e.rel.slice(e.rel.lastIndexOf('/') + 1);
      if (e.dir) {
        lines.push(`${indent}${name}/${more(`${src}\0${e.rel}`)}`);
        emit(src, e.rel, `${indent}  `);
      } else lines.push(`${indent}${name}`);
    }
  };
  sources.forEach((s, src) => {
    lines.push(`${s.label}${more(`${src}\0`)}`);
    emit(src, '', '  ');
  });
  return { text: lines.join('\n'), total: entries.length, shown: included.length };
}

/** The `max` shallowest entries; ties at the cut-off depth go to folders, then by path. */
function pickShallowest(entries: Entry[], max: number): Entry[] {
  if (entries.length <= max) return entries;
  const perDepth: number[] = [];
  for (const e of entries) perDepth[e.depth] = (perDepth[e.depth] ?? 0) + 1;
  let cut = 0;
  let below = 0;
  while (below + (perDepth[cut] ?? 0) <= max) below += perDepth[cut++] ?? 0;
  const out = entries.filter((e) => e.depth < cut);
  const atCut = entries.filter((e) => e.depth === cut).sort((a, b) => Number(b.dir) - Number(a.dir) || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : a.src - b.src));
  return out.concat(atCut.slice(0, max - below));
}

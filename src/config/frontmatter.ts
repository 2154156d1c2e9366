/**
 * YAML front-matter of Markdown files (rules, skills, custom commands, agents): a `---` line, YAML,
 * a `---` line, then the body. A file without front-matter is all body.
 */
import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../util/log.js';

export interface FrontMatter {
  /** The YAML mapping; `{}` when there is none (or it is broken: see `error`). */
  data: Record<string, unknown>;
  /** The text after the front-matter, its leading blank lines dropped. */
  body: string;
  /** True when the file starts with a front-matter block (even a broken one). */
  present: boolean;
  /** Why the front-matter could not be read, e.g. `YAML: …` or `not a mapping`. */
  error?: string;
}

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*$/m;

export function parseFrontMatter(text: string): FrontMatter {
  const open = OPEN.exec(text);
  if (!open) return { data: {}, body: text.replace(/^\uFEFF/, ''), present: false };
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return { data: {}, body: text, present: true, error: 'the front-matter has no closing "---" line' };
  const yamlText = rest.slice(0, close.index);
  const body = rest
    .slice(close.index + close[0].length)
    .replace(/^[ \t]*\r?\n/, '')
    .replace(/^(\s*\r?\n)+/, '');
  let data: unknown;
  try {
    data = yamlText.trim() ? parseYaml(yamlText, { maxAliasCount: 50 }) : {};
  } catch (e) {
    return { data: {}, body, present: true, error: `YAML: ${errorMessage(e).split('\n')[0]}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== 'object' || Array.isArray(data)) return { data: {}, body, present: true, error: 'the front-matter is not a YAML mapping' };
  return { data: data as Record<string, unknown>, body, present: true };
}

/** A front-matter value as a list of strings: `"a"` → `['a']`, `[a, b]` → `['a', 'b']`, else `[]`. */
export function stringList(v: unknown): string[] {
  if (typeof v === 'string') return v.trim() ? [v.trim()] : [];
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());
  return [];
}

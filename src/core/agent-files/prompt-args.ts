/**
 * Argument placeholders in custom commands and skills, as ECA reads them (shared.clj
 * `extract-args-from-content`, `named-arg-names`; commands.clj `substitute-args`):
 *
 * - positional: `$ARGS` / `$ARGUMENTS` (all arguments joined by spaces), `$1`, `$ARG1`, …; the
 *   command declares `arg1`…`argN` (N the highest number used, or 1 for `$ARGS` alone);
 * - named: `{{name}}` (ECA renders with Selmer; a filter such as `{{city|upper}}` still names
 *   `city`), declared in order of first appearance, each required unless front-matter says not.
 *
 * Mixing both kinds in one body is refused (ECA throws, and the file is ignored).
 */
import type { CommandArgument } from '../../shapes/command.js';

export type Placeholders = { ok: true; named: boolean; arguments: CommandArgument[] } | { ok: false; error: string };

const NAMED = /\{\{\s*([a-zA-Z_][a-zA-Z0-9_-]*)/g;
const NUMBERED = /\$(?:ARG)?(\d+)/g;

/** The `{{name}}` placeholders, distinct, in order of first appearance. */
export function namedPlaceholders(body: string): string[] {
  return [...new Set([...body.matchAll(NAMED)].map((m) => m[1]))];
}

export function placeholders(body: string): Placeholders {
  const named = namedPlaceholders(body);
  const numbers = [...body.matchAll(NUMBERED)].map((m) => Number(m[1]));
  const varargs = body.includes('$ARGS') || body.includes('$ARGUMENTS');
  const count = numbers.length ? Math.max(...numbers) : varargs ? 1 : 0;
  if (named.length && count) return { ok: false, error: 'it mixes positional ($1/$ARGS) and named ({{name}}) arguments' };
  if (named.length) return { ok: true, named: true, arguments: named.map((name) => ({ name, required: true })) };
  return { ok: true, named: false, arguments: Array.from({ length: count }, (_, i) => ({ name: `arg${i + 1}`, required: true })) };
}

/**
 * Front-matter `arguments` ({name, description, required}) enrich the placeholders found: by name
 * for named ones, by position for positional ones (which lets front-matter rename `arg1`), as ECA's
 * `merge-command-args`. Entries that are not mappings are ignored.
 */
export function mergeArguments(found: CommandArgument[], declared: unknown, named: boolean): CommandArgument[] {
  const list = Array.isArray(declared) ? declared.map(normalizeDeclared) : [];
  return found.map((arg, i) => {
    const match = named ? list.find((d) => d?.name === arg.name) : list[i];
    return match ? { ...arg, ...match } : arg;
  });
}

function normalizeDeclared(v: unknown): Partial<CommandArgument> | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const out: Partial<CommandArgument> = {};
  if (o.name !== undefined && o.name !== null) out.name = String(o.name);
  if (o.description !== undefined && o.description !== null) out.description = String(o.description);
  if (o.required !== undefined && o.required !== null) out.required = Boolean(o.required);
  return out;
}

/**
 * The body with the call's arguments filled in. Named: arguments map to the placeholders in
 * order of first appearance; one not given renders empty (Selmer's nil). Positional: `$ARGS` and
 * `$ARGUMENTS` become all arguments joined, `$ARGn` and `$n` the n-th (`$10` is the tenth, not
 * `$1` then `0`); numbers without an argument stay as written.
 */
export function renderPlaceholders(body: string, args: string[], named: boolean): string {
  if (named) {
    const names = namedPlaceholders(body);
    const values = new Map(names.map((n, i) => [n, args[i] ?? '']));
    // `{{name}}` or `{{ name | filter }}`: the whole tag becomes the value (filters are not applied).
    return body.replace(/\{\{\s*([a-zA-Z_][a-zA-Z0-9_-]*)[^}]*\}\}/g, (tag, n: string) => (values.has(n) ? values.get(n)! : tag));
  }
  const joined = args.join(' ');
  // One pass: an argument's own text (say `$1`) is never substituted again.
  return body.replace(/\$ARGUMENTS|\$ARGS|\$(?:ARG)?(\d+)/g, (whole, n: string | undefined) => {
    if (n === undefined) return joined;
    const i = Number(n) - 1;
    return i >= 0 && i < args.length ? args[i] : whole;
  });
}

/** The required arguments a call leaves out, by name. */
export function missingArguments(declared: CommandArgument[], args: string[]): string[] {
  return declared.flatMap((a, i) => (a.required && (args[i] === undefined || args[i] === '') ? [a.name] : []));
}

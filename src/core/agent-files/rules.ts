/**
 * Rules (ECA docs/config/rules.md, src/eca/features/rules.clj): Markdown files with optional
 * front-matter `agent`, `model`, `paths`, `enforce`. A rule without `paths` is static (its body goes
 * in the system prompt); one with `paths` is path-scoped (a catalog entry in the prompt, its body
 * fetched with `fetch_rule`, or included when a matching file is in play in the chat).
 *
 * Pure: parsing, filtering and matching. Reading the files is runtime/instructions.ts.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import picomatch from 'picomatch';
import { parseFrontMatter, stringList } from '../../config/frontmatter.js';
import { isWithin } from '../../util/paths.js';
import { compileTemplate, type Template, type TemplateVars } from './rule-template.js';
import { sentMessages } from '../chat/messages.js';
import type { StoredMessage } from '../chat/stored-message.js';

export type RuleScope = 'project' | 'global';
export type EnforceOn = 'read' | 'modify';

export interface Rule {
  /** The file's absolute path: ECA's rule id (what `fetch_rule` takes). */
  id: string;
  /** The file name, as ECA shows it. */
  name: string;
  scope: RuleScope;
  /** For project rules: the workspace folder the rule belongs to (its `paths` are relative to it). */
  root?: string;
  /** The text as written (after the front-matter); what the model reads is `render`ed (rule-template.ts). */
  body: string;
  render: Template;
  agents?: string[];
  /** The `model` patterns as written, and compiled (partial match, as ECA's `re-find`). */
  models?: string[];
  modelRes?: RegExp[];
  paths?: string[];
  /** One matcher per `paths` entry, on workspace-relative paths with `/` separators. */
  matchers?: Array<(rel: string) => boolean>;
  /** Defaults to `modify` (ECA path_rules.clj `enforce-on-modify?`). */
  enforce: EnforceOn[];
}

export type ParsedRule = { ok: true; rule: Rule } | { ok: false; error: string };

/** A rule file's text as a Rule, or why it is skipped (broken front-matter, bad regex or glob). */
export function parseRule(path: string, text: string, where: { scope: RuleScope; root?: string }): ParsedRule {
  const fm = parseFrontMatter(text);
  if (fm.error) return { ok: false, error: fm.error };
  const d = fm.data;
  const agents = stringList(d.agent);
  const models = stringList(d.model);
  const paths = stringList(d.paths);
  const enforce = stringList(d.enforce);
  for (const key of ['agent', 'model', 'paths', 'enforce'] as const) {
    const v = d[key];
    if (v !== undefined && v !== null && typeof v !== 'string' && !Array.isArray(v)) return { ok: false, error: `"${key}" must be a string or a list of strings` };
  }
  const modelRes: RegExp[] = [];
  for (const m of models) {
    const re = compileModelPattern(m);
    if (typeof re === 'string') return { ok: false, error: `bad "model" regex ${JSON.stringify(m)}: ${re}` };
    modelRes.push(re);
  }
  const matchers: Array<(rel: string) => boolean> = [];
  for (const g of paths) {
    const m = compileGlob(g);
    if (typeof m === 'string') return { ok: false, error: `bad "paths" glob ${JSON.stringify(g)}: ${m}` };
    matchers.push(m);
  }
  const bad = enforce.filter((e) => e !== 'read' && e !== 'modify');
  if (bad.length) return { ok: false, error: `"enforce" must be read and/or modify, not ${bad.map((b) => JSON.stringify(b)).join(', ')}` };
  const body = fm.body.trim();
  const render = compileTemplate(body);
  if (typeof render === 'string') return { ok: false, error: `bad template: ${render}` };
  const rule: Rule = {
    id: path,
    name: path.split(/[\\/]/).pop() ?? path,
    scope: where.scope,
    ...(where.root ? { root: where.root } : {}),
    body,
    render,
    enforce: enforce.length ? (enforce as EnforceOn[]) : ['modify'],
  };
  if (agents.length) rule.agents = agents;
  if (models.length) Object.assign(rule, { models, modelRes });
  if (paths.length) Object.assign(rule, { paths, matchers });
  return { ok: true, rule };
}

/** A Java-style partial-match regex; a leading `(?i)` becomes the `i` flag. A string is the error. */
export function compileModelPattern(pattern: string): RegExp | string {
  const inline = /^\(\?([imsu]+)\)/.exec(pattern);
  const flags = inline ? [...new Set(inline[1])].join('') : '';
  try {
    return new RegExp(inline ? pattern.slice(inline[0].length) : pattern, flags);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * A `paths` glob as a matcher of workspace-relative paths (picomatch, dotfiles included). ECA
 * matches with Java NIO's PathMatcher, where `**` crosses folders even inside a name: `src/**.ts`
 * is any `.ts` file under `src/` at any depth. picomatch reads `**` that way only as a whole
 * segment, so `**` followed by more of a name becomes `**` + `/*` (`src/**.ts` → `src/**` + `/*.ts`).
 * One difference stays: here `src/**` + `/*.ts` also matches `src/a.ts` (zero folders), which
 * Java's does not. A glob that is empty, absolute, climbs out with `..`, or has an unclosed
 * bracket, brace or parenthesis is refused (the string returned says why).
 */
export function compileGlob(glob: string): ((rel: string) => boolean) | string {
  const g = glob.trim().replace(/\\/g, '/');
  if (!g) return 'empty';
  if (g.startsWith('/') || /^[A-Za-z]:\//.test(g)) return 'must be relative to the workspace folder';
  if (g.split('/').includes('..')) return 'must not contain ".."';
  const translated = g.replace(/(^|\/)\*\*(?=[^/])/g, '$1**/*');
  try {
    const m = picomatch(translated, { dot: true, strictBrackets: true });
    return (rel) => m(rel);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/**
 * The rule as one chat reads it: its body rendered with the chat's template variables
 * (`isSubagent`, `workspaceRoots`, ECA prompt.clj `->base-selmer-ctx`), trimmed; a body that
 * renders empty is skipped by whoever shows it, as ECA does.
 */
export function renderRule(rule: Rule, vars: TemplateVars): Rule {
  const body = rule.render(vars).trim();
  return body === rule.body ? rule : { ...rule, body };
}

/** ECA `agent-matches?` and `model-matches?`: no filter matches all; a model filter needs a model. */
export function ruleApplies(rule: Rule, agent: string | undefined, model: string | undefined): boolean {
  if (rule.agents && agent !== undefined && !rule.agents.includes(agent)) return false;
  if (rule.modelRes) return model !== undefined && rule.modelRes.some((re) => re.test(model));
  return true;
}

export type MatchReason = 'path-not-absolute' | 'outside-rule-workspace' | 'outside-workspaces' | 'pattern-mismatch';

export interface RuleMatch {
  match: boolean;
  reason?: MatchReason;
  path: string;
  root?: string;
  relative?: string;
  pattern?: string;
}

/**
 * ECA `match-path-scoped-rule`: a project rule matches against its own workspace folder, a global
 * one against the innermost workspace folder holding the path. The path must be absolute.
 */
export function matchRule(rule: Rule, roots: string[], target: string): RuleMatch {
  const raw = target.trim();
  if (!raw || !isAbsolute(raw)) return { match: false, reason: 'path-not-absolute', path: raw };
  const path = resolve(raw);
  const root =
    rule.scope === 'project'
      ? rule.root && isWithin(rule.root, path)
        ? rule.root
        : undefined
      : roots
          .map((r) => resolve(r))
          .filter((r) => isWithin(r, path))
          .sort((a, b) => b.length - a.length)[0];
  if (!root) return { match: false, reason: rule.scope === 'project' ? 'outside-rule-workspace' : 'outside-workspaces', path };
  const rel = relative(root, path).split(sep).join('/');
  const i = (rule.matchers ?? []).findIndex((m) => m(rel));
  if (i < 0) return { match: false, reason: 'pattern-mismatch', path, root, relative: rel };
  return { match: true, path, root, relative: rel, pattern: rule.paths![i] };
}

/** The built-in file tools and the arguments naming the files they read or change. */
const FILE_TOOL_ARGS: Record<string, string[]> = {
  read_file: ['path'],
  write_file: ['path'],
  edit_file: ['path'],
  move_file: ['source', 'destination'],
};

/** Which files a native tool call reads or changes (absolute; relative ones from the first root). */
export function fileToolPaths(name: string, args: Record<string, unknown>, roots: string[]): string[] {
  return (FILE_TOOL_ARGS[name] ?? []).flatMap((k) => {
    const v = args[k];
    return typeof v === 'string' && v.trim() ? [isAbsolute(v) ? resolve(v) : resolve(roots[0] ?? '/', v)] : [];
  });
}

/** Whether a native tool call modifies (or else reads) its files; undefined for other tools. */
export function fileToolAction(name: string): EnforceOn | undefined {
  if (name === 'read_file') return 'read';
  if (name in FILE_TOOL_ARGS) return 'modify';
  return undefined;
}

/**
 * The `path` attribute of rendered file and cursor contexts (core/context/render.ts `tag`; the
 * cursor's file is the one open in the editor). test/unit/rules.test.ts renders real ones.
 */
const FILE_CONTEXT = /<(?:file|cursor)(?: [a-z-]+="[^"]*")*? path="([^"]*)"/g;

function unescapeAttr(v: string): string {
  return v
    .replace(/&lt;/g, '<')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

/**
 * The files a user message's rendered contexts name, worked out once per message (held weakly: it
 * goes with the message): the context text holds whole files, and every request of a chat with
 * path-scoped rules asks again.
 */
const filesOfMessage = new WeakMap<object, { text: string; files: string[] }>();

function contextFiles(m: { contextText?: string }): string[] {
  const text = m.contextText ?? '';
  const hit = filesOfMessage.get(m);
  // The message's contexts are attached (and a hook may add more) after it is stored: keyed by both.
  if (hit && hit.text === text) return hit.files;
  const files = [...text.matchAll(FILE_CONTEXT)].map((x) => resolve(unescapeAttr(x[1])));
  filesOfMessage.set(m, { text, files });
  return files;
}

export interface ChatRuleState {
  /** Files in play: @-mentioned file contexts and the files of native file tool calls made. */
  files: string[];
  /** Ids of the rules `fetch_rule` returned in this chat. */
  fetched: Set<string>;
}

/**
 * What a chat's messages say about rules: the files in play and the rules already fetched. A rule
 * counts as fetched only while its result is among what the model reads: once the chat is
 * compacted, the summary stands in for it and the rule must be fetched again (ECA shared.clj
 * `compact-side-effect!` drops the chat's validated rules). Files stay in play: their rules go
 * in the system prompt, which compaction does not touch.
 */
export function chatRuleState(stored: readonly StoredMessage[], roots: string[]): ChatRuleState {
  const files = new Set<string>();
  const fetched = new Set<string>();
  const read = new Set<StoredMessage>(sentMessages(stored as StoredMessage[]));
  for (const m of stored) {
    if (m.role === 'user' && m.contextText) {
      for (const f of contextFiles(m)) files.add(f);
    } else if (m.role === 'tool' && m.server === 'patchbay') {
      if (m.name === 'fetch_rule') {
        if (m.outcome === 'called' && !m.error && typeof m.args.id === 'string' && read.has(m)) fetched.add(m.args.id);
      } else {
        for (const p of fileToolPaths(m.name, m.args, roots)) files.add(p);
      }
    }
  }
  return { files: [...files], fetched };
}

/** The path-scoped rules that match some file in play, with the first file each matches. */
export function rulesInPlay(rules: Rule[], roots: string[], files: string[]): Array<{ rule: Rule; match: RuleMatch }> {
  const out: Array<{ rule: Rule; match: RuleMatch }> = [];
  for (const rule of rules) {
    if (!rule.paths) continue;
    for (const f of files) {
      const match = matchRule(rule, roots, f);
      if (match.match) {
        out.push({ rule, match });
        break;
      }
    }
  }
  return out;
}

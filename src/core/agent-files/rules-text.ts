/**
 * What rules look like to the model and to the user, in ECA's words and tags (prompt.clj
 * `build-static-instructions`, tools/fetch_rule.clj, tools/path_rules.clj, commands.clj `rules-msg`).
 */
import type { Rule, RuleMatch } from './rules.js';

function attr(v: string): string {
  return `"${v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')}"`;
}

function attrs(o: Record<string, string | undefined>): string {
  return Object.entries(o)
    .filter(([, v]) => v !== undefined && v !== '')
    .map(([k, v]) => ` ${k}=${attr(v!)}`)
    .join('');
}

function catalogEntry(r: Rule): string {
  return `<rule${attrs({ id: r.id, name: r.name, scope: r.scope, 'workspace-root': r.root, paths: (r.paths ?? []).join(','), enforce: r.enforce.join(',') })}/>`;
}

/** The stable `## Rules` block: static rules in full, then the catalog of path-scoped ones. */
export function rulesPromptText(statics: Rule[], pathScoped: Rule[]): string {
  const rendered = statics.filter((r) => r.body);
  if (!rendered.length && !pathScoped.length) return '';
  const group = (tag: string, description: string, rules: Rule[]): string[] =>
    rules.length ? [`<${tag}${attrs({ description })}>`, ...rules.map((r) => `<rule${attrs({ name: r.name })}>${r.body}</rule>`), `</${tag}>`] : [];
  const lines = ['## Rules', '', `<rules${attrs({ description: 'Rules defined by user. Follow them as closely as possible.' })}>`];
  lines.push(
    ...group(
      'global-rules',
      'Global user rules; project rules are more specific.',
      rendered.filter((r) => r.scope === 'global'),
    ),
  );
  lines.push(
    ...group(
      'project-rules',
      'Workspace rules; prefer over global rules when they conflict.',
      rendered.filter((r) => r.scope === 'project'),
    ),
  );
  if (pathScoped.length) {
    lines.push(
      `<path-scoped-rules${attrs({ description: 'Rules that apply to matching file paths. Use patchbay__fetch_rule before actions required by enforce (read, modify, or both). Each rule only needs to be fetched once per chat.' })}>`,
    );
    const globals = pathScoped.filter((r) => r.scope === 'global');
    if (globals.length)
      lines.push(`<global-path-scoped-rules${attrs({ description: 'Path-scoped rules loaded outside the current workspace.' })}>`, ...globals.map(catalogEntry), '</global-path-scoped-rules>');
    const roots = [...new Set(pathScoped.filter((r) => r.scope === 'project').map((r) => r.root ?? ''))].sort();
    for (const root of roots) {
      lines.push(`<workspace-path-scoped-rules${attrs({ root })}>`, ...pathScoped.filter((r) => r.scope === 'project' && (r.root ?? '') === root).map(catalogEntry), '</workspace-path-scoped-rules>');
    }
    lines.push('</path-scoped-rules>');
  }
  lines.push('</rules>');
  return lines.join('\n');
}

/** The dynamic block: bodies of path-scoped rules whose files are in play (not yet fetched). */
export function inPlayRulesText(inPlay: Array<{ rule: Rule; match: RuleMatch }>): string {
  const shown = inPlay.filter((x) => x.rule.body);
  if (!shown.length) return '';
  return [
    `<path-scoped-rules-in-play${attrs({ description: 'Path-scoped rules whose files are in play in this chat; they count as fetched. Follow them for matching files.' })}>`,
    ...shown.map(({ rule, match }) => `<rule${attrs({ id: rule.id, name: rule.name, paths: (rule.paths ?? []).join(','), 'matched-path': match.path })}>\n${rule.body}\n</rule>`),
    '</path-scoped-rules-in-play>',
  ].join('\n');
}

const GLOB_NOTE =
  'Path matching uses picomatch globs against workspace-relative paths; as in ECA, `**` inside a name crosses folders (`src/**.ts` matches `src/a.ts` and `src/x/a.ts`), and `**/` also matches zero folders.';

/** ECA fetch_rule.clj `path-mismatch-message`. */
export function mismatchText(rule: Rule, m: RuleMatch): string {
  const allowed = `Allowed patterns: ${(rule.paths ?? []).join(', ')}`;
  switch (m.reason) {
    case 'path-not-absolute':
      return `Path '${m.path}' must be absolute. Pass the exact absolute file or directory path you plan to work with.\n${GLOB_NOTE}`;
    case 'outside-rule-workspace':
      return `Rule id '${rule.id}' does not apply to path '${m.path}' because it is outside the rule workspace root '${rule.root}'.\n${allowed}\n${GLOB_NOTE}`;
    case 'outside-workspaces':
      return `Rule id '${rule.id}' does not apply to path '${m.path}' because global path-scoped rules are matched only against the current workspace roots.\n${allowed}\n${GLOB_NOTE}`;
    default:
      return `Rule id '${rule.id}' does not apply to path '${m.path}'.\nChecked relative path: ${m.relative}${rule.scope === 'project' ? ` (from workspace root '${m.root}')` : ''}\n${allowed}\n${GLOB_NOTE}`;
  }
}

/** ECA fetch_rule.clj: the header, then the body. */
export function fetchedText(rule: Rule, m: RuleMatch): string {
  const header = `**Rule**: ${rule.name}\n**Path**: ${m.path}\n**Matched pattern**: ${m.pattern}\n`;
  return rule.body ? `${header}\n${rule.body}` : `${header}\nThis rule contains no usable content for the current chat context and does not need to be loaded again in this chat.`;
}

/** ECA path_rules.clj `missing-path-scoped-rules-error`. */
export function missingRulesText(target: string, missing: Array<{ rule: Rule; match: RuleMatch }>, action: 'reading' | 'modifying'): string {
  return [
    `Path-scoped rules must be fetched before ${action} '${target}'.`,
    'Fetch the missing rule(s) first:',
    ...missing.map(
      ({ rule, match }) => `- ${rule.name}\n  id: ${rule.id}\n  path: ${target}\n  matched-pattern: ${match.pattern}\n  next: call \`patchbay__fetch_rule\` with this exact \`id\` and \`path\`.`,
    ),
  ].join('\n');
}

export interface InstructionsFileInfo {
  path: string;
  /** `user`, `parent` or `workspace`. */
  kind: string;
  cut?: boolean;
}

/** `/rules` (ECA commands.clj `rules-msg`), with the instructions files first. */
export function rulesCommandText(files: InstructionsFileInfo[], statics: Rule[], pathScoped: Rule[]): string {
  const preview = (s: string): string => (s.length > 120 ? `${s.slice(0, 120)}...` : s);
  const fmt = (r: Rule, withContent: boolean): string =>
    [
      `### ${r.name} (${r.scope})`,
      `Source: ${r.id}`,
      `Agent filter: ${r.agents ? r.agents.join(', ') : 'all'}`,
      `Model filter: ${r.models ? r.models.join(', ') : 'all'}`,
      ...(r.paths ? [`Path filter: ${r.paths.join(', ')}`, `Enforce: ${r.enforce.join(', ')}`] : []),
      ...(withContent ? [`Content preview: ${preview(r.body)}`] : []),
      '',
      '',
    ].join('\n');
  let out = '';
  if (files.length) {
    out += 'Project instructions (included in full in the system prompt, in this order):\n\n';
    out += files.map((f) => `- ${f.path} (${f.kind}${f.cut ? ', cut to 64 KB' : ''})`).join('\n');
    out += '\n\n';
  }
  if (statics.length) out += `Static rules (full content is included directly in the system prompt):\n\n${statics.map((r) => fmt(r, true)).join('')}`;
  if (pathScoped.length) {
    out += `Path-scoped rules (only a catalog is included in the system prompt; load full content with fetch_rule using the rule id and target path):\n\n${pathScoped.map((r) => fmt(r, false)).join('')}`;
  }
  if (!statics.length && !pathScoped.length) out += 'No rules available for the current agent and model.';
  return out.trimEnd();
}

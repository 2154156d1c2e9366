/**
 * Tool-call approval, ECA-compatible (`toolCall.approval`):
 *
 *   { byDefault?: 'allow'|'ask'|'deny',
 *     allow?|ask?|deny?: { <selector>: { argsMatchers?: { <arg>: [regex, ...] } } | null } }
 *
 * A selector is
 *   - a full name `<server>__<tool>` (`patchbay__shell_command`, `github__create_issue`);
 *   - a bare native tool name (`read_file`), as in ECA a bare name means a native tool when
 *     the tool is native (server `patchbay`);
 *   - otherwise a server name (`github`, `patchbay`), matching every tool of that server.
 * `eca` is accepted as an alias of `patchbay` so ECA configs (`eca__shell_command`) carry over.
 *
 * A rule with `argsMatchers` matches only when, for some listed argument, the call's value
 * (strings as they are, other values as JSON) fully matches one of its regexes (Java
 * `re-matches` semantics). In deny and ask rules `.` matches newlines too, so `.*rm .*` covers
 * every line of `"true\nrm x"`; in allow rules it does not, so `git .*` never covers a second
 * line. An invalid regex never matches and never throws.
 *
 * The native `shell_command`'s `command` is judged per simple command (approval-shell.ts,
 * split by shell-words.ts at `;`, newline, `&&`, `||`, `|`, `&`):
 *   - deny/ask: the rule matches when the whole command matches, or any simple command does,
 *     as written or as its unquoted words (`"r"m x` and `r\m x` are seen as `rm x`, also
 *     without leading `VAR=value` and keywords such as `then`). A command that cannot be split
 *     (`$(…)`, backticks, parentheses, heredocs, unbalanced quotes, …), or whose words are only
 *     known after expansion (`$a`, `p?sh`), or that runs code its words do not show (`eval`,
 *     `sh`, `xargs`, `env`, `python -c`, `find -exec`), and that does not match as a whole,
 *     makes the call ask at least whenever a deny or ask rule with a `command` matcher names
 *     the tool (fail closed). `/bin/rm x` is also seen as `rm x`.
 *   - allow: the rule matches only when the command can be split, every simple command
 *     matches one of its regexes (or is a plain filter such as `head`, `grep`, `wc` reading
 *     the previous command's output and naming no file outside), and none writes a file
 *     through a redirection (`>`, `>>`, `&>`, … except to /dev/null and `2>&1`-style
 *     duplications). So `git .*` allows `git status | head` but not `git status; rm -rf ~`
 *     nor `git log > ~/.bashrc`.
 *   - On Windows (cmd quoting differs), a command is never allowed by an allow rule's matcher
 *     and a deny/ask rule that does not match the whole command asks.
 *
 * Several matching rules: deny wins over ask wins over allow. No rule: `byDefault` if set,
 * else read-only tools are allowed and the rest ask.
 */
import type { ApprovalConfig } from '../../config/schema.js';
import { compileFullMatch } from '../../config/regex.js';
import { permittingMatch, restrictingMatch, type MatchResult } from './approval-shell.js';

export type ApprovalDecision = 'allow' | 'ask' | 'deny';

/** What approval needs to know about a tool (a subset of `Tool`). */
export interface ApprovalTool {
  name: string;
  server: string;
  readOnly: boolean;
}

type Rule = { argsMatchers?: Record<string, string[]> } | null | undefined;
type Rules = Record<string, Rule> | undefined;

export const NATIVE_SERVER = 'patchbay';
const SERVER_ALIASES: Record<string, string> = { eca: NATIVE_SERVER };

function canonicalServer(server: string): string {
  return SERVER_ALIASES[server] ?? server;
}

/**
 * Does `selector` name this tool (ignoring argsMatchers)? Only selectors are canonicalised: a
 * tool is native when its server is literally `patchbay`, a name no peer may register under
 * (core/tool-names.ts), so `read_file`, `eca` and `eca__read_file` never reach a peer's tool.
 */
export function selectorMatches(selector: string, tool: Pick<ApprovalTool, 'name' | 'server'>): boolean {
  const native = tool.server === NATIVE_SERVER;
  const sep = selector.indexOf('__');
  if (sep >= 0) {
    const server = canonicalServer(selector.slice(0, sep));
    const name = selector.slice(sep + 2);
    return tool.server === server && tool.name === name;
  }
  if (tool.server === canonicalServer(selector)) return true;
  return native && tool.name === selector;
}

function argValueString(v: unknown): string | undefined {
  // ECA: `(when-let [arg (get args name)] ...)`, so nil and false never match.
  if (v === undefined || v === null || v === false) return undefined;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return undefined;
  }
}

type Kind = 'restrict' | 'permit';

function isShellCommand(tool: Pick<ApprovalTool, 'name' | 'server'>): boolean {
  return canonicalServer(tool.server) === NATIVE_SERVER && tool.name === 'shell_command';
}

function compiledTests(patterns: unknown[], kind: Kind): Array<(s: string) => boolean> {
  const tests: Array<(s: string) => boolean> = [];
  for (const p of patterns) {
    if (typeof p !== 'string') continue;
    // Deny/ask rules see across line breaks; allow rules never do (see config/regex.ts).
    const m = compileFullMatch(p, { dotAll: kind === 'restrict' });
    if (m.ok) tests.push(m.test);
  }
  return tests;
}

function argsMatch(matchers: Record<string, unknown>, args: Record<string, unknown>, tool: ApprovalTool, kind: Kind): MatchResult {
  let result: MatchResult = 'no';
  for (const [argName, patterns] of Object.entries(matchers)) {
    if (!Array.isArray(patterns)) continue;
    const value = argValueString(Object.prototype.hasOwnProperty.call(args, argName) ? args[argName] : undefined);
    if (value === undefined) continue;
    const tests = compiledTests(patterns, kind);
    let r: MatchResult;
    if (isShellCommand(tool) && argName === 'command' && typeof args[argName] === 'string') {
      r = kind === 'restrict' ? restrictingMatch(value, tests) : permittingMatch(value, tests);
    } else {
      r = tests.some((t) => t(value)) ? 'match' : 'no';
    }
    if (r === 'match') return 'match';
    if (r === 'unknown') result = 'unknown';
  }
  return result;
}

function ruleMatches(selector: string, rule: Rule, tool: ApprovalTool, args: Record<string, unknown>, kind: Kind): MatchResult {
  if (!selectorMatches(selector, tool)) return 'no';
  const matchers = rule?.argsMatchers;
  if (matchers && typeof matchers === 'object') return argsMatch(matchers, args, tool, kind);
  return 'match';
}

/** Whether a rule of `rules` matches, and the selector of the first that does (or cannot tell). */
function rulesMatch(rules: Rules, tool: ApprovalTool, args: Record<string, unknown>, kind: Kind): { result: MatchResult; selector?: string } {
  let found: { result: MatchResult; selector?: string } = { result: 'no' };
  for (const [selector, rule] of Object.entries(rules ?? {})) {
    const r = ruleMatches(selector, rule, tool, args, kind);
    if (r === 'match') return { result: 'match', selector };
    if (r === 'unknown' && found.result === 'no') found = { result: 'unknown', selector };
  }
  return found;
}

/** The approval for one tool call. */
export function decideApproval(tool: ApprovalTool, args: Record<string, unknown>, approval: ApprovalConfig | undefined): ApprovalDecision {
  return explainApproval(tool, args, approval).decision;
}

/** The approval for one tool call, with what decided it (for `patchbay tools check`, core/tool-calls/tool-gate.ts). */
export function explainApproval(tool: ApprovalTool, args: Record<string, unknown>, approval: ApprovalConfig | undefined): { decision: ApprovalDecision; because: string } {
  const a = approval ?? {};
  const safeArgs = args && typeof args === 'object' ? args : {};
  const deny = rulesMatch(a.deny, tool, safeArgs, 'restrict');
  if (deny.result === 'match') return { decision: 'deny', because: `the deny rule "${deny.selector}" matches` };
  const ask = rulesMatch(a.ask, tool, safeArgs, 'restrict');
  if (ask.result === 'match') return { decision: 'ask', because: `the ask rule "${ask.selector}" matches` };
  const otherwise = fallThrough(a, tool, safeArgs);
  // A shell command a deny/ask rule cannot read: never let it through unasked.
  const unread = deny.result === 'unknown' ? deny : ask.result === 'unknown' ? ask : undefined;
  if (unread && otherwise.decision === 'allow') {
    return { decision: 'ask', because: `the command cannot be read for the ${unread === deny ? 'deny' : 'ask'} rule "${unread.selector}", so it asks` };
  }
  return otherwise;
}

function fallThrough(a: ApprovalConfig, tool: ApprovalTool, args: Record<string, unknown>): { decision: ApprovalDecision; because: string } {
  const allow = rulesMatch(a.allow, tool, args, 'permit');
  if (allow.result === 'match') return { decision: 'allow', because: `the allow rule "${allow.selector}" matches` };
  if (a.byDefault) return { decision: a.byDefault, because: `no rule names it; byDefault is "${a.byDefault}"` };
  return tool.readOnly ? { decision: 'allow', because: 'no rule names it, and it only reads' } : { decision: 'ask', because: 'no rule names it, and it may change things' };
}

/**
 * True when a deny rule without argsMatchers names the tool: the call could never run, so the
 * tool is not offered to the LLM at all.
 */
export function isHiddenByDeny(tool: Pick<ApprovalTool, 'name' | 'server'>, approval: ApprovalConfig | undefined): boolean {
  const deny = approval?.deny;
  if (!deny) return false;
  return Object.entries(deny).some(([selector, rule]) => (rule == null || rule.argsMatchers == null) && selectorMatches(selector, tool));
}

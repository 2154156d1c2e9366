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
 * `re-matches` semantics). An invalid regex never matches and never throws.
 *
 * Several matching rules: deny wins over ask wins over allow. No rule: `byDefault` if set,
 * else read-only tools are allowed and the rest ask.
 */
import type { ApprovalConfig } from '../config/schema.js';
import { compileFullMatch } from '../config/regex.js';

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

function argsMatch(matchers: Record<string, unknown>, args: Record<string, unknown>): boolean {
  for (const [argName, patterns] of Object.entries(matchers)) {
    if (!Array.isArray(patterns)) continue;
    const value = argValueString(Object.prototype.hasOwnProperty.call(args, argName) ? args[argName] : undefined);
    if (value === undefined) continue;
    for (const p of patterns) {
      if (typeof p !== 'string') continue;
      const m = compileFullMatch(p);
      if (m.ok && m.test(value)) return true;
    }
  }
  return false;
}

function ruleMatches(selector: string, rule: Rule, tool: ApprovalTool, args: Record<string, unknown>): boolean {
  if (!selectorMatches(selector, tool)) return false;
  const matchers = rule?.argsMatchers;
  if (matchers && typeof matchers === 'object') return argsMatch(matchers, args);
  return true;
}

function anyRuleMatches(rules: Rules, tool: ApprovalTool, args: Record<string, unknown>): boolean {
  if (!rules) return false;
  return Object.entries(rules).some(([selector, rule]) => ruleMatches(selector, rule, tool, args));
}

/** The approval for one tool call. */
export function decideApproval(tool: ApprovalTool, args: Record<string, unknown>, approval: ApprovalConfig | undefined): ApprovalDecision {
  const a = approval ?? {};
  const safeArgs = args && typeof args === 'object' ? args : {};
  if (anyRuleMatches(a.deny, tool, safeArgs)) return 'deny';
  if (anyRuleMatches(a.ask, tool, safeArgs)) return 'ask';
  if (anyRuleMatches(a.allow, tool, safeArgs)) return 'allow';
  if (a.byDefault) return a.byDefault;
  return tool.readOnly ? 'allow' : 'ask';
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

/**
 * Which hooks an event runs (ECA docs/config/hooks.md "matcher", hooks.clj `hook-matches?`): tool
 * hooks by a regex over `server__tool` or by tool selectors with `argsMatchers`; compact hooks by
 * trigger; every other hook ignores its matcher.
 */
import type { HookConfig, HookType } from '../../config/hooks.js';

export type MatchData = { server: string; tool: string; args: Record<string, unknown>; native: boolean } | { triggered: 'manual' | 'auto' };

export function matches(type: HookType, matcher: HookConfig['matcher'], data: MatchData | undefined): boolean {
  if (type === 'preToolCall' || type === 'postToolCall') {
    if (matcher === undefined) return true;
    if (!data || !('tool' in data)) return false;
    // Our native tools are `patchbay__x` to the model and `eca__x` in ECA's configs: both match.
    const names = [`${data.server}__${data.tool}`, ...(data.native ? [`eca__${data.tool}`, `patchbay__${data.tool}`] : [])];
    if (typeof matcher === 'string') return names.some((n) => fullMatch(matcher, n));
    return Object.entries(matcher).some(([selector, rule]) => {
      const selected = names.includes(selector) || (data.native && selector === data.tool) || selector === data.server || (data.native && (selector === 'eca' || selector === 'patchbay'));
      return selected && argsMatch(rule?.argsMatchers, data.args);
    });
  }
  if (type === 'preCompact' || type === 'postCompact') {
    if (matcher === undefined) return true;
    return typeof matcher === 'string' && !!data && 'triggered' in data && matcher === data.triggered;
  }
  return true;
}

/** Every listed argument present and matching one of its patterns (ECA `args-match?`). */
function argsMatch(rules: Record<string, string[]> | undefined, args: Record<string, unknown>): boolean {
  if (!rules) return true;
  return Object.entries(rules).every(([arg, patterns]) => {
    const value = args[arg];
    return value !== undefined && value !== null && patterns.some((p) => fullMatch(p, typeof value === 'string' ? value : JSON.stringify(value)));
  });
}

/** The patterns of a hook's matcher that do not compile (doctor and the chat say so: they match nothing). */
export function badPatterns(type: HookType, matcher: HookConfig['matcher']): string[] {
  if ((type !== 'preToolCall' && type !== 'postToolCall') || matcher === undefined) return [];
  const patterns = typeof matcher === 'string' ? [matcher] : Object.values(matcher).flatMap((rule) => Object.values(rule?.argsMatchers ?? {}).flat());
  return patterns.filter((p) => !compiles(p));
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(`^(?:${pattern})$`, 'u');
    return true;
  } catch {
    return false;
  }
}

/** Java's `re-matches`: the whole string. A pattern that does not compile never matches. */
function fullMatch(pattern: string, value: string): boolean {
  try {
    return new RegExp(`^(?:${pattern})$`, 'u').test(value);
  } catch {
    // Reported by Hooks.publish (doctor, and once in each chat), not at each call.
    return false;
  }
}

/**
 * Regexes from config (`toolCall.approval.*.*.argsMatchers`). ECA compiles them with Java's
 * `re-pattern` and tests with `re-matches`, i.e. the whole string must match. We mirror that:
 * a leading Java inline-flag group such as `(?i)` becomes a JS flag, and the match is anchored
 * at both ends whatever the flags (`(?m)` must not turn `$` into "end of a line").
 *
 * `dotAll` decides what `.` does with line breaks, and the caller picks the strict side: a deny or
 * ask rule matches across lines (`.*rm .*` must catch `"true\nrm x"`), an allow rule does not
 * (`git .*` must not allow `"git status\nrm -rf ~"`), so a line break never widens what runs.
 */

export type CompiledMatcher = { ok: true; test: (s: string) => boolean } | { ok: false; error: string };

const cache = new Map<string, CompiledMatcher>();

export function compileFullMatch(pattern: string, opts: { dotAll?: boolean } = {}): CompiledMatcher {
  const key = `${opts.dotAll ? 's' : '-'}${pattern}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const compiled = compile(pattern, opts.dotAll ?? false);
  if (cache.size > 1000) cache.clear();
  cache.set(key, compiled);
  return compiled;
}

function compile(pattern: string, dotAll: boolean): CompiledMatcher {
  let source = pattern;
  let flags = dotAll ? 's' : '';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags = [...new Set(`${flags}${inline[1]}`)].join('');
    source = source.slice(inline[0].length);
  }
  try {
    // Compile alone first: wrapping an unbalanced pattern like `a)|(b` could make it valid.
    new RegExp(source, flags);
    // Sticky anchors the start; the lookahead anchors the true end of input.
    const re = new RegExp(`(?:${source})(?![\\s\\S])`, `${flags}y`);
    return {
      ok: true,
      test: (s: string) => {
        re.lastIndex = 0;
        return re.test(s);
      },
    };
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
}

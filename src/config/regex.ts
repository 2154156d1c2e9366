/**
 * Regexes from config (`toolCall.approval.*.*.argsMatchers`). ECA compiles them with Java's
 * `re-pattern` and tests with `re-matches`, i.e. the whole string must match. We mirror that:
 * a leading Java inline-flag group such as `(?i)` becomes a JS flag, and the match is anchored
 * at both ends whatever the flags (`(?m)` must not turn `$` into "end of a line"), and `.`
 * matches line breaks too (the `s` flag is always on).
 */

export type CompiledMatcher = { ok: true; test: (s: string) => boolean } | { ok: false; error: string };

const cache = new Map<string, CompiledMatcher>();

export function compileFullMatch(pattern: string): CompiledMatcher {
  const hit = cache.get(pattern);
  if (hit) return hit;
  const compiled = compile(pattern);
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}

function compile(pattern: string): CompiledMatcher {
  let source = pattern;
  // Always dotall: a full match must cover every line of the argument, or `.*rm .*` would
  // let `"true\nrm x"` through (ECA patterns are written as if `.` matched anything).
  let flags = 's';
  const inline = /^\(\?([ims]+)\)/.exec(source);
  if (inline) {
    flags = [...new Set(`s${inline[1]}`)].join('');
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

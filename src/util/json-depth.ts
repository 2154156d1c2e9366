/**
 * How deeply a parsed JSON value nests, checked without recursion. JSON.parse itself is
 * iterative in V8 and happily builds a value 200,000 arrays deep; the recursive code that
 * walks it later (zod, JSON.stringify, renderers) then overflows the stack. Every boundary
 * checks depth with this first and refuses the value with a clear error instead.
 */

/** The deepest nesting patchbay accepts from a peer: far beyond any real message, well within every recursive walker's stack. */
export const MAX_JSON_DEPTH = 256;

/** True when `value` has arrays/objects nested more than `max` levels deep (a scalar is depth 0, `[]` depth 1). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length) {
    const v = values.pop()!;
    const d = depths.pop()!;
    if (d > max) return true;
    if (Array.isArray(v)) {
      for (const item of v) {
        if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(d + 1);
        }
      }
    } else {
      for (const key in v) {
        const item = (v as Record<string, unknown>)[key];
        if (item !== null && typeof item === 'object') {
          values.push(item);
          depths.push(d + 1);
        }
      }
    }
  }
  return false;
}

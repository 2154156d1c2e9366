/**
 * Nesting-depth limits for JSON from peers (issue 14, point 9). V8's JSON.parse copes with very
 * deep input, but JSON.stringify, zod and every recursive walk after it overflow the stack: a
 * 200,000-deep `tool.result` stalled the call or came back as an opaque -32603. Both checks here
 * are iterative (no recursion), so they cannot overflow themselves.
 */

/** Deeper than any real message needs; shallow enough for every recursive walk we do. */
export const MAX_JSON_DEPTH = 256;

/** True when `value` nests objects/arrays more than `max` levels deep (the top level is depth 1). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: Array<{ v: object; depth: number }> = [{ v: value, depth: 1 }];
  // A shared sub-object is walked again per reference; parsed JSON has none, and cycles are cut
  // by the depth limit itself.
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) if (c !== null && typeof c === 'object') stack.push({ v: c, depth: depth + 1 });
  }
  return false;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * The same check on JSON text before it is parsed: one linear pass counting brackets outside
 * strings. Works on UTF-8 bytes (no multi-byte sequence contains an ASCII byte) and on strings.
 * Invalid JSON may pass; the parser rejects it afterwards.
 */
export function jsonTextDepthExceeds(text: Uint8Array | string, max: number): boolean {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > max) return true;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) depth--;
  }
  return false;
}

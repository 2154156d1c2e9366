/**
 * The top-level string members of a JSON object, read from its text without parsing the rest.
 * For frames too deep to parse safely (util/json-depth.ts): V8's JSON.parse copes, but a 5 MB
 * frame of brackets takes it half a second, which the editor would wait for. One linear pass.
 */
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/** Undefined when the text is not a JSON object (its first non-blank byte is not `{`). */
export function topLevelStrings(buf: Uint8Array, keys: readonly string[]): Record<string, string> | undefined {
  let i = 0;
  while (i < buf.length && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  if (buf[i] !== 0x7b) return undefined;
  const out: Record<string, string> = {};
  let depth = 0;
  // At depth 1: the last string that could be a key, and the key whose value comes next.
  let candidate: string | undefined;
  let key: string | undefined;
  for (; i < buf.length; i++) {
    const b = buf[i];
    if (b === QUOTE) {
      let j = i + 1;
      while (j < buf.length && buf[j] !== QUOTE) j += buf[j] === BACKSLASH ? 2 : 1;
      if (depth === 1) {
        const text = decodeString(buf.subarray(i, j + 1));
        if (key !== undefined) {
          if (text !== undefined && keys.includes(key) && !(key in out)) out[key] = text;
          key = undefined;
        } else candidate = text;
      }
      i = j;
    } else if (depth === 1 && b === COLON) {
      key = candidate;
      candidate = undefined;
    } else if (depth === 1 && b === COMMA) {
      key = candidate = undefined;
    } else if (OPENERS.has(b)) {
      depth++;
      // A value that is an array or object: not a string.
      if (depth === 2) key = undefined;
    } else if (CLOSERS.has(b)) depth--;
  }
  return out;
}

function decodeString(token: Uint8Array): string | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(token.buffer, token.byteOffset, token.byteLength).toString('utf8'));
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

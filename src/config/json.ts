/**
 * JSON parsing for config files with errors that say where: `JSON.parse`'s own messages
 * (Node 20) often carry no position and quote a snippet of the input — which, for a config
 * file, may be an API key — so on failure we locate the error ourselves.
 */

export type JsonParseResult = { ok: true; value: unknown } | { ok: false; message: string; line?: number; column?: number; offset?: number };

/** Parse `text` as JSON. A leading BOM is ignored. */
export function parseJson(text: string): JsonParseResult {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return { ok: true, value: JSON.parse(src) };
  } catch (e) {
    const located = locateJsonError(src);
    if (located) {
      const { line, column } = lineColumn(src, located.offset);
      return { ok: false, message: `Invalid JSON at line ${line}, column ${column}: ${located.message}`, line, column, offset: located.offset };
    }
    // Our scanner found nothing (should not happen): fall back to the engine's message, minus any quoted input.
    const raw = e instanceof Error ? e.message : String(e);
    return { ok: false, message: `Invalid JSON: ${raw.replace(/, ".*" is not valid JSON$/s, '')}` };
  }
}

/** 1-based line and column of a string offset. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

class JsonFail {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** The offset and a description of the first syntax error in `text`, or undefined if it is valid JSON. */
export function locateJsonError(text: string): { offset: number; message: string } | undefined {
  let i = 0;
  const n = text.length;
  const found = (at: number): string => (at >= n ? 'found end of input' : `found ${JSON.stringify(text[at])}`);
  const fail = (expected: string, at = i): never => {
    throw new JsonFail(at, `expected ${expected}, ${found(at)}`);
  };
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else break;
    }
  };
  const str = (): void => {
    i++; // opening quote
    for (;;) {
      if (i >= n) fail("a closing '\"'");
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return;
      }
      if (c === 92) {
        const e = text[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else fail('a valid escape sequence', i + 1);
        continue;
      }
      if (c < 0x20) fail('no control characters inside a string');
      i++;
    }
  };
  const numberRe = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('a property name in double quotes');
        str();
        ws();
        if (text[i] !== ':') fail("':'");
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail("',' or '}'");
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail("',' or ']'");
      }
    }
    if (c === '"') return str();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      numberRe.lastIndex = i;
      if (!numberRe.test(text)) fail('a number');
      i = numberRe.lastIndex;
      return;
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    fail('a value');
  };
  try {
    value();
    ws();
    if (i < n) fail('end of input');
    return undefined;
  } catch (e) {
    if (e instanceof JsonFail) return { offset: e.offset, message: e.message };
    return undefined; // e.g. RangeError on absurd nesting
  }
}

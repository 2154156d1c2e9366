/**
 * Config files are JSONC, as in VS Code, Zed and opencode: `//` and `/* *\/` comments and
 * trailing commas are accepted. Microsoft's jsonc-parser does the scanning (the same parser
 * VS Code uses, and it can later edit a file while keeping its comments); we build the value
 * from its tree ourselves so a `__proto__` key stays an inert property name, and we word
 * errors with line and column and never quote the input (a config file may hold an API key).
 */
import { parseTree, type Node, type ParseError } from 'jsonc-parser';
import { lineColumn, type JsonParseResult } from './json.js';

/** jsonc-parser's ParseErrorCode values (a `const enum`, so not importable as values). */
const MESSAGES: Record<number, string> = {
  1: 'unexpected symbol',
  2: 'invalid number',
  3: 'expected a property name in double quotes',
  4: 'expected a value',
  5: "expected ':'",
  6: "expected ','",
  7: "expected '}'",
  8: "expected ']'",
  9: 'expected end of input',
  10: 'invalid comment',
  11: "unterminated comment (missing '*/')",
  12: "unterminated string (missing '\"')",
  13: 'unterminated number',
  14: 'invalid unicode escape',
  15: 'invalid escape sequence',
  16: 'invalid character in a string',
};

/** Keys never copied onto an object (the loader drops them too). */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Parse JSON with comments and trailing commas. A leading BOM is ignored. */
export function parseJsonc(text: string): JsonParseResult {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const errors: ParseError[] = [];
  const root = parseTree(src, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  const first = errors[0];
  if (first || !root) {
    const offset = first?.offset ?? src.length;
    const { line, column } = lineColumn(src, offset);
    const why = `${first ? (MESSAGES[first.error] ?? 'syntax error') : 'expected a value'}${offset >= src.length ? ', found end of input' : ''}`;
    return { ok: false, message: `Invalid JSON at line ${line}, column ${column}: ${why}`, line, column, offset };
  }
  return { ok: true, value: toValue(root) };
}

function toValue(node: Node): unknown {
  switch (node.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const prop of node.children ?? []) {
        const [keyNode, valueNode] = prop.children ?? [];
        if (!keyNode || !valueNode) continue;
        const key = String(keyNode.value);
        if (UNSAFE_KEYS.has(key)) continue;
        out[key] = toValue(valueNode);
      }
      return out;
    }
    case 'array':
      return (node.children ?? []).map(toValue);
    default:
      return node.value;
  }
}

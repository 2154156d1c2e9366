import { describe, expect, it } from 'vitest';
import { parseJsonc } from '../../src/config/jsonc.js';
import { didYouMean } from '../../src/config/unknown-keys.js';

describe('parseJsonc', () => {
  it('accepts comments, trailing commas and a BOM', () => {
    const r = parseJsonc('\ufeff// head\n{ /* a */ "a": [1, 2,], "b": { "c": true, }, }\n');
    expect(r).toEqual({ ok: true, value: { a: [1, 2], b: { c: true } } });
  });

  it('keeps a __proto__ key inert', () => {
    const r = parseJsonc('{ "__proto__": { "polluted": true }, "a": 1 }');
    expect(r.ok && r.value).toEqual({ a: 1 });
    expect(r.ok && Object.getPrototypeOf(r.value)).toBe(Object.prototype);
  });

  it('reports the first error with line and column, without quoting the input', () => {
    const r = parseJsonc('{\n  "key": "sk-secret"\n  "b": 2\n}');
    expect(r).toMatchObject({ ok: false, line: 3, column: 3, message: "Invalid JSON at line 3, column 3: expected ','" });
    expect(parseJsonc('{ "key": "sk-secret" /* open').ok).toBe(false);
    const eof = parseJsonc('{"a": 1');
    expect(!eof.ok && eof.message).toBe("Invalid JSON at line 1, column 8: expected '}', found end of input");
    expect(!eof.ok && eof.message).not.toContain('sk-');
  });
});

describe('didYouMean', () => {
  const top = ['mcpServers', 'toolCall', 'providers', 'defaultModel', 'chat'];
  it('finds a case slip, a missing or extra letter and a swapped pair', () => {
    expect(didYouMean('toolcall', top)).toBe('toolCall');
    expect(didYouMean('mcpServer', top)).toBe('mcpServers');
    expect(didYouMean('defualtModel', top)).toBe('defaultModel');
    expect(didYouMean('chta', top)).toBe('chat');
  });
  it('suggests nothing for a key unlike any known one', () => {
    expect(didYouMean('telemetry', top)).toBeUndefined();
    expect(didYouMean('x', top)).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, jsonDepthExceeds, jsonTextDepthExceeds } from '../../src/util/json-depth.js';

const nestedArrays = (n: number) => '['.repeat(n) + ']'.repeat(n);

describe('jsonDepthExceeds', () => {
  it('counts the top level as depth 1, arrays and objects alike; scalars have no depth', () => {
    expect(jsonDepthExceeds(1, 0)).toBe(false);
    expect(jsonDepthExceeds('[[[', 0)).toBe(false);
    expect(jsonDepthExceeds({}, 1)).toBe(false);
    expect(jsonDepthExceeds({}, 0)).toBe(true);
    expect(jsonDepthExceeds({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(jsonDepthExceeds({ a: [{ b: 1 }] }, 2)).toBe(true);
    // Only the deepest branch matters.
    expect(jsonDepthExceeds([1, [2], [[3]], 'x'], 3)).toBe(false);
    expect(jsonDepthExceeds([1, [2], [[3]], 'x'], 2)).toBe(true);
  });

  it('walks 200,000 levels without recursion (a recursive walk overflows the stack)', () => {
    const deep = JSON.parse(nestedArrays(200_000));
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(jsonDepthExceeds(deep, MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDepthExceeds(JSON.parse(nestedArrays(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false);
  });

  it('stops at a cycle instead of looping', () => {
    const a: unknown[] = [];
    a.push(a);
    expect(jsonDepthExceeds(a, 10)).toBe(true);
  });
});

describe('jsonTextDepthExceeds', () => {
  it('agrees with the parsed value, on text and on UTF-8 bytes', () => {
    for (const text of ['1', '"x"', '[]', '{"a":[{"b":[1,2]}]}', nestedArrays(64), nestedArrays(65), '{"é":{"ü":["ß"]}}']) {
      for (const max of [0, 1, 2, 3, 64]) {
        const want = jsonDepthExceeds(JSON.parse(text), max);
        expect(jsonTextDepthExceeds(text, max), `${text.slice(0, 20)} @ ${max}`).toBe(want);
        expect(jsonTextDepthExceeds(Buffer.from(text), max)).toBe(want);
      }
    }
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ s: '[[[[{{{{ \\" [[[[ "' + '['.repeat(100) });
    expect(jsonTextDepthExceeds(text, 1)).toBe(false);
    expect(jsonTextDepthExceeds(JSON.stringify(['\\', [[1]]]), 2)).toBe(true);
  });

  it('scans 200,000 levels of text in one linear pass', () => {
    expect(jsonTextDepthExceeds(nestedArrays(200_000), MAX_JSON_DEPTH)).toBe(true);
    expect(jsonTextDepthExceeds(`{"a":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_001)}`, MAX_JSON_DEPTH)).toBe(true);
  });
});

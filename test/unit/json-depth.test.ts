import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../../src/util/json-depth.js';

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects, not scalars', () => {
    expect(jsonDepthExceeds(1, 0)).toBe(false);
    expect(jsonDepthExceeds(null, 0)).toBe(false);
    expect(jsonDepthExceeds([], 0)).toBe(true);
    expect(jsonDepthExceeds([], 1)).toBe(false);
    expect(jsonDepthExceeds({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(jsonDepthExceeds({ a: [{ b: 1 }] }, 2)).toBe(true);
    // The deepest branch counts, wherever it is.
    expect(jsonDepthExceeds([1, { x: 'y' }, [[[]]]], 3)).toBe(true);
  });

  it('walks 200,000 nested arrays without recursion', () => {
    const n = 200_000;
    const v = JSON.parse('['.repeat(n) + ']'.repeat(n));
    expect(jsonDepthExceeds(v, MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDepthExceeds(v, n)).toBe(false);
  });

  it('a wide, shallow value is fine', () => {
    expect(jsonDepthExceeds({ rows: Array.from({ length: 100_000 }, (_, i) => ({ i, tags: ["a"] })) }, 4)).toBe(false);
  });
});

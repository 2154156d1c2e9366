import { describe, expect, it } from 'vitest';
import { topLevelStrings } from '../../src/peers/gateway/top-level.js';
import { parseFrame } from '../../src/peers/gateway/validation.js';
import { MAX_JSON_DEPTH } from '../../src/util/json-depth.js';

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const frame = (text: string) => parseFrame(Buffer.from(text));

describe('gateway frames nested too deep', () => {
  it('are classified without being parsed, keeping the top-level type and id for correlation', () => {
    expect(frame(`{"type":"tool.result","id":"call-7","data":${deep(200_000)}}`)).toEqual({ kind: 'tooDeep', type: 'tool.result', limit: MAX_JSON_DEPTH, raw: { type: 'tool.result', id: 'call-7' } });
    // Any key order; an "id" inside the deep value is not the message's.
    expect(frame(`{"data":[{"id":"inner"},${deep(MAX_JSON_DEPTH)}],"id":"call-8","type":"tool.result"}`)).toMatchObject({ kind: 'tooDeep', raw: { type: 'tool.result', id: 'call-8' } });
    expect(frame(`{"type":"push","metadata":${'{"a":'.repeat(MAX_JSON_DEPTH + 6)}1${'}'.repeat(MAX_JSON_DEPTH + 6)}}`)).toMatchObject({ kind: 'tooDeep', type: 'push' });
    // MAX_JSON_DEPTH levels in all are fine.
    expect(frame(`{"type":"push","event":"x","metadata":${'{"a":'.repeat(MAX_JSON_DEPTH - 2)}1${'}'.repeat(MAX_JSON_DEPTH - 2)}}`)).toMatchObject({ kind: 'message', type: 'push' });
  });

  it('without an object or a string type they are malformed', () => {
    expect(frame(deep(MAX_JSON_DEPTH + 10))).toMatchObject({ kind: 'malformed', message: 'message must be a JSON object' });
    expect(frame(`{"type":${deep(MAX_JSON_DEPTH + 10)}}`)).toMatchObject({ kind: 'malformed', message: expect.stringMatching(/no string "type"/) });
  });
});

describe('topLevelStrings', () => {
  it('reads escaped strings and skips non-string values', () => {
    const text = '{ "a" : "x\\"y", "n": 1, "o": {"type": "no"}, "type": "t\\u00e9", "arr": ["id", "z"], "id": "last" }';
    expect(topLevelStrings(Buffer.from(text), ['a', 'type', 'id', 'n', 'o'])).toEqual({ a: 'x"y', type: 'té', id: 'last' });
    expect(topLevelStrings(Buffer.from('  {}'), ['type'])).toEqual({});
    expect(topLevelStrings(Buffer.from('"s"'), ['type'])).toBeUndefined();
  });
});

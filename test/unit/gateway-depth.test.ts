import { describe, expect, it } from 'vitest';
import { topLevelStrings } from '../../src/peers/gateway/top-level.js';
import { parseFrame } from '../../src/peers/gateway/validation.js';

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
const frame = (text: string) => parseFrame(Buffer.from(text));

describe('gateway frames nested too deep', () => {
  it('are classified without being parsed, keeping the top-level type and id for correlation', () => {
    expect(frame(`{"type":"tool.result","id":"call-7","data":${deep(200_000)}}`)).toEqual({ kind: 'tooDeep', type: 'tool.result', limit: 64, raw: { type: 'tool.result', id: 'call-7' } });
    // Any key order; an "id" inside the deep value is not the message's.
    expect(frame(`{"data":[{"id":"inner"},${deep(100)}],"id":"call-8","type":"tool.result"}`)).toMatchObject({ kind: 'tooDeep', raw: { type: 'tool.result', id: 'call-8' } });
    expect(frame(`{"type":"push","metadata":${'{"a":'.repeat(70)}1${'}'.repeat(70)}}`)).toMatchObject({ kind: 'tooDeep', type: 'push' });
    // 64 levels in all are fine.
    expect(frame(`{"type":"push","event":"x","metadata":${'{"a":'.repeat(62)}1${'}'.repeat(62)}}`)).toMatchObject({ kind: 'message', type: 'push' });
  });

  it('without an object or a string type they are malformed', () => {
    expect(frame(deep(100))).toMatchObject({ kind: 'malformed', message: 'message must be a JSON object' });
    expect(frame(`{"type":${deep(100)}}`)).toMatchObject({ kind: 'malformed', message: expect.stringMatching(/no string "type"/) });
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

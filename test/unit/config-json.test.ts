import { describe, expect, it } from 'vitest';
import { lineColumn, locateJsonError, parseJson } from '../../src/config/json.js';
import { compileFullMatch } from '../../src/config/regex.js';

describe('parseJson', () => {
  it('parses valid JSON, ignoring a BOM', () => {
    expect(parseJson('\uFEFF{"a": [1, true, null, "x\\u0041"]}')).toEqual({ ok: true, value: { a: [1, true, null, 'xA'] } });
  });

  it.each([
    ['{\n  "a": 1,\n}', 3, 1, /property name/],
    ['{"a" 1}', 1, 6, /expected ':'/],
    ['[1, 2', 1, 6, /end of input/],
    ['{"a": tru}', 1, 7, /expected a value/],
    ['{"a": 1} x', 1, 10, /end of input, found "x"/],
    ['{"a": "b\\q"}', 1, 10, /escape/],
    ["{'a': 1}", 1, 2, /double quotes/],
  ])('locates the error in %j at line %i column %i', (text, line, column, msg) => {
    const r = parseJson(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect({ line: r.line, column: r.column }).toEqual({ line, column });
    expect(r.message).toMatch(msg);
    expect(r.message).toContain(`line ${line}, column ${column}`);
  });

  it('locateJsonError agrees with JSON.parse on valid input', () => {
    for (const t of ['{}', '[]', '0', '-1.5e+3', '"s"', '{"a":{"b":[{},[],""]}}', ' \n true \n']) {
      expect(() => JSON.parse(t)).not.toThrow();
      expect(locateJsonError(t)).toBeUndefined();
    }
  });

  it('lineColumn is 1-based', () => {
    expect(lineColumn('ab\ncd', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('ab\ncd', 4)).toEqual({ line: 2, column: 2 });
  });
});

describe('compileFullMatch', () => {
  const m = (p: string, s: string) => {
    const c = compileFullMatch(p);
    if (!c.ok) throw new Error(c.error);
    return c.test(s);
  };
  it('matches the whole string only (Java re-matches)', () => {
    expect(m('git status', 'git status')).toBe(true);
    expect(m('git status', 'git status && rm -rf /')).toBe(false);
    expect(m('status', 'git status')).toBe(false);
    expect(m('a|ab', 'ab')).toBe(true); // backtracks to the alternative that matches it all
  });
  it('turns a leading (?i) into a flag and stays anchored with (?m)', () => {
    expect(m('(?i)GIT .*', 'git log')).toBe(true);
    expect(m('(?m)ls', 'ls\nrm -rf /')).toBe(false);
    expect(m('(?s)echo.*', 'echo a\nb')).toBe(true);
  });
  it('with dotAll (deny and ask rules) . matches newlines, so ".*rm .*" sees "true\\nrm x"; without (allow rules) "git .*" does not cover a second line', () => {
    const dot = (p: string, s: string) => {
      const c = compileFullMatch(p, { dotAll: true });
      if (!c.ok) throw new Error(c.error);
      return c.test(s);
    };
    expect(dot('echo.*', 'echo a\nb')).toBe(true);
    expect(dot('.*rm .*', 'true\nrm victim.txt')).toBe(true);
    expect(dot('ls', 'ls\nrm -rf /')).toBe(false);
    expect(m('git .*', 'git status\nrm -rf ~')).toBe(false);
    expect(m('echo.*', 'echo a\nb')).toBe(false);
  });
  it('reports invalid patterns instead of throwing, including ones wrapping would hide', () => {
    expect(compileFullMatch('(unclosed').ok).toBe(false);
    expect(compileFullMatch('a)|(b').ok).toBe(false);
  });
  it('is reusable (sticky state reset between tests)', () => {
    const c = compileFullMatch('x+');
    expect(c.ok && c.test('xxx') && c.test('xx') && !c.test('xy')).toBe(true);
  });
});

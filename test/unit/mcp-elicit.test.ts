/**
 * MCP form elicitation as questions (src/peers/mcp/elicit-form.ts, elicit.ts, running-calls.ts):
 * the schema kinds of the spec (client/elicitation "Requested Schema"), answers checked against
 * them, and which chat is asked. The wire path is in test/e2e/mcp-elicitation.test.ts.
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { AskAnswer, AskUser } from '../../src/shapes/ask.js';
import { parseAnswer, parseForm, SKIP, type Field } from '../../src/peers/mcp/elicit-form.js';
import { elicitForm, type AskOne } from '../../src/peers/mcp/elicit.js';
import { RunningCalls } from '../../src/peers/mcp/running-calls.js';
import { logger } from '../../src/util/log.js';

const fieldOf = (p: Record<string, unknown>, required = true): Field => {
  const r = parseForm({ properties: { f: p }, required: required ? ['f'] : [] });
  if ('error' in r) throw new Error(r.error);
  return r.fields[0];
};

/** Answers the questions in turn with `answers` (null: dismissed); records what was asked. */
function scripted(answers: Array<string | null>): AskOne & { asked: string[] } {
  const asked: string[] = [];
  const fn = async (q: { question: string }): Promise<AskAnswer> => {
    asked.push(q.question);
    const a = answers.shift();
    return a === null || a === undefined ? { answered: false } : { answered: true, answer: a };
  };
  return Object.assign(fn, { asked });
}

describe('parseForm: a bad requested schema is an error naming what is wrong', () => {
  it.each([
    [{ properties: { a: { type: 'string' } }, required: ['b'] }, 'required names fields that are not in properties: b'],
    [{ properties: { a: { type: 'string', enum: [] } } }, 'field "a": it offers no choices'],
    [{ properties: { a: { type: 'integer', minimum: 5, maximum: 1 } } }, 'its minimum (5) is above its maximum (1)'],
    [{ properties: { a: { type: 'string', minLength: 9, maxLength: 2 } } }, 'its minimum (9) is above its maximum (2)'],
    [{ properties: { a: { type: 'string', enum: ['x', 'y'], default: 'z' } } }, 'its default "z" does not fit the field'],
    [{ properties: { a: { type: 'boolean', default: 'yes' } } }, 'its default "yes" does not fit the field'],
  ])('%j', (schema, message) => {
    const r = parseForm(schema);
    expect('error' in r && r.error).toContain(message);
  });
});

describe('parseAnswer: answers checked against the field', () => {
  it('booleans take yes/no in any case', () => {
    const f = fieldOf({ type: 'boolean' });
    expect(parseAnswer(f, 'YES')).toEqual({ ok: true, value: true });
    expect(parseAnswer(f, 'n')).toEqual({ ok: true, value: false });
    expect(parseAnswer(f, 'maybe').ok).toBe(false);
  });

  it('enums match a label or a value; legacy enumNames label the values', () => {
    const f = fieldOf({ type: 'string', enum: ['us', 'eu'], enumNames: ['United States', 'Europe'] });
    expect(parseAnswer(f, 'Europe')).toEqual({ ok: true, value: 'eu' });
    expect(parseAnswer(f, 'us')).toEqual({ ok: true, value: 'us' });
    expect(parseAnswer(f, 'Mars')).toMatchObject({ ok: false, error: expect.stringContaining('pick one of United States, Europe') });
  });

  it('integers and numbers keep to their kind and range', () => {
    const i = fieldOf({ type: 'integer', minimum: 1, maximum: 10 });
    expect(parseAnswer(i, ' 7 ')).toEqual({ ok: true, value: 7 });
    expect(parseAnswer(i, '7.5')).toMatchObject({ ok: false, error: expect.stringContaining('not a whole number') });
    expect(parseAnswer(i, '11')).toMatchObject({ ok: false, error: expect.stringContaining('above the maximum 10') });
    expect(parseAnswer(i, 'seven')).toMatchObject({ ok: false, error: expect.stringContaining('not a number') });
    expect(parseAnswer(fieldOf({ type: 'number' }), '2.5')).toEqual({ ok: true, value: 2.5 });
  });

  it('strings keep to their length and format', () => {
    expect(parseAnswer(fieldOf({ type: 'string', maxLength: 3 }), 'abcd').ok).toBe(false);
    expect(parseAnswer(fieldOf({ type: 'string', format: 'email' }), 'ada@example.com')).toEqual({ ok: true, value: 'ada@example.com' });
    expect(parseAnswer(fieldOf({ type: 'string', format: 'email' }), 'ada').ok).toBe(false);
    expect(parseAnswer(fieldOf({ type: 'string', format: 'uri' }), 'https://example.com/x').ok).toBe(true);
    expect(parseAnswer(fieldOf({ type: 'string', format: 'date' }), '2026-02-30x').ok).toBe(false);
    expect(parseAnswer(fieldOf({ type: 'string', format: 'date' }), '2026-02-03')).toEqual({ ok: true, value: '2026-02-03' });
    expect(parseAnswer(fieldOf({ type: 'string', format: 'date-time' }), '2026-02-03T10:00:00Z').ok).toBe(true);
  });

  it('multi-select takes a comma-separated list of titles or values, within minItems/maxItems', () => {
    const f = fieldOf({
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: {
        anyOf: [
          { const: 'r', title: 'Red' },
          { const: 'g', title: 'Green' },
          { const: 'b', title: 'Blue' },
        ],
      },
    });
    expect(parseAnswer(f, 'Red, b')).toEqual({ ok: true, value: ['r', 'b'] });
    expect(parseAnswer(f, 'Red, Green, Blue')).toMatchObject({ ok: false, error: expect.stringContaining('pick at most 2') });
    expect(parseAnswer(f, 'Pink')).toMatchObject({ ok: false, error: expect.stringContaining('Pink is not among Red, Green, Blue') });
  });

  it('an optional field skipped or left blank takes its default, or is left out; a required one must be answered', () => {
    expect(parseAnswer(fieldOf({ type: 'integer', default: 30 }, false), SKIP)).toEqual({ ok: true, value: 30 });
    expect(parseAnswer(fieldOf({ type: 'string' }, false), '')).toEqual({ ok: true, value: undefined });
    expect(parseAnswer(fieldOf({ type: 'string' }), '').ok).toBe(false);
    expect(parseAnswer(fieldOf({ type: 'string' }), SKIP)).toEqual({ ok: true, value: SKIP });
  });
});

describe('elicitForm', () => {
  const form = (properties: Record<string, unknown>, required: string[] = []) => ({ message: 'Tell me', requestedSchema: { type: 'object' as const, properties: properties as never, required } });

  it('a form without fields is a confirmation: Accept or Decline', async () => {
    expect(await elicitForm('s', form({}), scripted(['Accept']))).toEqual({ action: 'accept', content: {} });
    expect(await elicitForm('s', form({}), scripted(['Decline']))).toEqual({ action: 'decline' });
    expect(await elicitForm('s', form({}), scripted([null]))).toEqual({ action: 'cancel' });
  });

  it('three unusable answers to one field cancel the form', async () => {
    const ask = scripted(['x', 'y', 'z', '1']);
    expect(await elicitForm('s', form({ n: { type: 'integer' } }, ['n']), ask)).toEqual({ action: 'cancel' });
    expect(ask.asked).toHaveLength(3);
  });

  it('a bad schema is an InvalidParams McpError and nobody is asked', async () => {
    const ask = scripted([]);
    await expect(elicitForm('s', form({ n: { type: 'integer', minimum: 2, maximum: 1 } }), ask)).rejects.toBeInstanceOf(McpError);
    expect(ask.asked).toEqual([]);
  });
});

describe('RunningCalls: which chat is asked', () => {
  const log = logger('test');
  const params = { message: 'Sure?', requestedSchema: { type: 'object' as const, properties: { ok: { type: 'boolean' as const } }, required: ['ok'] } };

  it('declines when no call is running, without asking', async () => {
    let asked = 0;
    const ask: AskUser = async () => (asked++, { answered: true, answer: 'Yes' });
    expect(await new RunningCalls().elicit('s', params, ask, new AbortController().signal, log)).toEqual({ action: 'decline' });
    expect(asked).toBe(0);
  });

  it('asks in the chat of the newest running call, with its tool call id; an ended call is no longer a candidate', async () => {
    const calls = new RunningCalls();
    const seen: Array<{ chatId: string; toolCallId?: string }> = [];
    const ask: AskUser = async (chatId, q) => (seen.push({ chatId, toolCallId: q.toolCallId }), { answered: true, answer: 'Yes' });
    const signal = new AbortController().signal;
    calls.add({ chatId: 'a', toolCallId: 't1', signal });
    const second = calls.add({ chatId: 'b', toolCallId: 't2', signal });
    await calls.elicit('s', params, ask, signal, log);
    second.end();
    await calls.elicit('s', params, ask, signal, log);
    expect(seen).toEqual([
      { chatId: 'b', toolCallId: 't2' },
      { chatId: 'a', toolCallId: 't1' },
    ]);
  });

  it('the call ending while its question is open answers cancel', async () => {
    const calls = new RunningCalls();
    const run = calls.add({ chatId: 'a', signal: new AbortController().signal });
    const ask: AskUser = (_c, _q, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    const pending = calls.elicit('s', params, ask, new AbortController().signal, log);
    run.end();
    expect(await pending).toEqual({ action: 'cancel' });
  });

  it('URL mode is refused with an McpError', async () => {
    const calls = new RunningCalls();
    calls.add({ chatId: 'a', signal: new AbortController().signal });
    const url = { mode: 'url' as const, message: 'Sign in', elicitationId: 'e1', url: 'https://example.com' };
    await expect(calls.elicit('s', url, async () => ({ answered: false }), new AbortController().signal, log)).rejects.toBeInstanceOf(McpError);
  });
});

/**
 * The ACP line cap (src/server/acp/line-cap.ts): lines up to the cap pass whole, whatever the
 * chunking; a longer one is dropped as it streams and answered with -32600 for its id (read from
 * its first bytes when it is a top-level member there), or null.
 */
import { describe, expect, it } from 'vitest';
import { cappedLines, leadingId, leadingShape } from '../../src/server/acp/line-cap.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

async function run(chunks: string[], max: number): Promise<{ passed: string; answered: string }> {
  let answered = '';
  const out = new WritableStream<Uint8Array>({ write: (c) => void (answered += dec.decode(c)) });
  const input = new ReadableStream<Uint8Array>({
    start(c) {
      for (const x of chunks) c.enqueue(enc.encode(x));
      c.close();
    },
  });
  const framed = cappedLines(out, input, max);
  let passed = '';
  for await (const c of framed.input as unknown as AsyncIterable<Uint8Array>) passed += dec.decode(c);
  // Let the queued answer writes finish.
  await new Promise((r) => setTimeout(r, 0));
  return { passed, answered };
}

describe('cappedLines', () => {
  it('passes lines up to the cap whole, across chunk boundaries', async () => {
    const r = await run(['{"a":1}\n{"b"', ':2}\n', '{"c":3}'], 8);
    expect(r.passed).toBe('{"a":1}\n{"b":2}\n{"c":3}');
    expect(r.answered).toBe('');
  });

  it('drops a longer line, answers it with its id, and goes on with the next', async () => {
    const long = `{"jsonrpc":"2.0","id":7,"method":"x","params":{"t":"${'y'.repeat(100)}"}}`;
    const r = await run([long.slice(0, 30), long.slice(30), '\n{"ok":1}\n'], 40);
    expect(r.passed).toBe('{"ok":1}\n');
    const answer = JSON.parse(r.answered.trim());
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600, data: { maxBytes: 40, bytes: long.length } } });
  });
});

describe('cappedLines, over-long lines', () => {
  it('many over-long lines in a row: each answered once, and the valid one after them passes', async () => {
    const long = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"x","params":{"t":"${'y'.repeat(60)}"}}`;
    const r = await run([`${long(1)}\n${long(2)}\n`, long(3).slice(0, 50), `${long(3).slice(50)}\n{"ok":1}\n`], 40);
    expect(r.passed).toBe('{"ok":1}\n');
    expect(
      r.answered
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: number }).id),
    ).toEqual([1, 2, 3]);
  });

  it('a line of exactly the cap, its newline in the next chunk, passes whole', async () => {
    const line = `{"t":"${'y'.repeat(32)}"}`;
    expect(line.length).toBe(40);
    const r = await run([line, '\n{"ok":1}\n'], 40);
    expect(r.passed).toBe(`${line}\n{"ok":1}\n`);
    expect(r.answered).toBe('');
  });

  it("an over-long answer of the client takes the error's place on the way in; nothing is sent back", async () => {
    const answer = `{"jsonrpc":"2.0","id":2,"result":{"content":"${'y'.repeat(100)}"}}`;
    const r = await run([answer.slice(0, 20), `${answer.slice(20)}\n`, '{"ok":1}\n'], 40);
    expect(r.answered).toBe('');
    const [failed, next] = r.passed.trim().split('\n');
    expect(JSON.parse(failed!)).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32600, data: { maxBytes: 40, bytes: answer.length } } });
    expect(next).toBe('{"ok":1}');
  });
});

describe('leadingShape', () => {
  it('tells a request from an answer by its members before the cut', () => {
    expect(leadingShape('{"jsonrpc":"2.0","id":3,"result":{"content":"xx')).toEqual({ id: 3, kind: 'answer' });
    expect(leadingShape('{"jsonrpc":"2.0","id":"e","error":{"code":1')).toEqual({ id: 'e', kind: 'answer' });
    expect(leadingShape('{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"x')).toEqual({ id: 3, kind: 'request' });
    expect(leadingShape('{"jsonrpc":"2.0","id":3,"params":{"x')).toEqual({ id: 3, kind: 'unknown' });
  });
});

describe('leadingId', () => {
  it('finds a top-level id after other members, skipping nested ones', () => {
    expect(leadingId('{"jsonrpc":"2.0","id":"a-1","method":"m"')).toBe('a-1');
    expect(leadingId('{"params":{"id":5,"x":[1,{"id":6}]},"id":9,')).toBe(9);
    expect(leadingId('{ "method" : "m" , "id" : -3 }')).toBe(-3);
  });

  it('is null when the id is not there, not top-level, or cut off', () => {
    expect(leadingId('{"method":"m","params":{"id":5')).toBeNull();
    expect(leadingId('{"method":"m"}')).toBeNull();
    expect(leadingId('[1,2]')).toBeNull();
    expect(leadingId('{"id":{"x":1},')).toBeNull();
    expect(leadingId('{"method":"a\\"b","id":2,')).toBe(2);
  });
});

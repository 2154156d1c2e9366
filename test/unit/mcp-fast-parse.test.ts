/**
 * fast-parse.ts against the SDK's own checks: every message and result gives what the SDK's
 * ReadBuffer and CallToolResultSchema give, and every bad one fails the way they fail.
 */
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { callToolResultSchema, FastReadBuffer, parseCallToolResult } from '../../src/peers/mcp/fast-parse.js';
import { TrackedStdioTransport } from '../../src/peers/mcp/transport.js';

/** Every line through a buffer: the message, or the error's class and message. */
function readAll(buf: ReadBuffer, lines: string[]): unknown[] {
  const out: unknown[] = [];
  for (const line of lines) {
    buf.append(Buffer.from(`${line}\n`));
    try {
      out.push(buf.readMessage());
    } catch (e) {
      out.push({ threw: (e as Error).constructor.name, message: (e as Error).message });
    }
  }
  return out;
}

const text = (s: string) => ({ type: 'text', text: s });

const GOOD_LINES = [
  { jsonrpc: '2.0', id: 1, result: { content: [text('hi')] } },
  { jsonrpc: '2.0', id: 'a-1', result: {} },
  { jsonrpc: '2.0', id: 2, result: { content: [], isError: true, structuredContent: { n: 1 } } },
  { jsonrpc: '2.0', id: 3, result: { _meta: { progressToken: 3 }, tools: [] } },
  { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'Method not found' } },
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 0.5 } },
  { jsonrpc: '2.0', id: 5, method: 'roots/list' },
].map((m) => JSON.stringify(m));

const BAD_LINES = [
  'this is not json',
  '{"truncated": ',
  JSON.stringify({ valid: 'json', but: 'not json-rpc' }),
  JSON.stringify({ jsonrpc: '1.0', id: 1, result: {} }),
  JSON.stringify({ jsonrpc: '2.0', id: 1.5, result: {} }),
  JSON.stringify({ jsonrpc: '2.0', id: null, result: {} }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, result: [] }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'text' }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, result: { _meta: 'not an object' } }),
  JSON.stringify({ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'both' } }),
  JSON.stringify([{ jsonrpc: '2.0', id: 1, result: {} }]),
];

describe('FastReadBuffer', () => {
  it('reads every message as the SDK ReadBuffer does, including \\r\\n line ends', () => {
    const lines = [...GOOD_LINES, `${GOOD_LINES[0]}\r`];
    const fast = readAll(new FastReadBuffer(), lines);
    expect(fast).toEqual(readAll(new ReadBuffer(), lines));
    expect(fast.every((m) => m !== null && !(m as { threw?: string }).threw)).toBe(true);
  });

  it('rejects every malformed line as the SDK does (SyntaxError or ZodError), and reads on after it', () => {
    const lines = [...BAD_LINES, GOOD_LINES[0]];
    const fast = readAll(new FastReadBuffer(), lines);
    expect(fast).toEqual(readAll(new ReadBuffer(), lines));
    expect(fast.slice(0, -1).map((r) => (r as { threw: string }).threw)).toEqual(BAD_LINES.map((_, i) => (i < 2 ? 'SyntaxError' : 'ZodError')));
    expect(fast.at(-1)).toEqual(JSON.parse(GOOD_LINES[0]));
  });

  it('joins messages split across chunks and splits several in one chunk', () => {
    const buf = new FastReadBuffer();
    const all = `${GOOD_LINES[0]}\n${GOOD_LINES[1]}\n${GOOD_LINES[4]}\n`;
    const got: unknown[] = [];
    for (let i = 0; i < all.length; i += 7) {
      buf.append(Buffer.from(all.slice(i, i + 7)));
      for (let m = buf.readMessage(); m !== null; m = buf.readMessage()) got.push(m);
    }
    expect(got).toEqual([GOOD_LINES[0], GOOD_LINES[1], GOOD_LINES[4]].map((l) => JSON.parse(l)));
    expect(buf.readMessage()).toBeNull();
  });

  it('keeps a multi-byte character split across chunks whole', () => {
    const buf = new FastReadBuffer();
    const bytes = Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [text('héllo ✓')] } })}\n`);
    const cut = bytes.indexOf(Buffer.from('✓')) + 1;
    buf.append(bytes.subarray(0, cut));
    expect(buf.readMessage()).toBeNull();
    buf.append(bytes.subarray(cut));
    expect(buf.readMessage()).toEqual({ jsonrpc: '2.0', id: 1, result: { content: [text('héllo ✓')] } });
  });

  it('refuses to grow past its limit with the SDK error, then starts empty', () => {
    const buf = new FastReadBuffer(64);
    buf.append(Buffer.from('x'.repeat(40)));
    expect(() => buf.append(Buffer.from('y'.repeat(40)))).toThrow('ReadBuffer exceeded maximum size of 64 bytes');
    buf.append(Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: 9, result: {} })}\n`));
    expect(buf.readMessage()).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });

  it('is what the stdio transport reads with (if this fails, the SDK renamed its buffer field)', () => {
    const t = new TrackedStdioTransport({ command: process.execPath });
    expect((t as unknown as { _readBuffer: unknown })._readBuffer).toBeInstanceOf(FastReadBuffer);
  });
});

describe('parseCallToolResult and callToolResultSchema', () => {
  const results: unknown[] = [
    { content: [text('Echo: hi')] },
    { content: [text('a'), text('b')], isError: true },
    { content: [] },
    { content: [{ type: 'text', text: 'x', annotations: { audience: ['user'] } }] },
    { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }, text('and text')] },
    { content: [{ type: 'resource', resource: { uri: 'file:///a', text: 'A' } }] },
    { content: [text('s')], structuredContent: { sum: 3 } },
    { structuredContent: { sum: 3 } },
    { content: [text('m')], _meta: { trace: 1 } },
  ];

  it('gives what CallToolResultSchema gives for every valid result', () => {
    for (const r of results) {
      expect(callToolResultSchema.parse(r)).toEqual(CallToolResultSchema.parse(r));
      expect(parseCallToolResult(r)).toEqual({ success: true, data: CallToolResultSchema.parse(r) });
    }
  });

  const invalid: unknown[] = [
    null,
    'text',
    { content: 'not an array' },
    { content: [{ type: 'text' }] },
    { content: [{ type: 'text', text: 5 }] },
    { content: [{ type: 'video', url: 'x' }] },
    { content: [text('x')], isError: 'yes' },
    { content: [text('x')], structuredContent: 'not an object' },
    { content: [text('x')], _meta: 'not an object' },
  ];

  it('fails every invalid result with the issues CallToolResultSchema reports', () => {
    for (const r of invalid) {
      const sdk = CallToolResultSchema.safeParse(r);
      expect(sdk.success).toBe(false);
      for (const fast of [callToolResultSchema.safeParse(r), parseCallToolResult(r)]) {
        expect(fast.success).toBe(false);
        expect(fast.error).toBeInstanceOf(ZodError);
        expect(fast.error!.issues.map((i) => [i.code, i.path, i.message])).toEqual(sdk.error!.issues.map((i) => [i.code, i.path, i.message]));
      }
    }
  });
});

describe('FastReadBuffer: nesting depth', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('turns a response nested 200,000 arrays deep into an error response for its call, and drops such a notification', () => {
    const out = readAll(new FastReadBuffer(), [
      `{"jsonrpc":"2.0","id":"patchbay-1","result":{"content":[],"structuredContent":{"a":${deep(200_000)}}}}`,
      `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":${deep(300)}}}`,
      '{"jsonrpc":"2.0","id":2,"result":{}}',
    ]);
    expect(out[0]).toEqual({ jsonrpc: '2.0', id: 'patchbay-1', error: { code: -32602, message: expect.stringMatching(/nested deeper than \d+ levels/) } });
    expect(out[1]).toEqual({ threw: 'Error', message: expect.stringMatching(/nested deeper than \d+ levels; ignored/) });
    expect(out[2]).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });
});

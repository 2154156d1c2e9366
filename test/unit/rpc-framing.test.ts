import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import type { Message } from 'vscode-jsonrpc';
import { FramedReader, type ProtocolFault, type ReaderOptions } from '../../src/rpc/framing.js';
import { FramedWriter } from '../../src/rpc/writer.js';

function setup(opts: ReaderOptions = {}) {
  const input = new PassThrough();
  const faults: ProtocolFault[] = [];
  const msgs: Message[] = [];
  const reader = new FramedReader(input, (f) => faults.push(f), opts);
  reader.listen((m) => msgs.push(m));
  return { input, faults, msgs, reader };
}
const methods = (msgs: Message[]) => msgs.map((m) => (m as unknown as { method?: string; id?: unknown }).method ?? (m as unknown as { id: unknown }).id);
const frame = (body: string, extra = '') => `Content-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const tick = () => new Promise((r) => setImmediate(r));

describe('FramedReader', () => {
  it('reads messages split at every byte and several in one chunk', async () => {
    const { input, msgs } = setup();
    const one = frame('{"jsonrpc":"2.0","method":"a","params":{"s":"héllo"}}');
    const two = frame('{"jsonrpc":"2.0","id":1,"method":"b"}');
    const bytes = Buffer.from(one + two);
    for (let i = 0; i < bytes.length; i++) input.write(bytes.subarray(i, i + 1));
    input.write(Buffer.from(one + two));
    await tick();
    expect(msgs.map((m) => (m as unknown as { method: string }).method)).toEqual(['a', 'b', 'a', 'b']);
    expect((msgs[0] as unknown as { params: { s: string } }).params.s).toBe('héllo');
  });

  it('reports a missing Content-Length and keeps reading', async () => {
    const { input, faults, msgs } = setup();
    input.write('X-Foo: 1\r\n\r\n');
    input.write(frame('{"jsonrpc":"2.0","method":"ok"}'));
    await tick();
    expect(faults[0]).toMatchObject({ code: -32700, message: expect.stringMatching(/Content-Length/) });
    expect(msgs).toHaveLength(1);
  });

  it('skips the whole body of a frame with a malformed header line, then reads the next ones', async () => {
    const { input, faults, msgs } = setup();
    const body = '{"jsonrpc":"2.0","id":9,"method":"bad"}';
    input.write(`Content-Length: ${body.length}\r\nBogus\r\n\r\n${body}`);
    for (const m of ['a', 'b', 'c']) input.write(frame(`{"jsonrpc":"2.0","method":"${m}"}`));
    await tick();
    expect(faults).toEqual([{ code: -32700, message: expect.stringMatching(/Malformed header/), id: 9 }]);
    expect(msgs.map((m) => (m as unknown as { method: string }).method)).toEqual(['a', 'b', 'c']);
  });

  it('answers a wrong charset with the id of the message', async () => {
    const { input, faults, msgs } = setup();
    input.write(frame('{"jsonrpc":"2.0","id":"x1","method":"m"}', 'Content-Type: application/vscode-jsonrpc; charset=utf-16\r\n'));
    await tick();
    expect(faults).toEqual([{ code: -32700, message: expect.stringMatching(/utf-16/), id: 'x1' }]);
    expect(msgs).toHaveLength(0);
  });

  it('classifies invalid JSON-RPC shapes as -32600', async () => {
    const { input, faults } = setup();
    for (const body of ['[1,2]', '"str"', '{"jsonrpc":"1.0","method":"m"}', '{"jsonrpc":"2.0","id":{},"method":"m"}', '{"jsonrpc":"2.0","id":4}']) input.write(frame(body));
    await tick();
    expect(faults.map((f) => f.code)).toEqual([-32600, -32600, -32600, -32600, -32600]);
    expect(faults[4].id).toBe(4);
  });
});

describe('FramedReader: linear in the bytes received', () => {
  /** Feeds one frame with a `mb` MB body in 64 KB reads straight to the reader; returns the bytes it copied. */
  function feedBig(mb: number): { copied: number; total: number; msgs: Message[] } {
    const faults: ProtocolFault[] = [];
    const msgs: Message[] = [];
    const input = new PassThrough();
    const reader = new FramedReader(input, (f) => faults.push(f));
    reader.listen((m) => msgs.push(m));
    const filler = 'x'.repeat(mb * 1024 * 1024);
    const bytes = Buffer.from(frame(`{"jsonrpc":"2.0","method":"big","params":{"s":"${filler}"}}`) + frame('{"jsonrpc":"2.0","id":1,"method":"next"}'));
    // Straight to the 'data' listener: no stream buffering in between, so every read is 64 KB.
    for (let i = 0; i < bytes.length; i += 65536) input.emit('data', bytes.subarray(i, i + 65536));
    expect(faults).toEqual([]);
    return { copied: reader.copiedBytes, total: bytes.length, msgs };
  }

  it('copies a 40 MB message sent in 64 KB reads about once, and reads the request after it', () => {
    const big = feedBig(40);
    expect(methods(big.msgs)).toEqual(['big', 'next']);
    // The old reader joined the whole buffer on every read: ~640 reads × 20 MB on average ≈ 13 GB copied.
    expect(big.copied).toBeLessThanOrEqual(big.total + 65536);
    const small = feedBig(10);
    // Work grows with the bytes, not with their square: 4× the bytes, at most ~4× the copying.
    expect(big.copied / small.copied).toBeLessThan(4.5);
  });

  it('finds a header terminator split across reads, byte by byte', () => {
    const { input, msgs, reader } = setup();
    const bytes = Buffer.from(frame('{"jsonrpc":"2.0","id":1,"method":"a"}'));
    for (let i = 0; i < bytes.length; i++) input.emit('data', bytes.subarray(i, i + 1));
    expect(methods(msgs)).toEqual(['a']);
    // Only the short header is ever joined; the body's bytes are joined once.
    expect(reader.copiedBytes).toBeLessThan(bytes.length * 30);
  });
});

describe('FramedReader: junk before a frame', () => {
  const req = (id: number) => frame(`{"jsonrpc":"2.0","id":${id},"method":"m${id}"}`);

  it('garbage and a frame in one write: one -32700 with id null, then the request', async () => {
    const { input, faults, msgs } = setup();
    input.write(`garbage${req(1)}`);
    await tick();
    expect(faults).toEqual([{ code: -32700, message: expect.stringMatching(/junk/), id: null }]);
    expect(methods(msgs)).toEqual(['m1']);
  });

  it('a stray CRLF before a frame is skipped without an error', async () => {
    const { input, faults, msgs } = setup();
    input.write(`\r\n${req(1)}\r\n`);
    input.write(req(2));
    await tick();
    expect(faults).toEqual([]);
    expect(methods(msgs)).toEqual(['m1', 'm2']);
  });

  it('junk between two frames, a lower-case header and a Content-Type before the length', async () => {
    const { input, faults, msgs } = setup();
    const body = '{"jsonrpc":"2.0","id":3,"method":"m3"}';
    input.write(`${req(1)}%%junk%%\r\nmore junk${req(2)}noise\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    await tick();
    expect(methods(msgs)).toEqual(['m1', 'm2', 'm3']);
    expect(faults.map((f) => [f.code, f.id])).toEqual([
      [-32700, null],
      [-32700, null],
    ]);
  });

  it('junk that mentions the header name without a colon is not taken for it', async () => {
    const { input, faults, msgs } = setup();
    input.write(`my content-length is wrong ${req(6)}`);
    await tick();
    expect(faults).toHaveLength(1);
    expect(methods(msgs)).toEqual(['m6']);
  });

  it('a Content-Length split across reads after long junk is still found', async () => {
    const { input, faults, msgs } = setup();
    const r = req(5);
    input.emit('data', Buffer.from(`${'z'.repeat(10_000)}${r.slice(0, 9)}`));
    input.emit('data', Buffer.from(r.slice(9)));
    expect(faults).toHaveLength(1);
    expect(methods(msgs)).toEqual(['m5']);
  });
});

describe('FramedReader: nesting depth', () => {
  const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);

  it('answers a request whose params nest too deep with -32602 and drops such a notification', async () => {
    const dropped: string[] = [];
    const { input, faults, msgs } = setup({ maxDepth: 100, onDropped: (w) => dropped.push(w) });
    input.write(frame(`{"jsonrpc":"2.0","id":4,"method":"deep","params":${deep(20_000)}}`));
    input.write(frame(`{"jsonrpc":"2.0","method":"deepNote","params":${deep(101)}}`));
    input.write(frame(`{"jsonrpc":"2.0","id":5,"method":"ok","params":${deep(99)}}`));
    await tick();
    expect(faults).toEqual([{ code: -32602, message: 'params nested deeper than 100 levels', id: 4 }]);
    expect(dropped).toEqual([expect.stringMatching(/deepNote.*nested deeper than 100/)]);
    expect(methods(msgs)).toEqual(['ok']);
  });

  it('turns a response whose result nests too deep into an error response for its request', async () => {
    const { input, msgs } = setup({ maxDepth: 10 });
    input.write(frame(`{"jsonrpc":"2.0","id":6,"result":${deep(11)}}`));
    await tick();
    expect(msgs).toEqual([{ jsonrpc: '2.0', id: 6, error: { code: -32602, message: 'result nested deeper than 10 levels' } }]);
  });
});

describe('FramedWriter', () => {
  it('writes each message as one framed write, in order', async () => {
    const out = new PassThrough();
    const writes: Buffer[] = [];
    out.on('data', (d: Buffer) => writes.push(d));
    const w = new FramedWriter(out);
    await Promise.all([w.write({ jsonrpc: '2.0', method: 'a', params: { t: 'é' } } as Message), w.write({ jsonrpc: '2.0', method: 'b' } as Message)]);
    expect(writes).toHaveLength(2);
    const first = writes[0].toString('utf8');
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'a', params: { t: 'é' } });
    expect(first).toBe(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    expect(writes[1].toString()).toContain('"method":"b"');
  });

  it('notify writes one frame, in order with write(), and is read back by FramedReader', async () => {
    const out = new PassThrough();
    const writes: Buffer[] = [];
    out.on('data', (d: Buffer) => writes.push(d));
    const w = new FramedWriter(out);
    const { input, msgs } = setup();
    out.pipe(input);
    w.notify('first', { t: 'héllo ✓' });
    const second = w.write({ jsonrpc: '2.0', id: 1, result: null } as Message);
    w.notify('third', { n: 3 });
    await second;
    await tick();
    expect(writes).toHaveLength(3);
    const body = JSON.stringify({ jsonrpc: '2.0', method: 'first', params: { t: 'héllo ✓' } });
    expect(writes[0].toString('utf8')).toBe(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    expect(msgs).toEqual([
      { jsonrpc: '2.0', method: 'first', params: { t: 'héllo ✓' } },
      { jsonrpc: '2.0', id: 1, result: null },
      { jsonrpc: '2.0', method: 'third', params: { n: 3 } },
    ]);
  });

  it('a notify the stream refuses reaches onError instead of throwing', async () => {
    const out = new PassThrough();
    const w = new FramedWriter(out);
    const errors: Error[] = [];
    w.onError(([e]) => errors.push(e));
    out.destroy();
    expect(() => w.notify('late', {})).not.toThrow();
    await tick();
    expect(errors.length).toBeGreaterThan(0);
    expect(errors[0].message).toMatch(/destroyed|write after/i);
  });
});

import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import type { Message } from 'vscode-jsonrpc';
import { FramedReader, type ProtocolFault } from '../../src/rpc/framing.js';
import { FramedWriter } from '../../src/rpc/writer.js';

function setup() {
  const input = new PassThrough();
  const faults: ProtocolFault[] = [];
  const msgs: Message[] = [];
  const reader = new FramedReader(input, (f) => faults.push(f));
  reader.listen((m) => msgs.push(m));
  return { input, faults, msgs };
}
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

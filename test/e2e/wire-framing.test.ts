import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EcaProc, tempDir, useEcaProcs, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();
const track = useEcaProcs();
function start(): EcaProc {
  return track(new EcaProc({ home: scratch(tempDir()), config: { chat: { generateTitles: false } } }));
}
const frame = (msg: Record<string, unknown>) => {
  const body = JSON.stringify({ jsonrpc: '2.0', ...msg });
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

describe('editor port: big messages, junk and deep nesting over real stdio', () => {
  it('answers a request sent right after an ignored 40 MB notification', async () => {
    const p = start();
    await p.initialize(scratch(workspace()));
    p.writeRaw(frame({ method: 'x/ignored', params: { blob: 'y'.repeat(40 * 1024 * 1024) } }));
    p.writeRaw(frame({ id: 900, method: 'chat/list', params: {} }));
    const res = await p.waitFor((m) => m.id === 900, 'the answer after 40 MB', 60_000);
    expect(res.error).toBeUndefined();
    expect(res.result).toBeDefined();
  }, 90_000);

  // Not a speed target (bench/framing.ts has that): how the server's own CPU time grows with the
  // size of a message. Linear reading costs about the same per MB at 12 and 48 MB; the old
  // reader, which re-joined its whole buffer on every pipe read, cost 4-9 times more per MB.
  it.skipIf(process.platform !== 'linux')(
    'reading a message costs CPU linear in its size (per MB, 48 MB within 2.5x of 12 MB)',
    async () => {
      const p = start();
      await p.initialize(scratch(workspace()));
      await p.request('chat/list', {});
      const pid = p.child.pid!;
      const cpuTicks = () => {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        // utime and stime are fields 14 and 15 of stat, 12 and 13 after the command name.
        return Number(fields[11]) + Number(fields[12]);
      };
      const cost = async (mb: number, id: number) => {
        const before = cpuTicks();
        p.writeRaw(frame({ method: 'x/ignored', params: { blob: 'y'.repeat(mb * 1024 * 1024) } }));
        p.writeRaw(frame({ id, method: 'chat/list', params: {} }));
        await p.waitFor((m) => m.id === id, `the answer after ${mb} MB`, 80_000);
        return (cpuTicks() - before) / mb;
      };
      const small = await cost(12, 910);
      const big = await cost(48, 911);
      expect(big / Math.max(small, 0.05)).toBeLessThan(2.5);
    },
    120_000,
  );

  it('garbage and a frame in one write: one -32700 (id null), then the request is answered', async () => {
    const p = start();
    p.writeRaw(`garbage${frame({ id: 901, method: 'chat/list', params: {} })}`);
    const res = await p.waitFor((m) => m.id === 901, 'answer after junk');
    // Before initialize: -32002, which proves the request was read and dispatched.
    expect(res.error?.code).toBe(-32002);
    const junk = p.messages.filter((m) => m.id === null && m.error?.code === -32700);
    expect(junk).toHaveLength(1);
    expect(junk[0].error?.message).toMatch(/junk/);
  });

  it('a stray CRLF before a frame: the request is answered', async () => {
    const p = start();
    p.writeRaw(`\r\n${frame({ id: 902, method: 'chat/list', params: {} })}`);
    expect((await p.waitFor((m) => m.id === 902)).error?.code).toBe(-32002);
  });

  it('junk between two frames: both are answered', async () => {
    const p = start();
    p.writeRaw(`${frame({ id: 903, method: 'chat/list', params: {} })}@@junk@@\r\n${frame({ id: 904, method: 'chat/list', params: {} })}`);
    expect((await p.waitFor((m) => m.id === 903)).error?.code).toBe(-32002);
    expect((await p.waitFor((m) => m.id === 904)).error?.code).toBe(-32002);
  });

  it('params nesting 20,000 objects get -32602 naming the limit; the server keeps serving', async () => {
    const p = start();
    await p.initialize(scratch(workspace()));
    const n = 20_000;
    const deep = '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    const raw = (s: string) => `Content-Length: ${Buffer.byteLength(s)}\r\n\r\n${s}`;
    p.writeRaw(raw(`{"jsonrpc":"2.0","id":905,"method":"chat/prompt","params":${deep}}`));
    p.writeRaw(raw(`{"jsonrpc":"2.0","method":"chat/promptStop","params":${deep}}`));
    const res = await p.waitFor((m) => m.id === 905, 'answer to the deep request');
    expect(res.error?.code).toBe(-32602);
    expect(res.error?.message).toMatch(/params nested deeper than \d+ levels/);
    const after = await p.request('chat/list', {});
    expect(after.result).toBeDefined();
    expect(p.stderr).toMatch(/dropped notification chat\/promptStop: params nested deeper/);
  });
});

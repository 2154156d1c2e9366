/** PendingCalls (core/pending-calls.ts): one outcome per call, shared timer and abort listeners. */
import { describe, expect, it } from 'vitest';
import { PendingCalls, type EndReason } from '../../src/shapes/pending-calls.js';
import { textResult, type ToolResult } from '../../src/shapes/tool.js';

const text = (r: ToolResult) => (r.outputs[0] as { text: string }).text;

function calls() {
  const ended: Array<[string, EndReason, number, string | undefined]> = [];
  const pc = new PendingCalls<string>({
    ended: (tool, reason, ms, data) => {
      ended.push([tool, reason, ms, data]);
      return textResult(`${tool} ${reason} (${data})`, true);
    },
  });
  return { pc, ended };
}

describe('PendingCalls', () => {
  it('ends every call of an aborted signal, even when telling the peer about one of them throws', async () => {
    const { pc, ended } = calls();
    const ac = new AbortController();
    const told: string[] = [];
    const start = (id: string) =>
      pc.start({
        id,
        tool: `t${id}`,
        timeoutMs: 60_000,
        signal: ac.signal,
        data: `data-${id}`,
        cancel: (reason) => {
          told.push(`${id}:${reason}`);
          if (id === '1') throw new Error('peer gone');
        },
      });
    const other = new AbortController();
    const kept = pc.start({ id: 'x', tool: 'tx', timeoutMs: 60_000, signal: other.signal, cancel: () => {}, data: 'x' });
    const results = [start('1'), start('2'), start('3')];
    ac.abort();
    expect((await Promise.all(results)).map(text)).toEqual(['t1 cancelled (data-1)', 't2 cancelled (data-2)', 't3 cancelled (data-3)']);
    expect(told).toEqual(['1:cancelled', '2:cancelled', '3:cancelled']);
    expect(ended.map((e) => e[3])).toEqual(['data-1', 'data-2', 'data-3']);
    // A call on another signal is untouched, and a late result for an ended call is refused.
    expect(pc.isPending('x')).toBe(true);
    expect(pc.finish('2', textResult('late'))).toBe(false);
    expect(pc.wasSettled('2')).toBe(true);
    expect(pc.finish('x', textResult('ok'))).toBe(true);
    expect(text(await kept)).toBe('ok');
    expect(pc.size).toBe(0);
  });

  it('times calls out in deadline order with one timer, passing their data', async () => {
    const { pc, ended } = calls();
    const signal = new AbortController().signal;
    const slow = pc.start({ id: 'slow', tool: 'slow', timeoutMs: 120, signal, cancel: () => {}, data: 's' });
    const fast = pc.start({ id: 'fast', tool: 'fast', timeoutMs: 40, signal, cancel: () => {}, data: 'f' });
    expect(text(await fast)).toBe('fast timeout (f)');
    expect(pc.isPending('slow')).toBe(true);
    expect(text(await slow)).toBe('slow timeout (s)');
    expect(ended.map(([tool, reason, ms]) => [tool, reason, ms])).toEqual([
      ['fast', 'timeout', 40],
      ['slow', 'timeout', 120],
    ]);
  });

  it('failAll settles every pending call with a result built from its tool and data', async () => {
    const { pc } = calls();
    const signal = new AbortController().signal;
    const a = pc.start({ id: 'a', tool: 'ta', timeoutMs: 60_000, signal, cancel: () => {}, data: 'A' });
    const b = pc.start({ id: 'b', tool: 'tb', timeoutMs: 60_000, signal, cancel: () => {}, data: 'B' });
    pc.failAll((tool, data) => textResult(`${tool}/${data} gone`, true));
    expect([text(await a), text(await b)]).toEqual(['ta/A gone', 'tb/B gone']);
    expect(pc.data('a')).toBeUndefined();
  });

  it('a held call does not time out; released, it gets its whole timeout again', async () => {
    const { pc, ended } = calls();
    let outcome: string | undefined;
    void pc.start({ id: 'h', tool: 'th', timeoutMs: 30, signal: new AbortController().signal, cancel: () => {}, data: 'h' }).then((r) => (outcome = text(r)));
    const release = pc.hold('h');
    // Well past the 30 ms deadline: still pending while held.
    await new Promise((r) => setTimeout(r, 120));
    expect(pc.isPending('h')).toBe(true);
    release();
    release(); // a second release is a no-op
    // It times out in the end (a generous deadline: only that it happens is checked).
    for (let i = 0; i < 100 && outcome === undefined; i++) await new Promise((r) => setTimeout(r, 50));
    expect(outcome).toBe('th timeout (h)');
    expect(ended).toEqual([['th', 'timeout', 30, 'h']]);
  });
});

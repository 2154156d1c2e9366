/** The one place a chat's tool calls wait for the user (src/core/tool-calls/approvals.ts). */
import { describe, expect, it } from 'vitest';
import { Approvals } from '../../src/core/tool-calls/approvals.js';

describe('Approvals', () => {
  it('an answer reaches the question with that tool call id, once', async () => {
    const a = new Approvals();
    const one = a.ask('t1');
    const two = a.ask('t2');
    expect(a.respond('t2', { approved: true, saveForSession: true })).toBe(true);
    expect(await two).toEqual({ approved: true, saveForSession: true });
    expect(a.respond('t2', { approved: false, reason: 'user' })).toBe(false);
    expect(a.respond('nope', { approved: true })).toBe(false);
    expect(a.size).toBe(1);
    a.respond('t1', { approved: false, reason: 'user' });
    expect(await one).toEqual({ approved: false, reason: 'user' });
  });

  it('settleAll answers every open question as stopped', async () => {
    const a = new Approvals();
    const asked = [a.ask('t1'), a.ask('t2')];
    a.settleAll();
    expect(await Promise.all(asked)).toEqual([
      { approved: false, reason: 'stopped' },
      { approved: false, reason: 'stopped' },
    ]);
    expect(a.size).toBe(0);
  });

  it('asking with an aborted signal is answered stopped at once, and nothing waits', async () => {
    const a = new Approvals();
    const ac = new AbortController();
    ac.abort();
    expect(await a.ask('t1', ac.signal)).toEqual({ approved: false, reason: 'stopped' });
    expect(a.size).toBe(0);
  });
});

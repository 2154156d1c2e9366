/**
 * src/util/deadline.ts: a deadline is an explicit timer under its parent signals. It fires after
 * its time even while the garbage collector runs (Node 20's `AbortSignal.any` over an
 * `AbortSignal.timeout` does not: issue 31 finding 4), follows its parents, and once cleared
 * neither fires nor keeps a listener on a parent.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { deadline, msFromEnv, underDeadline } from '../../src/util/deadline.js';

/** The engine's gc(), without starting node with --expose-gc. */
function gcFunction(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Resolves with the signal's reason once it aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

describe('deadline', () => {
  it('fires after its time with a TimeoutError, even when all that holds it is a listener and the collector runs', async () => {
    const gc = gcFunction();
    const parent = new AbortController();
    // Only the listener's promise is kept: the deadline object itself is dropped at once.
    const fired = aborted(deadline(30, parent.signal).signal);
    let done = false;
    void fired.then(() => (done = true));
    // Collect until it fires (the test's own timeout fails it if it never does).
    while (!done) {
      gc();
      await new Promise<void>((r) => setImmediate(r));
    }
    const reason = (await fired) as DOMException;
    expect(reason.name).toBe('TimeoutError');
    expect(reason.message).toMatch(/timed out after 30 ms/);
  });

  it('says whether the time ran out', async () => {
    const d = deadline(1);
    expect(d.expired).toBe(false);
    await aborted(d.signal);
    expect(d.expired).toBe(true);
  });

  it('follows a parent that aborts first, with its reason; not expired', async () => {
    const a = new AbortController();
    const b = new AbortController();
    const d = deadline(60_000, undefined, a.signal, b.signal);
    const why = new Error('stopped');
    b.abort(why);
    expect(await aborted(d.signal)).toBe(why);
    expect(d.expired).toBe(false);
  });

  it('is aborted at once under a parent that already is', () => {
    const a = new AbortController();
    a.abort('gone');
    const d = deadline(60_000, a.signal);
    expect(d.signal.aborted).toBe(true);
    expect(d.signal.reason).toBe('gone');
  });

  it('once cleared, neither the time nor a parent aborts it, and the parent keeps no listener', () => {
    vi.useFakeTimers();
    onTestFinished(() => void vi.useRealTimers());
    const parent = new AbortController();
    let added = 0;
    let removed = 0;
    const add = parent.signal.addEventListener.bind(parent.signal);
    const remove = parent.signal.removeEventListener.bind(parent.signal);
    parent.signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
    parent.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (removed++, remove(...args))) as typeof remove;
    const d = deadline(1, parent.signal);
    d.clear();
    d.clear();
    expect([added, removed]).toEqual([1, 1]);
    parent.abort();
    vi.advanceTimersByTime(60_000);
    expect(d.signal.aborted).toBe(false);
    expect(d.expired).toBe(false);
  });

  it('underDeadline clears it when the work settles, either way', async () => {
    let seen: AbortSignal | undefined;
    expect(await underDeadline(60_000, [], async (signal) => ((seen = signal), 'ok'))).toBe('ok');
    const parent = new AbortController();
    await expect(
      underDeadline(60_000, [parent.signal], async (signal) => {
        seen = signal;
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    parent.abort();
    expect(seen?.aborted).toBe(false);
  });
});

describe('msFromEnv', () => {
  it('takes a positive whole number of milliseconds, else the default', () => {
    expect(msFromEnv('X_MS', 30_000, { X_MS: '250' })).toBe(250);
    for (const bad of [undefined, '', '0', '-5', '1.5', 'soon', '1e99']) expect(msFromEnv('X_MS', 30_000, { X_MS: bad })).toBe(30_000);
  });
});

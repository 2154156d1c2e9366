/**
 * A background job's output ring (src/core/jobs/output-ring.ts): ECA's 2000-line buffer and
 * incremental cursor (`background_tasks.clj` `append-output-line!`, `read-output!`: `dropped`
 * counts lines evicted before they were read), plus patchbay's character budget.
 */
import { describe, expect, it } from 'vitest';
import { OutputRing } from '../../src/core/jobs/index.js';

const line = (text: string) => ({ text, stream: 'stdout' as const });

describe('OutputRing', () => {
  it('keeps the last maxLines lines; a cursor reads what is new and learns how many it missed', () => {
    const ring = new OutputRing({ maxLines: 3, maxChars: 1_000 });
    for (let i = 1; i <= 2; i++) ring.push(line(`l${i}`));
    const a = ring.since(0);
    expect(a).toEqual({ lines: [line('l1'), line('l2')], dropped: 0, next: 2 });
    for (let i = 3; i <= 7; i++) ring.push(line(`l${i}`));
    const b = ring.since(a.next);
    // l3 and l4 were pushed out before this read.
    expect(b).toEqual({ lines: [line('l5'), line('l6'), line('l7')], dropped: 2, next: 7 });
    expect(ring.since(b.next)).toEqual({ lines: [], dropped: 0, next: 7 });
    // A snapshot is every kept line and moves nothing.
    expect(ring.lines().map((l) => l.text)).toEqual(['l5', 'l6', 'l7']);
  });

  it('keeps the characters within the budget: big lines push out old ones (the newest always stays)', () => {
    const ring = new OutputRing({ maxLines: 100, maxChars: 10 });
    ring.push(line('aaaa'));
    ring.push(line('bbbb'));
    ring.push(line('cccc'));
    expect(ring.lines().map((l) => l.text)).toEqual(['bbbb', 'cccc']);
    ring.push(line('x'.repeat(50)));
    expect(ring.size).toBe(1);
    expect(ring.heldChars).toBe(50);
  });

  it('a flood of a million lines stays within its limits and its array is compacted', () => {
    const ring = new OutputRing({ maxLines: 2000, maxChars: 100_000 });
    for (let i = 0; i < 1_000_000; i++) ring.push(line(`line ${i} ${'y'.repeat(i % 200)}`));
    expect(ring.size).toBeLessThanOrEqual(2000);
    expect(ring.heldChars).toBeLessThanOrEqual(100_000);
    expect(ring.lines().at(-1)!.text.startsWith('line 999999 ')).toBe(true);
    // The backing array holds at most about twice what is kept (dead slots are compacted away).
    expect((ring as unknown as { items: unknown[] }).items.length).toBeLessThanOrEqual(2 * 2000 + 1025);
  });
});

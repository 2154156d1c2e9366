import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { cappedLines } from '../../src/util/capped-lines.js';
import { LogBudget } from '../../src/util/log-budget.js';

describe('LogBudget', () => {
  function setup() {
    let t = 0;
    const lines: string[] = [];
    const budget = new LogBudget('srv', (level, line) => lines.push(`${level} ${line}`), { perSecond: 10, burst: 5, maxLineChars: 20, intervalMs: 1000, now: () => t });
    return { budget, lines, advance: (ms: number) => (t += ms) };
  }

  it('lets a burst through, then the steady rate, and reports the rest as one count per interval', () => {
    vi.useFakeTimers();
    try {
      const { budget, lines, advance } = setup();
      for (let i = 0; i < 1000; i++) budget.log('info', `l${i}`);
      expect(lines).toEqual(['info l0', 'info l1', 'info l2', 'info l3', 'info l4']);
      vi.advanceTimersByTime(1000);
      expect(lines.at(-1)).toBe('warn … 995 log lines from srv suppressed (more than 10/s)');
      advance(500); // 5 tokens back at 10/s
      for (let i = 0; i < 8; i++) budget.log('info', `m${i}`);
      expect(lines.filter((l) => l.startsWith('info m'))).toHaveLength(5);
      vi.advanceTimersByTime(1000);
      expect(lines.at(-1)).toBe('warn … 3 log lines from srv suppressed (more than 10/s)');
      // Nothing suppressed since: no report.
      vi.advanceTimersByTime(5000);
      expect(lines.filter((l) => l.startsWith('warn'))).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('names what it counts and what became of it in the report', () => {
    const lines: string[] = [];
    const budget = new LogBudget('provider "x"', (_l, line) => lines.push(line), { perSecond: 1, burst: 1, unit: 'events', note: 'all are kept' });
    budget.log('info', 'a');
    budget.log('info', 'b');
    budget.flush();
    expect(lines).toEqual(['a', '… 1 events from provider "x" suppressed (more than 1/s); all are kept']);
  });

  it('cuts long lines and only builds the lines it logs', () => {
    const { budget, lines } = setup();
    budget.log('info', 'x'.repeat(100));
    expect(lines[0]).toBe(`info ${'x'.repeat(20)}… (80 more characters)`);
    let built = 0;
    for (let i = 0; i < 100; i++) budget.log('debug', () => `lazy ${++built}`);
    expect(built).toBe(4);
    budget.flush();
    expect(lines.at(-1)).toBe('warn … 96 log lines from srv suppressed (more than 10/s)');
  });
});

describe('cappedLines', () => {
  it('splits lines (CRLF too), cuts a long one to the cap and keeps reading', async () => {
    const input = new PassThrough();
    const lines: string[] = [];
    const done = cappedLines(input, 10, (l) => lines.push(l));
    input.write('one\r\ntw');
    input.write('o\n');
    for (let i = 0; i < 100; i++) input.write('y'.repeat(1000));
    input.write('\nthree\nlast');
    input.end();
    await done;
    expect(lines).toEqual(['one', 'two', `${'y'.repeat(10)}…`, 'three', 'last']);
  });
});

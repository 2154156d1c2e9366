/**
 * A budget for one noisy source (an MCP server's log notifications and stderr, a provider's
 * surfaced and injected events in one chat): a token
 * bucket lets bursts through and then a steady rate; what is over it is counted and reported
 * as one "… N log lines from <source> suppressed" line per interval, and every line is cut to
 * a maximum length. A peer flooding its logs then costs server.log kilobytes, not megabytes,
 * and the server's time goes to the editor instead of to appending lines.
 */
import type { LogLevel } from './log.js';

export interface LogBudgetOptions {
  /** Lines per second once the burst is spent. */
  perSecond?: number;
  /** Lines let through at once. */
  burst?: number;
  /** Characters kept of one line. */
  maxLineChars?: number;
  /** How often at most the suppressed count is reported. */
  intervalMs?: number;
  /** What is counted, in the report (`log lines`). */
  unit?: string;
  /** Appended to the report (what happened to what was suppressed). */
  note?: string;
  now?: () => number;
}

export type LogSink = (level: LogLevel, line: string) => void;

export class LogBudget {
  private tokens: number;
  private last: number;
  private suppressed = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly perSecond: number;
  private readonly burst: number;
  private readonly maxLineChars: number;
  private readonly intervalMs: number;
  private readonly unit: string;
  private readonly note: string;
  private readonly now: () => number;

  constructor(
    private readonly source: string,
    private readonly sink: LogSink,
    opts: LogBudgetOptions = {},
  ) {
    this.perSecond = opts.perSecond ?? 50;
    this.burst = opts.burst ?? 200;
    this.maxLineChars = opts.maxLineChars ?? 1000;
    this.intervalMs = opts.intervalMs ?? 1000;
    this.unit = opts.unit ?? 'log lines';
    this.note = opts.note ? `; ${opts.note}` : '';
    this.now = opts.now ?? Date.now;
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** Logs `line` if the budget allows, else counts it; a function is only called for a line that is logged. */
  log(level: LogLevel, text: string | (() => string)): void {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens < 1) {
      this.suppressed++;
      // One report per interval, even when the flood stops and no later line would carry it.
      this.timer ??= setTimeout(() => this.report(), this.intervalMs).unref();
      return;
    }
    this.tokens -= 1;
    const line = typeof text === 'string' ? text : text();
    this.sink(level, line.length > this.maxLineChars ? `${line.slice(0, this.maxLineChars)}… (${line.length - this.maxLineChars} more characters)` : line);
  }

  /** Reports what is still counted (call on close so the last count is not lost). */
  flush(): void {
    this.report();
  }

  private report(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.suppressed) return;
    this.sink('warn', `… ${this.suppressed} ${this.unit} from ${this.source} suppressed (more than ${this.perSecond}/s)${this.note}`);
    this.suppressed = 0;
  }
}

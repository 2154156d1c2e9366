/**
 * A background job's output: the most recent lines, within a line count and a character budget
 * (ECA keeps the last 2000 lines, `background_tasks.clj` `max-output-lines`; the budget is ours,
 * so 2000 lines of a megabyte each cannot fill memory either). Lines are numbered from the
 * job's start, so a reader can keep a cursor and learn how many lines it missed.
 */

export type OutputStream = 'stdout' | 'stderr';

export interface OutputLine {
  text: string;
  stream: OutputStream;
}

export interface RingLimits {
  maxLines: number;
  /** Characters of all kept lines together. */
  maxChars: number;
}

export class OutputRing {
  private items: OutputLine[] = [];
  /** Index in `items` of the oldest kept line (dropped lines are compacted away now and then). */
  private head = 0;
  private chars = 0;
  /** Lines ever appended: the number the next line gets. */
  private total = 0;

  constructor(private readonly limits: RingLimits) {}

  push(line: OutputLine): void {
    this.items.push(line);
    this.chars += line.text.length;
    this.total++;
    while (this.size > this.limits.maxLines || (this.chars > this.limits.maxChars && this.size > 1)) {
      this.chars -= this.items[this.head].text.length;
      this.head++;
    }
    // Compacting only when half the array is dead keeps push amortized O(1).
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }

  get size(): number {
    return this.items.length - this.head;
  }

  /** Characters held now (for tests and benches: it never exceeds the budget by more than one line). */
  get heldChars(): number {
    return this.chars;
  }

  /** Every kept line, oldest first. */
  lines(): OutputLine[] {
    return this.items.slice(this.head);
  }

  /**
   * The lines from line number `cursor` on, how many lines since `cursor` were dropped before
   * they could be read, and the cursor to pass next time.
   */
  since(cursor: number): { lines: OutputLine[]; dropped: number; next: number } {
    const first = this.total - this.size;
    const from = Math.max(cursor, first);
    return { lines: this.items.slice(this.head + (from - first)), dropped: Math.max(0, first - cursor), next: this.total };
  }
}

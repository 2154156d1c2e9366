/** Per-connection token bucket for RATE_LIMITED (spec "Error codes"). */
export class TokenBucket {
  private tokens: number;
  private last: number;

  /** `perSecond` refill rate; the burst is one second's worth. */
  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perSecond;
    this.last = now();
  }

  /** How long until the bucket is full again (a paused connection resumes then, with a whole second's budget). */
  msUntilFull(): number {
    this.refill();
    return ((this.perSecond - this.tokens) / this.perSecond) * 1000;
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
  }

  /** Takes one token; false when the connection is over its rate. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

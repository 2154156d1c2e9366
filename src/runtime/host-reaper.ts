/**
 * One workspace's view of the host's job reaper (core/jobs/reaper.ts): one reaper process per
 * host, however many workspaces run jobs. Each view names its jobs apart (every job registry
 * counts `job-1`, `job-2`, … from one), and its `close` forgets only its own jobs: the reaper
 * itself is the host's to close.
 */
import type { JobReaper } from '../core/jobs/reaper.js';

export type ReaperPort = Pick<JobReaper, 'track' | 'cgroup' | 'untrack' | 'forget' | 'close' | 'pid'>;

export class ReaperShare implements ReaperPort {
  private readonly jobs = new Set<string>();
  private closed = false;

  constructor(
    private readonly reaper: JobReaper,
    private readonly prefix: string,
  ) {}

  track(job: string, kind: 'group' | 'pid', pids: Array<{ pid: number; start: string | undefined }>): void {
    if (this.closed) return;
    this.jobs.add(job);
    this.reaper.track(this.prefix + job, kind, pids);
  }

  cgroup(job: string, path: string): void {
    if (this.closed) return;
    this.jobs.add(job);
    this.reaper.cgroup(this.prefix + job, path);
  }

  untrack(job: string, pids: number[]): void {
    if (!this.closed) this.reaper.untrack(this.prefix + job, pids);
  }

  forget(job: string): void {
    if (this.closed) return;
    this.jobs.delete(job);
    this.reaper.forget(this.prefix + job);
  }

  /** This workspace's jobs are stopped: the reaper forgets them (and, with none left, goes idle). */
  close(): void {
    if (this.closed) return;
    for (const job of this.jobs) this.reaper.forget(this.prefix + job);
    this.jobs.clear();
    this.closed = true;
  }

  get pid(): number | undefined {
    return this.reaper.pid;
  }
}

/**
 * Background jobs: shell commands the model started with `shell_command` `background` and that
 * outlive the tool call (ECA `src/eca/features/background_tasks.clj`). Protocol-free: a façade
 * reads `list()` and is told of every change through `onChange` (ECA sends `jobs/updated` after
 * a job is created, completes, fails, is killed or is evicted).
 *
 * Invariants:
 * - each job runs in its own process group; kill and dispose stop the group and every descendant
 *   found before the signal (a grandchild that left the group is caught too): SIGTERM, then
 *   SIGKILL after `graceMs`;
 * - a job that runs in the OS sandbox has a pid namespace that dies with it; one that does not
 *   runs in a cgroup of its own where the system allows one (util/cgroup.ts), which holds every
 *   process it starts (`setsid -f`, a double fork): the group is stopped with the job, and the
 *   reaper and the ledger know it. Where there is none, a grandchild that detached before a scan
 *   saw it may escape (`doctorLine` says so);
 * - when a job's shell exits, what it left running in its group is stopped the same way (a job no
 *   longer `running` must not hide live processes);
 * - output is an `OutputRing`: a line count, a character budget and a cap on each line;
 * - a killed job stays `killed` (its exit does not turn it into `failed`), as ECA's
 *   `update-job-on-exit`;
 * - while a job runs its descendants are looked up now and then (on output, and every
 *   `scanMs`), with their start times: one that left the group (`setsid`, a daemon) is still
 *   stopped when the job ends or is killed, and a reused pid is never signalled;
 * - `onEnded` hears of every end, a kill too (ECA's `monitor-process-exit!` calls on-exit for
 *   kills), but not of the jobs a dispose stops;
 * - a finished job is evicted `keepFinishedMs` after it ended (ECA `max-finished-age-ms`), and at
 *   most `maxFinished` are kept: the oldest go first, so finished rings cannot pile up.
 */
import type { ChildProcess } from 'node:child_process';
import { cgroupArgv, cgroupPids, createCgroup, killCgroup, probeCgroups, removeCgroupSoon, signalCgroup, type CgroupSupport } from '../../util/cgroup.js';
import { descendants, parentMap, startTime } from '../../util/process-tree.js';
import { errorMessage, logger } from '../../util/log.js';
import { isAlive } from '../../util/pid.js';
import { groupAlive, KILL_GRACE_MS, killGroup, spawnShell, type WrapArgv } from '../tools/native/shell.js';
import { OutputRing, type OutputLine, type OutputStream } from './output-ring.js';
import { readLines } from './lines.js';
import type { JobReaper } from './reaper.js';

const log = logger('jobs');

export type JobStatus = 'running' | 'completed' | 'failed' | 'killed';

/** What a front end shows of a job. */
export interface JobInfo {
  /** `job-1`, `job-2`, … (ECA's ids). */
  id: string;
  type: 'shell';
  status: JobStatus;
  /** The command line. */
  label: string;
  /** What the model said the job is for (`dev-server`), or null. */
  summary: string | null;
  startedAt: Date;
  endedAt: Date | null;
  /** null while running, when killed, or when the process ended by a signal or never started. */
  exitCode: number | null;
  chatId: string;
  toolCallId?: string;
  cwd: string;
}

export interface JobOutput {
  lines: OutputLine[];
  status: JobStatus;
  exitCode: number | null;
}

export interface JobRegistryOptions {
  /** Called after every change of the list (create, end, kill, evict). */
  onChange?: () => void;
  /** A job ended (completed, failed or killed; not by a dispose), once its output is read to the end. */
  onEnded?: (job: JobInfo, tail: OutputLine[]) => void;
  /** Jobs running at once (ECA `max-jobs`). */
  maxRunning?: number;
  maxLines?: number;
  maxChars?: number;
  /** Characters kept of one line; the rest is dropped and the line marked "…". */
  maxLineChars?: number;
  keepFinishedMs?: number;
  /** Finished jobs kept at most; the oldest are evicted first. */
  maxFinished?: number;
  graceMs?: number;
  /** How often a running job's descendants are looked up (besides on output). */
  scanMs?: number;
  /** Told every job group and descendant, so they are stopped even if this process is SIGKILLed. */
  reaper?: Pick<JobReaper, 'track' | 'cgroup' | 'untrack' | 'forget' | 'close' | 'pid'>;
  /** The environment jobs start from (the host's); the process's own without it. */
  env?: NodeJS.ProcessEnv;
}

export const DEFAULT_MAX_RUNNING_JOBS = 10;
export const DEFAULT_JOB_MAX_LINES = 2000;
export const DEFAULT_JOB_MAX_CHARS = 1_000_000;
export const DEFAULT_JOB_MAX_LINE_CHARS = 8_192;
const KEEP_FINISHED_MS = 30 * 60 * 1000;
export const DEFAULT_MAX_FINISHED_JOBS = 50;
const SCAN_MS = 3_000;
/** Output makes a scan at most this often: a chatty job must not walk /proc for every line. */
const SCAN_ON_OUTPUT_MS = 1_000;
/** Lines of a finished job's output the model is told (ECA shell.clj `on-exit`: the last 20). */
const TAIL_LINES = 20;

interface Job {
  info: JobInfo;
  child: ChildProcess;
  ring: OutputRing;
  /** The model's read cursor (`bg_job` `read_output`); the editor's snapshot never moves it. */
  cursor: number;
  /** Resolves when the process has exited and its output is read (or it failed to start). */
  ended: Promise<void>;
  evictTimer?: NodeJS.Timeout;
  /**
   * Descendants found when the job was stopped, until its SIGKILL after the grace: a dispose in
   * that window signals them too (one may ignore SIGTERM). Emptied then: pids are reused.
   */
  tree: number[];
  /** Descendants seen while the job ran → their start times (undefined where unknown). */
  seen: Map<number, string | undefined>;
  scanTimer?: NodeJS.Timeout;
  lastScan: number;
  /**
   * The group was seen empty, or got its SIGKILL: never signalled again, since its id (the
   * shell's pid) may be reused by an unrelated group later.
   */
  reaped: boolean;
  /** The job's cgroup (util/cgroup.ts), where it has one: every process it started is in it. */
  cgroup?: string;
}

export type StartJob = { ok: true; job: JobInfo } | { ok: false; message: string };

export class JobRegistry {
  private readonly jobs = new Map<string, Job>();
  private nextId = 1;
  private disposed = false;
  private cgroups: CgroupSupport | undefined;
  private warned = false;
  private readonly o: Required<Omit<JobRegistryOptions, 'onChange' | 'onEnded' | 'reaper' | 'env'>>;

  constructor(private readonly opts: JobRegistryOptions = {}) {
    this.o = {
      maxRunning: opts.maxRunning ?? DEFAULT_MAX_RUNNING_JOBS,
      maxLines: opts.maxLines ?? DEFAULT_JOB_MAX_LINES,
      maxChars: opts.maxChars ?? DEFAULT_JOB_MAX_CHARS,
      maxLineChars: opts.maxLineChars ?? DEFAULT_JOB_MAX_LINE_CHARS,
      keepFinishedMs: opts.keepFinishedMs ?? KEEP_FINISHED_MS,
      maxFinished: opts.maxFinished ?? DEFAULT_MAX_FINISHED_JOBS,
      graceMs: opts.graceMs ?? KILL_GRACE_MS,
      scanMs: opts.scanMs ?? SCAN_MS,
    };
  }

  /** Starts `command` under the shell in `cwd`; refused past the running-jobs limit or after dispose. */
  /** `wrap`: the job runs in the OS sandbox (its pid namespace stops every process it starts with it). */
  start(spec: { command: string; cwd: string; summary?: string; chatId: string; toolCallId?: string; wrap?: WrapArgv }): StartJob {
    if (this.disposed) return { ok: false, message: 'The server is shutting down: no background job was started.' };
    if (this.running().length >= this.o.maxRunning) {
      return { ok: false, message: `Maximum number of background jobs reached (${this.o.maxRunning}). Kill an existing job first.` };
    }
    const id = `job-${this.nextId++}`;
    // Outside the sandbox, a cgroup of its own holds whatever the job starts; the shell moves into it before it runs anything.
    const cgroup = spec.wrap ? undefined : this.newCgroup();
    const wrap = cgroup ? (argv: Parameters<WrapArgv>[0]) => cgroupArgv(cgroup, argv) : spec.wrap;
    const child = spawnShell(spec.command, spec.cwd, spec.chatId, this.opts.env, wrap);
    const info: JobInfo = {
      id,
      type: 'shell',
      status: 'running',
      label: spec.command,
      summary: spec.summary?.trim() || null,
      startedAt: new Date(),
      endedAt: null,
      exitCode: null,
      chatId: spec.chatId,
      ...(spec.toolCallId ? { toolCallId: spec.toolCallId } : {}),
      cwd: spec.cwd,
    };
    const ring = new OutputRing({ maxLines: this.o.maxLines, maxChars: this.o.maxChars });
    const capture = (stream: OutputStream) => {
      const s = child[stream];
      if (!s) return;
      s.on('error', () => {});
      readLines(s, this.o.maxLineChars, (text) => {
        ring.push({ text, stream });
        if (Date.now() - job.lastScan >= SCAN_ON_OUTPUT_MS) this.rescan(job);
      });
    };
    capture('stdout');
    capture('stderr');
    const ended = new Promise<void>((resolve) => {
      child.once('error', (e) => {
        ring.push({ text: `Could not start the shell: ${e.message}`, stream: 'stderr' });
        this.ended(job, null);
        resolve();
      });
      child.once('exit', (code) => this.ended(job, code));
      // After the exit, once its output is read to the end (strays holding it open are stopped on exit).
      child.once('close', () => resolve());
    });
    const job: Job = { info, child, ring, cursor: 0, ended, tree: [], reaped: false, seen: new Map(), lastScan: 0, ...(cgroup ? { cgroup } : {}) };
    job.scanTimer = setInterval(() => this.rescan(job), this.o.scanMs).unref();
    this.jobs.set(id, job);
    if (child.pid && process.platform !== 'win32') this.opts.reaper?.track(id, 'group', [{ pid: child.pid, start: startTime(child.pid) }]);
    if (cgroup) this.opts.reaper?.cgroup(id, cgroup);
    log.info(`started background job ${id} (pid ${child.pid ?? '?'})`);
    this.changed();
    return { ok: true, job: { ...info } };
  }

  /** Every job not yet evicted, oldest first. */
  list(): JobInfo[] {
    return [...this.jobs.values()].map((j) => ({ ...j.info }));
  }

  get(id: string): JobInfo | undefined {
    const j = this.jobs.get(id);
    return j && { ...j.info };
  }

  /** The model's read: lines since its last read (how many it missed), moving its cursor. */
  read(id: string): (JobOutput & { dropped: number }) | undefined {
    const j = this.jobs.get(id);
    if (!j) return undefined;
    const { lines, dropped, next } = j.ring.since(j.cursor);
    j.cursor = next;
    return { lines, dropped, status: j.info.status, exitCode: j.info.exitCode };
  }

  /** The editor's read: every kept line; the model's cursor stays where it is. */
  peek(id: string): JobOutput | undefined {
    const j = this.jobs.get(id);
    return j && { lines: j.ring.lines(), status: j.info.status, exitCode: j.info.exitCode };
  }

  /** Resolves when the job has ended, after `ms`, or on `signal`, whichever comes first. */
  async settle(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    const j = this.jobs.get(id);
    if (!j || signal?.aborted) return;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    await Promise.race([
      j.ended,
      new Promise<void>((r) => {
        timer = setTimeout(r, ms);
        onAbort = r;
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }

  /** Stops a running job and its whole process tree. false for a job unknown or not running (ECA `kill-job!`). */
  kill(id: string): boolean {
    const j = this.jobs.get(id);
    if (!j || j.info.status !== 'running') return false;
    // Marked before the signal, so its exit cannot race ahead and call it failed.
    j.info.status = 'killed';
    j.info.endedAt = new Date();
    this.finish(j);
    this.stopTree(j);
    log.info(`killed background job ${id}`);
    this.changed();
    return true;
  }

  /** Stops every job's tree; resolves once they are gone (SIGKILL after the grace for the stubborn). */
  async dispose(): Promise<void> {
    this.disposed = true;
    const parents = parentMap();
    for (const j of this.jobs.values()) this.rescan(j, parents);
    const live = [...this.jobs.values()].filter((j) => j.info.status === 'running' || groupOf(j) !== undefined || j.tree.some(isAlive) || strays(j).length || inCgroup(j).length);
    const trees = live.map((j) => {
      if (j.info.status === 'running') {
        j.info.status = 'killed';
        j.info.endedAt = new Date();
      }
      const pids = [...new Set([...treeOf(j.child, parents), ...j.tree, ...strays(j)])];
      signalTree(j.child, 'SIGTERM', pids, !j.reaped);
      if (j.cgroup) signalCgroup(j.cgroup, 'SIGTERM');
      return { job: j, pids };
    });
    for (const j of this.jobs.values()) {
      clearTimeout(j.evictTimer);
      clearInterval(j.scanTimer);
    }
    if (!trees.length) return this.opts.reaper?.close();
    await Promise.race([Promise.all(trees.map((t) => t.job.ended)), new Promise((r) => setTimeout(r, this.o.graceMs).unref())]);
    // The shell may be gone while its group lives on: SIGKILL whatever is left, now, before we exit.
    for (const t of trees) {
      signalTree(t.job.child, 'SIGKILL', t.pids.filter(isAlive), !t.job.reaped);
      if (t.job.cgroup) killCgroup(t.job.cgroup);
      this.reaped(t.job);
    }
    this.opts.reaper?.close();
  }

  /** At once: SIGKILL to every job's tree (a shutdown past its deadline). */
  forceClose(): void {
    this.disposed = true;
    const parents = parentMap();
    for (const j of this.jobs.values()) {
      clearTimeout(j.evictTimer);
      clearInterval(j.scanTimer);
      const pids = [...treeOf(j.child, parents), ...j.tree, ...strays(j)];
      if (j.info.status === 'running' || groupOf(j) !== undefined || pids.some(isAlive)) signalTree(j.child, 'SIGKILL', pids, !j.reaped);
      if (j.cgroup) {
        killCgroup(j.cgroup);
        removeCgroupSoon(j.cgroup);
      }
    }
    this.opts.reaper?.close();
  }

  /** The reaper's pid, once it runs: a forced shutdown's last SIGKILL sweep must spare it. */
  get reaperPid(): number | undefined {
    return this.opts.reaper?.pid;
  }

  private running(): Job[] {
    return [...this.jobs.values()].filter((j) => j.info.status === 'running');
  }

  private ended(job: Job, code: number | null): void {
    clearInterval(job.scanTimer);
    if (job.info.status === 'running') {
      job.info.status = code === 0 ? 'completed' : 'failed';
      job.info.exitCode = code;
      job.info.endedAt = new Date();
      this.finish(job);
      log.info(`background job ${job.info.id} exited (${code ?? 'no exit code'})`);
      if (!this.disposed) this.changed();
    }
    // What the shell left running (in its group, or gone off on its own) would be invisible now: stop it.
    if (groupOf(job) !== undefined || strays(job).length || inCgroup(job).length) this.stopTree(job);
    else this.reaped(job);
  }

  /** Nothing of the job is left to signal: its group id and its descendants' pids may be reused from now on. */
  private reaped(job: Job): void {
    job.reaped = true;
    job.seen.clear();
    if (job.cgroup) removeCgroupSoon(job.cgroup);
    this.opts.reaper?.forget(job.info.id);
  }

  /**
   * `doctor`'s line on how a job's grandchildren are stopped: the sandbox's pid namespace, the
   * job's cgroup, or only its process group and what a scan finds (then one may escape).
   */
  doctorLine(sandboxed: boolean): string {
    if (process.platform === 'win32') return 'Jobs: each background job is stopped with its process tree (taskkill /T)';
    if (sandboxed) return "Jobs: background jobs run in the sandbox's pid namespace: every process a job starts is stopped with it";
    const c = this.cgroupSupport();
    if (c.ok) return `Jobs: each background job runs in a cgroup of its own (cgroup v${c.version}, ${c.base}): every process it starts is stopped with it`;
    return `Jobs: no cgroup for background jobs (${c.why}): a process a job detaches (setsid, a double fork) before patchbay sees it may outlive the job`;
  }

  private cgroupSupport(): CgroupSupport {
    return (this.cgroups ??= probeCgroups(this.opts.env ?? process.env));
  }

  /** A new cgroup for a job, or undefined (none here: said once in the log). */
  private newCgroup(): string | undefined {
    if (process.platform !== 'linux') return undefined;
    const c = this.cgroupSupport();
    const path = c.ok ? createCgroup(c) : undefined;
    if (!path && !this.warned) {
      this.warned = true;
      log.warn(`background jobs run without a cgroup (${c.ok ? `cannot make one in ${c.base}` : c.why}): a process a job detaches before a scan sees it may outlive the job`);
    }
    return path;
  }

  /** Looks up the running job's descendants; the reaper learns the new ones and forgets the dead. */
  private rescan(job: Job, parents?: Map<number, number>): void {
    if (job.reaped) return;
    const { found, gone } = scan(job, parents);
    if (found.length)
      this.opts.reaper?.track(
        job.info.id,
        'pid',
        found.map((pid) => ({ pid, start: job.seen.get(pid) })),
      );
    if (gone.length) this.opts.reaper?.untrack(job.info.id, gone);
  }

  /** A job just stopped running: it counts among the finished, and its end is told once its output is read. */
  private finish(job: Job): void {
    this.scheduleEviction(job);
    this.evictOverflow();
    void job.ended.then(() => {
      if (this.disposed || !this.opts.onEnded) return;
      try {
        this.opts.onEnded({ ...job.info }, job.ring.lines().slice(-TAIL_LINES));
      } catch (e) {
        log.warn(`jobs end listener: ${errorMessage(e)}`);
      }
    });
  }

  /** Past `maxFinished` finished jobs, the oldest to have ended are evicted now. */
  private evictOverflow(): void {
    const finished = [...this.jobs.values()].filter((j) => j.info.status !== 'running').sort((a, b) => a.info.endedAt!.getTime() - b.info.endedAt!.getTime());
    let evicted = false;
    for (const j of finished.slice(0, Math.max(0, finished.length - this.o.maxFinished))) {
      clearTimeout(j.evictTimer);
      this.jobs.delete(j.info.id);
      evicted = true;
    }
    if (evicted && !this.disposed) this.changed();
  }

  /** SIGTERM to the job's tree now, SIGKILL to what is left after the grace. */
  private stopTree(job: Job): void {
    this.rescan(job);
    const pids = [...treeOf(job.child), ...strays(job)];
    job.tree = [...new Set([...job.tree, ...pids])];
    signalTree(job.child, 'SIGTERM', pids, !job.reaped);
    if (job.cgroup) signalCgroup(job.cgroup, 'SIGTERM');
    setTimeout(() => {
      signalTree(job.child, 'SIGKILL', job.tree.filter(isAlive), !job.reaped);
      if (job.cgroup) killCgroup(job.cgroup);
      job.tree = [];
      this.reaped(job);
    }, this.o.graceMs).unref();
  }

  private scheduleEviction(job: Job): void {
    job.evictTimer = setTimeout(() => {
      if (this.jobs.get(job.info.id) !== job) return;
      this.jobs.delete(job.info.id);
      this.changed();
    }, this.o.keepFinishedMs);
    job.evictTimer.unref();
  }

  private changed(): void {
    try {
      this.opts.onChange?.();
    } catch (e) {
      log.warn(`jobs change listener: ${errorMessage(e)}`);
    }
  }
}

/** The job's process group id while the group has a live member (POSIX only). */
function groupOf(j: Job): number | undefined {
  const pid = j.child.pid;
  return pid && !j.reaped && process.platform !== 'win32' && groupAlive(pid) ? pid : undefined;
}

/** The live members of the job's cgroup (none without one). */
function inCgroup(j: Job): number[] {
  return j.cgroup ? cgroupPids(j.cgroup).filter(isAlive) : [];
}

/** The job's descendants while its shell runs (after, they are re-parented and only its group finds them). */
function treeOf(child: ChildProcess, parents?: Map<number, number>): number[] {
  return child.pid && child.exitCode === null && child.signalCode === null ? descendants(child.pid, parents) : [];
}

/**
 * Remembers the running job's descendants with their start times, and forgets the dead (or
 * reused: another start time); returns the new ones and the forgotten.
 */
function scan(job: Job, parents?: Map<number, number>): { found: number[]; gone: number[] } {
  job.lastScan = Date.now();
  if (process.platform === 'win32') return { found: [], gone: [] };
  const gone: number[] = [];
  for (const [pid, started] of job.seen) {
    if (isAlive(pid) && startTime(pid) === started) continue;
    job.seen.delete(pid);
    gone.push(pid);
  }
  const found: number[] = [];
  for (const pid of treeOf(job.child, parents)) {
    if (job.seen.has(pid)) continue;
    job.seen.set(pid, startTime(pid));
    found.push(pid);
  }
  return { found, gone };
}

/**
 * Descendants once seen that still live as the same process: the start time known and unchanged.
 * Where there is none (off Linux) there are no strays: only the live tree is signalled.
 */
function strays(job: Job): number[] {
  return [...job.seen].filter(([pid, started]) => started !== undefined && isAlive(pid) && startTime(pid) === started).map(([pid]) => pid);
}

/**
 * Signals the job's process group and the given descendants: a grandchild that made its own
 * session is no longer in the group but still in the tree.
 */
function signalTree(child: ChildProcess, signal: NodeJS.Signals, pids: number[], group = true): void {
  if (group) killGroup(child, signal);
  if (process.platform === 'win32') return;
  for (const target of pids) {
    try {
      process.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

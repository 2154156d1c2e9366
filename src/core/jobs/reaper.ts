/**
 * The jobs' guard against a server that dies without cleaning up (SIGKILL, a crash, the OOM
 * killer): a tiny detached process whose stdin is a pipe from the server. The server tells it the
 * live job groups and escaped descendants (each with its start time, against pid reuse); when the
 * pipe reaches EOF — the kernel closes it however the server ends — it SIGTERMs what is still
 * there, SIGKILLs what is left a second later, and exits. A dispose that stopped everything
 * leaves it nothing to do. With a ledger directory, the same is also written to a file
 * (`ledger.ts`) for a server that dies with its reaper.
 *
 * Protocol, one line each: `g <job> <pgid> <start>` (a process group), `p <job> <pid> <start>`
 * (one process), `c <job> <path>` (the job's cgroup, util/cgroup.ts; the path URI-encoded),
 * `r <job> <pid>` (that process is gone), `d <job>` (forget the job). `<start>` is `-` where the
 * system has no start time. A cgroup holds only what a job put in it: every member is killed
 * (`cgroup.kill`, else one by one) and the group removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { errorMessage, logger } from '../../util/log.js';
import { probeCgroups, sweepCgroups } from '../../util/cgroup.js';
import { JobLedger, type GuardTarget } from './ledger.js';

const log = logger('jobs');

/**
 * Run by `node -e`: no files to find beside the bundle. A target is signalled only while its
 * start time (a group: its leader's) is known and unchanged: a group whose leader is gone, or a
 * system without /proc, gets nothing (a live process wrongly killed is worse than one left).
 * argv[1]: the ledger record, deleted once it has reaped something (the server is gone then).
 */
const SCRIPT = String.raw`
const fs = require('fs');
const targets = new Map();
const startOf = (pid) => {
  try {
    const s = fs.readFileSync('/proc/' + pid + '/stat', 'utf8');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[19];
  } catch { return undefined; }
};
const members = (dir) => {
  try { return fs.readFileSync(dir + '/cgroup.procs', 'utf8').split('\n').filter(Boolean).map(Number).filter((p) => p > 1); } catch { return []; }
};
const ours = (t) => {
  if (t.cgroup) return /\/patchbay-\d+-(\d+|x)-\d+$/.test(t.cgroup);
  const now = startOf(t.pid);
  return now !== undefined && t.start !== '-' && now === t.start;
};
const record = process.argv[1] !== '-' ? process.argv[1] : undefined;
const exit = () => {
  if (record) { try { fs.rmSync(record, { force: true }); } catch {} }
  process.exit(0);
};
const alive = (t) => {
  if (t.cgroup) return members(t.cgroup).length > 0;
  try { process.kill(t.group ? -t.pid : t.pid, 0); return true; } catch { return false; }
};
const kill = (pid, sig) => { try { process.kill(pid, sig); } catch {} };
const signal = (list, sig) => {
  for (const t of list) {
    if (!t.cgroup) { kill(t.group ? -t.pid : t.pid, sig); continue; }
    if (sig === 'SIGKILL') { try { fs.writeFileSync(t.cgroup + '/cgroup.kill', '1'); continue; } catch {} }
    for (const p of members(t.cgroup)) kill(p, sig);
  }
};
let buf = '';
let reaping = false;
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
    const [op, job, pid, start] = buf.slice(0, i).split(' ');
    if (op === 'd') { for (const k of targets.keys()) if (k.startsWith(job + ' ')) targets.delete(k); }
    else if (op === 'r') targets.delete(job + ' p' + pid);
    else if (op === 'c' && pid) targets.set(job + ' c' + pid, { cgroup: decodeURIComponent(pid) });
    else if ((op === 'g' || op === 'p') && Number(pid) > 1) targets.set(job + ' ' + op + pid, { group: op === 'g', pid: Number(pid), start: start || '-' });
  }
});
const reap = () => {
  if (reaping) return;
  reaping = true;
  const list = [...targets.values()].filter((t) => alive(t) && ours(t));
  // Nothing to stop: the record is the server's (an idle EOF; its clean end deletes it).
  if (!list.length) process.exit(0);
  signal(list, 'SIGTERM');
  let end = Date.now() + 1000;
  let killed = false;
  const tick = setInterval(() => {
    const left = list.filter(alive);
    if (left.length && Date.now() < end) return;
    if (left.length && !killed) {
      // A cgroup is removed only once empty: a little more time after the SIGKILL.
      killed = true;
      signal(left.filter(ours), 'SIGKILL');
      end = Date.now() + 1000;
      if (left.some((t) => t.cgroup)) return;
    }
    clearInterval(tick);
    for (const t of list) if (t.cgroup) { try { fs.rmdirSync(t.cgroup); } catch {} }
    exit();
  }, 50);
};
process.stdin.on('end', reap);
process.stdin.on('error', reap);
`;

/** Ledger writes are at most this often: a job spawning a child every second must not rewrite it every second. */
const LEDGER_DEBOUNCE_MS = 1_500;
/** With no job left to watch for this long, the reaper is sent its EOF; the next job starts a new one. */
const IDLE_MS = 60_000;

export class JobReaper {
  private child: ChildProcess | undefined;
  private closed = false;
  private readonly ledger: JobLedger | undefined;
  /** What the reaper was told and still holds, by job: the ledger's copy (only live targets). */
  private readonly targets = new Map<string, GuardTarget[]>();
  private ledgerTimer: NodeJS.Timeout | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly idleMs: number;

  /** `ledgerDir`: where records are kept; what dead servers left there is stopped now. */
  constructor(ledgerDir?: string, opts: { idleMs?: number } = {}) {
    this.idleMs = opts.idleMs ?? IDLE_MS;
    if (!ledgerDir || process.platform === 'win32') return;
    JobLedger.sweep(ledgerDir);
    // Groups of a dead server in this process's cgroup, also those its ledger never got to name.
    if (process.platform === 'linux') {
      const stopped = sweepCgroups(probeCgroups());
      if (stopped) log.info(`stopped the jobs of ${stopped} cgroup(s) left by a server that died`);
    }
    this.ledger = new JobLedger(ledgerDir);
  }

  /** Watch a job's process group (`pgid`, the job shell's pid) or some of its processes. */
  track(job: string, kind: 'group' | 'pid', pids: Array<{ pid: number; start: string | undefined }>): void {
    if (!pids.length || this.closed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.send(pids.map((p) => `${kind === 'group' ? 'g' : 'p'} ${job} ${p.pid} ${p.start ?? '-'}\n`).join(''));
    const list = (this.targets.get(job) ?? []).filter((t) => t.kind !== kind || !pids.some((p) => p.pid === t.pid));
    list.push(...pids.map((p) => ({ job, kind, pid: p.pid, ...(p.start ? { start: p.start } : {}) })));
    this.targets.set(job, list);
    this.saveSoon();
  }

  /** The job's cgroup: at EOF, whatever is in it is stopped and the group removed. */
  cgroup(job: string, path: string): void {
    if (this.closed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.send(`c ${job} ${encodeURIComponent(path)}\n`);
    const list = (this.targets.get(job) ?? []).filter((t) => t.kind !== 'cgroup');
    list.push({ job, kind: 'cgroup', pid: 0, path });
    this.targets.set(job, list);
    this.saveSoon();
  }

  /** Processes of the job (not its group) that are gone: the reaper and the record drop them. */
  untrack(job: string, pids: number[]): void {
    const list = this.targets.get(job);
    if (!list || !pids.length || this.closed) return;
    this.send(pids.map((pid) => `r ${job} ${pid}\n`).join(''));
    this.targets.set(
      job,
      list.filter((t) => t.kind !== 'pid' || !pids.includes(t.pid)),
    );
    this.saveSoon();
  }

  /** The job's processes are gone: nothing to do for it at EOF. */
  forget(job: string): void {
    if (!this.targets.delete(job) || this.closed) return;
    this.send(`d ${job}\n`);
    this.saveSoon();
    if (!this.targets.size) this.idleSoon();
  }

  /** The server's own end, its jobs stopped: EOF now (the reaper stops what is left, if anything, and exits). */
  close(): void {
    this.closed = true;
    clearTimeout(this.idleTimer);
    clearTimeout(this.ledgerTimer);
    this.ledgerTimer = undefined;
    this.child?.stdin?.end();
    this.ledger?.remove();
  }

  /** Writes the ledger now if a write is pending (tests; the timer does it otherwise). */
  flush(): void {
    if (!this.ledgerTimer) return;
    clearTimeout(this.ledgerTimer);
    this.ledgerTimer = undefined;
    if (!this.closed) this.ledger?.write([...this.targets.values()].flat());
  }

  /** The reaper's pid, once a job was tracked (a forced shutdown must spare it: it has to read its EOF). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The record as it was told (tests). */
  tracked(): GuardTarget[] {
    return [...this.targets.values()].flat();
  }

  /** The ledger's path, where there is one (tests). */
  get ledgerFile(): string | undefined {
    return this.ledger?.file;
  }

  /** No job left: a long-idle server keeps no reaper (it holds nothing; its EOF stops nothing). */
  private idleSoon(): void {
    if (!this.child || this.idleTimer) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.targets.size || this.closed) return;
      this.child?.stdin?.end();
      this.child = undefined;
    }, this.idleMs).unref();
  }

  private saveSoon(): void {
    if (!this.ledger || this.ledgerTimer) return;
    this.ledgerTimer = setTimeout(() => this.flush(), LEDGER_DEBOUNCE_MS).unref();
  }

  private send(text: string): void {
    if (this.closed || process.platform === 'win32') return;
    const child = this.ensure();
    if (child.stdin?.writable) child.stdin.write(text);
  }

  /** Started at the first job: a server that runs none has no reaper. */
  private ensure(): ChildProcess {
    if (this.child) return this.child;
    // Its own session: a terminal's Ctrl-C or hang-up that ends the server does not end it too.
    // Named in `ps` by its last argument; in `/`, so it holds no workspace directory busy. No
    // NODE_OPTIONS: a --require or --inspect meant for the server has no business in it.
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const args = ['-e', SCRIPT, this.ledger?.file ?? '-', 'patchbay-job-reaper'];
    const child = spawn(process.execPath, args, { cwd: '/', env, stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    child.on('error', (e) => log.warn(`job reaper: ${errorMessage(e)}`));
    child.stdin?.on('error', () => {});
    // Neither it nor its pipe keeps the server running.
    child.unref();
    (child.stdin as Socket | null)?.unref?.();
    this.child = child;
    return child;
  }
}

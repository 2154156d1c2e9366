/**
 * The reaper's own fallback: a server with jobs keeps what the reaper is told in
 * `<PATCHBAY_HOME>/jobs/<pid>-<instance>.json` (one file per registry: several workspaces in one
 * process must not overwrite or delete each other's), and deletes it at a clean end; the reaper
 * deletes it once it has reaped. A record whose server is gone (its pid dead, or alive with
 * another start time) is left over from a server that died with its reaper (`kill -9` of both,
 * the OOM killer): the next server to start SIGKILLs what of it is provably the same process, and
 * deletes the record.
 *
 * Killing the wrong process is worse than leaving one running: a target is signalled only when
 * its start time is known and unchanged (a group: its leader's), and a record from another boot
 * (or without a boot id) is dropped without acting on it.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, logger } from '../../util/log.js';
import { isAlive } from '../../util/pid.js';
import { ensurePrivateDir } from '../../util/private-dir.js';
import { bootId, startTime } from '../../util/process-tree.js';
import { cgroupPids, isJobCgroup, killCgroup, removeCgroupSoon } from '../../util/cgroup.js';

const log = logger('jobs');

/**
 * A job's process group (`pid` is its id) or one of its processes, with its start time when
 * known; or the job's cgroup (`path`; `pid` 0): whatever is in it is the job's.
 */
export interface GuardTarget {
  job: string;
  kind: 'group' | 'pid' | 'cgroup';
  pid: number;
  start?: string;
  path?: string;
}

interface Record {
  server: { pid: number; start?: string };
  boot?: string;
  targets: GuardTarget[];
}

const RECORD = /^\d+(-[0-9a-f]+)?\.json$/;
/** A write cut short by a crash (renamed into place only when whole). */
const LEFTOVER = /^\d+(-[0-9a-f]+)?\.json\.tmp$/;

export class JobLedger {
  /** The record's path (the reaper deletes it after reaping). */
  readonly file: string;

  constructor(private readonly dir: string) {
    this.file = join(dir, `${process.pid}-${randomBytes(4).toString('hex')}.json`);
  }

  write(targets: GuardTarget[]): void {
    try {
      ensurePrivateDir(this.dir);
      const record: Record = { server: { pid: process.pid, start: startTime(process.pid) }, boot: bootId(), targets };
      writeFileSync(`${this.file}.tmp`, JSON.stringify(record), { mode: 0o600 });
      renameSync(`${this.file}.tmp`, this.file);
    } catch (e) {
      log.warn(`job ledger: ${errorMessage(e)}`);
    }
  }

  remove(): void {
    rmSync(this.file, { force: true });
  }

  /** Stops what dead servers' records still hold; returns how many targets were signalled. */
  static sweep(dir: string): number {
    let files: string[];
    try {
      files = readdirSync(dir);
    } catch {
      return 0;
    }
    let signalled = 0;
    const boot = bootId();
    for (const f of files) {
      const path = join(dir, f);
      if (LEFTOVER.test(f)) {
        // Ours is written and renamed at once: a .tmp whose server is gone is a crash's leftover.
        if (!serverLives({ pid: Number(f.split(/[-.]/)[0]) })) rmSync(path, { force: true });
        continue;
      }
      if (!RECORD.test(f)) continue;
      let record: Record;
      try {
        record = JSON.parse(readFileSync(path, 'utf8')) as Record;
        if (!Array.isArray(record.targets) || typeof record.server?.pid !== 'number') throw new Error('not a job record');
      } catch (e) {
        log.warn(`job ledger: dropping ${f}: ${errorMessage(e)}`);
        rmSync(path, { force: true });
        continue;
      }
      if (record.boot === undefined || record.boot !== boot) {
        // Another boot's pids and start times name other processes now: nothing there is ours.
        rmSync(path, { force: true });
        continue;
      }
      if (serverLives(record.server)) continue;
      let stopped = 0;
      for (const t of record.targets) {
        if (t?.kind === 'cgroup') {
          if (typeof t.path !== 'string' || !isJobCgroup(t.path)) continue;
          if (cgroupPids(t.path).length) stopped++;
          killCgroup(t.path);
          removeCgroupSoon(t.path);
          continue;
        }
        if (typeof t?.pid !== 'number' || t.pid <= 1 || !stillOurs(t)) continue;
        try {
          process.kill(t.kind === 'group' ? -t.pid : t.pid, 'SIGKILL');
          stopped++;
        } catch {
          // Gone meanwhile.
        }
      }
      if (stopped) log.info(`stopped ${stopped} process(es) left by a server that died (${f})`);
      signalled += stopped;
      rmSync(path, { force: true });
    }
    return signalled;
  }
}

/** Unsure counts as alive: a live server's record is never acted on. */
function serverLives(s: Record['server']): boolean {
  if (s.pid === process.pid) return s.start === undefined || s.start === startTime(process.pid);
  if (!isAlive(s.pid)) return false;
  const now = startTime(s.pid);
  return now === undefined || s.start === undefined || now === s.start;
}

/**
 * The target is still the process the record saw: its start time (a group: its leader's) known
 * and unchanged. A group whose leader is gone is left alone: nothing proves its members are ours.
 */
function stillOurs(t: GuardTarget): boolean {
  const now = startTime(t.pid);
  return now !== undefined && t.start !== undefined && now === t.start;
}

/**
 * The reaper's own fallback: a server with jobs keeps what the reaper is told in
 * `<PATCHBAY_HOME>/jobs/<pid>.json`, and deletes it at a clean end. A record whose server is gone
 * (its pid dead, or alive with another start time) is left over from a server that died with its
 * reaper (`kill -9` of both, the OOM killer): the next server to start SIGKILLs what of it is
 * still the same process, and deletes the record.
 */
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorMessage, logger } from '../../util/log.js';
import { isAlive } from '../../util/pid.js';
import { ensurePrivateDir } from '../../util/private-dir.js';
import { startTime } from '../../util/process-tree.js';

const log = logger('jobs');

/** A job's process group (`pid` is its id) or one of its processes, with its start time when known. */
export interface GuardTarget {
  job: string;
  kind: 'group' | 'pid';
  pid: number;
  start?: string;
}

interface Record {
  server: { pid: number; start?: string };
  targets: GuardTarget[];
}

export class JobLedger {
  private readonly file: string;

  constructor(private readonly dir: string) {
    this.file = join(dir, `${process.pid}.json`);
  }

  write(targets: GuardTarget[]): void {
    try {
      ensurePrivateDir(this.dir);
      const record: Record = { server: { pid: process.pid, start: startTime(process.pid) }, targets };
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
      files = readdirSync(dir).filter((f) => /^\d+\.json$/.test(f));
    } catch {
      return 0;
    }
    let signalled = 0;
    for (const f of files) {
      const path = join(dir, f);
      let record: Record;
      try {
        record = JSON.parse(readFileSync(path, 'utf8')) as Record;
        if (!Array.isArray(record.targets) || typeof record.server?.pid !== 'number') throw new Error('not a job record');
      } catch (e) {
        log.warn(`job ledger: dropping ${f}: ${errorMessage(e)}`);
        rmSync(path, { force: true });
        continue;
      }
      if (serverLives(record.server)) continue;
      for (const t of record.targets) {
        if (typeof t?.pid !== 'number' || t.pid <= 1 || !stillOurs(t)) continue;
        try {
          process.kill(t.kind === 'group' ? -t.pid : t.pid, 'SIGKILL');
          signalled++;
        } catch {
          // Gone meanwhile.
        }
      }
      if (signalled) log.info(`stopped ${signalled} process(es) left by a server that died (${f})`);
      rmSync(path, { force: true });
    }
    return signalled;
  }
}

function serverLives(s: Record['server']): boolean {
  if (s.pid === process.pid) return s.start !== undefined && s.start === startTime(process.pid);
  if (!isAlive(s.pid)) return false;
  const now = startTime(s.pid);
  return now === undefined || s.start === undefined || now === s.start;
}

/**
 * The target is still the process the record saw. A group whose leader is gone is still ours
 * (Linux hands out no pid in use as a group id) while a member lives; a lone pid only with
 * its start time unchanged.
 */
function stillOurs(t: GuardTarget): boolean {
  const now = startTime(t.pid);
  if (t.kind === 'group') {
    try {
      process.kill(-t.pid, 0);
    } catch {
      return false;
    }
    return now === undefined || t.start === undefined || now === t.start;
  }
  return now !== undefined && now === t.start;
}

/**
 * A control group per background job, where the system lets patchbay make one (Linux): every
 * process the job starts stays in its group, whatever it does (`setsid -f`, a double fork, a
 * daemon whose parent exited before anyone looked), and stopping the group stops all of them.
 * Used where a job does not run in the OS sandbox (whose pid namespace does the same).
 *
 *   - cgroup v2 (preferred): a child of this process's own cgroup, when that is writable (root, or
 *     a delegated subtree); killed with `cgroup.kill` (Linux 5.14+), else by SIGKILLing each
 *     member until none is left;
 *   - cgroup v1: the same in the `pids` (or `freezer`) hierarchy, killed member by member.
 *
 * A group is named `patchbay-<server pid>-<server start>-<n>`: a group whose server is gone is
 * found again by the next server (`sweepCgroups`), and only processes a job put there are in it,
 * so killing it never hits an unrelated process. Where nothing works, `probeCgroups` says why
 * and jobs fall back to their process group and the descendants a scan finds.
 *
 * `PATCHBAY_JOB_CGROUP`: `off` (no groups), `v1` (the v1 hierarchy even where v2 works), or an
 * absolute folder of a cgroup file system to make the groups in (tests).
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import { isAlive } from './pid.js';
import { startTime } from './process-tree.js';

export type CgroupSupport = { ok: true; version: 1 | 2; base: string } | { ok: false; why: string };

/** A job group's name; the sweep parses it back. */
const NAME = /^patchbay-(\d+)-(\d+|x)-\d+$/;
/** Rounds of "read the members, SIGKILL them" where there is no `cgroup.kill`. */
const KILL_ROUNDS = 50;

let cached: { key: string; support: CgroupSupport } | undefined;
let counter = 0;

/** Whether (and where) job groups can be made here: tried once per process (by making and filling one). */
export function probeCgroups(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): CgroupSupport {
  const key = `${platform} ${env.PATCHBAY_JOB_CGROUP ?? ''}`;
  if (cached?.key === key) return cached.support;
  const support = probe(env.PATCHBAY_JOB_CGROUP, platform);
  cached = { key, support };
  return support;
}

function probe(setting: string | undefined, platform: NodeJS.Platform): CgroupSupport {
  if (platform !== 'linux') return { ok: false, why: `no control groups on ${platform}` };
  if (setting === 'off') return { ok: false, why: 'PATCHBAY_JOB_CGROUP=off' };
  const found = setting && isAbsolute(setting) ? { version: versionOf(setting), base: setting } : findBase(setting === 'v1');
  if ('why' in found) return { ok: false, why: found.why };
  // Made, filled and removed once: a group we may create but not move a process into is no use.
  const path = join(found.base, `patchbay-probe-${process.pid}`);
  try {
    mkdirSync(path);
  } catch (e) {
    return { ok: false, why: `cannot make a cgroup in ${found.base}: ${(e as Error).message}` };
  }
  try {
    const moved = spawnSync('/bin/sh', ['-c', 'echo $$ > "$1"', 'sh', join(path, 'cgroup.procs')], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 5_000 });
    if (moved.status !== 0) return { ok: false, why: `cannot move a process into a cgroup in ${found.base}: ${moved.stderr.trim() || moved.error?.message || `exit ${String(moved.status)}`}` };
  } finally {
    removeCgroup(path);
  }
  return { ok: true, ...found };
}

/** The first cgroup file system of this process's mounts: v2 unless `v1`, then a v1 `pids` or `freezer` hierarchy. */
function findBase(v1: boolean): { version: 1 | 2; base: string } | { why: string } {
  let mounts: string;
  let own: string;
  try {
    mounts = readFileSync('/proc/self/mountinfo', 'utf8');
    own = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return { why: 'no /proc/self/mountinfo or /proc/self/cgroup' };
  }
  const memberships = new Map<string, string>();
  for (const line of own.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m) memberships.set(m[1], m[2]);
  }
  const points: Array<{ version: 1 | 2; point: string; path: string | undefined }> = [];
  for (const line of mounts.split('\n')) {
    // "id parent major:minor root mount-point options … - fstype source super-options"
    const [left, right] = line.split(' - ');
    if (!right) continue;
    const [fstype, , superOpts = ''] = right.split(' ');
    const fields = left.split(' ');
    const point = unescapeMount(fields[4] ?? '');
    // Only a mount of the hierarchy's root: a bind of a sub-group moves the paths.
    if (fields[3] !== '/') continue;
    if (fstype === 'cgroup2' && !v1) points.push({ version: 2, point, path: memberships.get('') });
    else if (fstype === 'cgroup') {
      const ctl = superOpts.split(',').find((o) => o === 'pids' || o === 'freezer');
      if (ctl) points.push({ version: 1, point, path: memberships.get(ctl) ?? [...memberships].find(([k]) => k.split(',').includes(ctl))?.[1] });
    }
  }
  points.sort((a, b) => b.version - a.version);
  for (const p of points) {
    if (p.path === undefined) continue;
    const base = join(p.point, p.path);
    try {
      accessSync(base, constants.W_OK);
      if (statSync(base).isDirectory()) return { version: p.version, base };
    } catch {
      // Not ours to write: the next one.
    }
  }
  if (!points.length) return { why: v1 ? 'no cgroup v1 pids or freezer hierarchy is mounted' : 'no cgroup file system is mounted' };
  return {
    why: `this process's cgroup is not writable (${points.map((p) => join(p.point, p.path ?? '?')).join(', ')}); run patchbay in a delegated cgroup (e.g. \`systemd-run --user --scope -p Delegate=yes\`)`,
  };
}

function versionOf(dir: string): 1 | 2 {
  return existsSync(join(dir, 'cgroup.controllers')) ? 2 : 1;
}

/** mountinfo escapes a space, tab, newline and backslash as octal. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** Makes a new job group; undefined where it cannot (the job then runs without one). */
export function createCgroup(support: Extract<CgroupSupport, { ok: true }>): string | undefined {
  const path = join(support.base, `patchbay-${process.pid}-${startTime(process.pid) ?? 'x'}-${++counter}`);
  try {
    mkdirSync(path);
    return path;
  } catch {
    return undefined;
  }
}

/**
 * The program and arguments that move themselves into `cgroup` first and then run `argv`: nothing
 * the command starts can fork before it is in the group. Where the move fails, it runs anyway.
 */
export function cgroupArgv(cgroup: string, argv: { command: string; args: string[] }): { command: string; args: string[] } {
  return { command: '/bin/sh', args: ['-c', 'echo $$ > "$1" 2>/dev/null; shift; exec "$@"', 'patchbay-job', join(cgroup, 'cgroup.procs'), argv.command, ...argv.args] };
}

/** The group's members now (none for a group that is gone). */
export function cgroupPids(cgroup: string): number[] {
  try {
    return readFileSync(join(cgroup, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(Number)
      .filter((p) => p > 1 && p !== process.pid);
  } catch {
    return [];
  }
}

/** `signal` to every member (SIGTERM, the polite first step). */
export function signalCgroup(cgroup: string, signal: NodeJS.Signals): void {
  for (const pid of cgroupPids(cgroup)) {
    try {
      process.kill(pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
}

/**
 * SIGKILL to every member, at once: `cgroup.kill` where there is one (the kernel leaves no gap
 * for a fork), else member by member until none is left (or the rounds run out).
 */
export function killCgroup(cgroup: string): void {
  if (!isJobCgroup(cgroup)) return;
  try {
    writeFileSync(join(cgroup, 'cgroup.kill'), '1');
    return;
  } catch {
    // No cgroup.kill (v1, or a kernel before 5.14): one by one.
  }
  for (let i = 0; i < KILL_ROUNDS; i++) {
    const pids = cgroupPids(cgroup).filter(isAlive);
    if (!pids.length) return;
    signalCgroup(cgroup, 'SIGKILL');
  }
}

/** Removes the (empty) group; false while it still has members, or when it is already gone. */
export function removeCgroup(cgroup: string): boolean {
  try {
    rmdirSync(cgroup);
    return true;
  } catch {
    return false;
  }
}

/**
 * Removes the group once its members are gone (a SIGKILLed process leaves it a moment later):
 * tried now and then every 50 ms for about `ms`; a group still busy after that is left to the
 * next server's sweep.
 */
export function removeCgroupSoon(cgroup: string, ms = 3_000): void {
  if (!isJobCgroup(cgroup) || removeCgroup(cgroup) || !existsSync(cgroup)) return;
  const end = Date.now() + ms;
  const tick = setInterval(() => {
    if (removeCgroup(cgroup) || !existsSync(cgroup) || Date.now() > end) clearInterval(tick);
  }, 50);
  tick.unref();
}

/** A path this module made: a job group's name (never a cgroup someone else owns). */
export function isJobCgroup(cgroup: string): boolean {
  return isAbsolute(cgroup) && (NAME.test(basename(cgroup)) || basename(cgroup).startsWith('patchbay-probe-'));
}

/**
 * The groups under `support.base` left by servers that are gone (their pid dead, or alive with
 * another start time): what is in them is killed and they are removed. Returns how many held
 * processes.
 */
export function sweepCgroups(support: CgroupSupport): number {
  if (!support.ok) return 0;
  let entries: string[];
  try {
    entries = readdirSync(support.base);
  } catch {
    return 0;
  }
  let stopped = 0;
  for (const name of entries) {
    // A probe cut short by a crash: empty, only its folder is left.
    const probe = /^patchbay-probe-(\d+)$/.exec(name);
    if (probe && !isAlive(Number(probe[1]))) removeCgroup(join(support.base, name));
    const m = NAME.exec(name);
    if (!m || serverLives(Number(m[1]), m[2])) continue;
    const path = join(support.base, name);
    if (cgroupPids(path).length) stopped++;
    killCgroup(path);
    removeCgroupSoon(path);
  }
  return stopped;
}

/** Unsure counts as alive: a live server's groups are never touched. */
function serverLives(pid: number, start: string): boolean {
  if (!isAlive(pid)) return false;
  const now = startTime(pid);
  return now === undefined || start === 'x' || now === start;
}

/**
 * A background job's cgroup (src/util/cgroup.ts, src/core/jobs/registry.ts), with real
 * processes: what a job detaches (`setsid -f`, a double fork: both re-parented before any scan
 * can see them) is stopped by a kill, by a dispose, when the job's shell exits, by the reaper at
 * the server's death, and by the next server's sweep of a dead one's ledger or groups (issue 31,
 * finding 3). Where no cgroup can be made, `doctor` says a grandchild may escape.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobReaper, JobRegistry } from '../../src/core/jobs/index.js';
import { JobLedger } from '../../src/core/jobs/ledger.js';
import { cgroupPids, killCgroup, probeCgroups, removeCgroup, sweepCgroups } from '../../src/util/cgroup.js';
import { isAlive } from '../../src/util/pid.js';
import { bootId, isZombie } from '../../src/util/process-tree.js';
import { tempDir, useJobTestCleanup } from './tools-helpers.js';
import { until } from '../support/until.js';

const { dirs, pids } = useJobTestCleanup();
const registries: JobRegistry[] = [];
const groups: string[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.dispose()));
  // Newest first: a folder of groups goes after the groups in it.
  for (const g of groups.splice(0).reverse()) {
    killCgroup(g);
    await until(() => removeCgroup(g) || !existsSync(g), `${g} to be removed`);
  }
});

/** Gone, or an exited process its new parent has not reaped yet. */
const dead = (pid: number) => !isAlive(pid) || isZombie(pid);

/** Starts a `setsid -f` sleep and a double-forked one; each writes its pid. Both are orphans at once. */
const DETACH = `setsid -f sh -c 'echo $$ > setsid.pid; exec sleep 1000'; (sh -c 'echo $$ > forked.pid; exec sleep 1000' &) &`;

async function detached(cwd: string): Promise<number[]> {
  const read = (f: string) => (existsSync(join(cwd, f)) ? Number(readFileSync(join(cwd, f), 'utf8')) : 0);
  await until(() => read('setsid.pid') > 0 && read('forked.pid') > 0, 'the detached pids');
  const found = [read('setsid.pid'), read('forked.pid')];
  pids.push(...found);
  expect(found.every(isAlive)).toBe(true);
  return found;
}

async function setup(env: NodeJS.ProcessEnv = process.env, reaper?: JobReaper) {
  const cwd = await tempDir('pb-jobs-cg-');
  dirs.push(cwd);
  const jobs = new JobRegistry({ graceMs: 200, env, ...(reaper ? { reaper } : {}) });
  registries.push(jobs);
  return { cwd, jobs };
}

function started(r: ReturnType<JobRegistry['start']>) {
  if (!r.ok) throw new Error(r.message);
  return r.job;
}

/** The job groups this process made that are still there. */
function ownGroups(base: string): string[] {
  return readdirSync(base).filter((n) => n.startsWith(`patchbay-${process.pid}-`));
}

const v2 = probeCgroups();
const v1Env = { ...process.env, PATCHBAY_JOB_CGROUP: 'v1' };

describe.runIf(v2.ok)('job cgroups', () => {
  const base = v2.ok ? v2.base : '';

  it('jobs.kill stops a setsid -f and a double-forked grandchild, and removes the group', async () => {
    const { cwd, jobs } = await setup();
    const job = started(jobs.start({ command: `${DETACH} sleep 1000`, cwd, chatId: 'c' }));
    const found = await detached(cwd);
    expect(ownGroups(base)).toHaveLength(1);
    expect(jobs.kill(job.id)).toBe(true);
    await until(() => found.every(dead), 'the detached grandchildren to be stopped');
    await until(() => ownGroups(base).length === 0, 'the group to be removed');
  });

  it('dispose stops them, and so does the end of the job shell that left them', async () => {
    const { cwd, jobs } = await setup();
    started(jobs.start({ command: `${DETACH} sleep 1000`, cwd, chatId: 'c' }));
    const running = await detached(cwd);
    await jobs.dispose();
    expect(running.filter((p) => !dead(p))).toEqual([]);

    const next = await setup();
    // The shell ends once both have written their pids: ending sooner, it would stop them before they could.
    const job = started(next.jobs.start({ command: `${DETACH} until [ -s setsid.pid ] && [ -s forked.pid ]; do sleep 0.05; done; echo left`, cwd: next.cwd, chatId: 'c' }));
    const left = await detached(next.cwd);
    await next.jobs.settle(job.id, 10_000);
    expect(next.jobs.get(job.id)!.status).toBe('completed');
    await until(() => left.every(dead), 'what the ended job left to be stopped');
  });

  it.runIf(probeCgroups(v1Env).ok)('in a cgroup v1 hierarchy too (killed member by member)', async () => {
    const { cwd, jobs } = await setup(v1Env);
    const job = started(jobs.start({ command: `${DETACH} sleep 1000`, cwd, chatId: 'c' }));
    const found = await detached(cwd);
    expect(jobs.doctorLine(false)).toMatch(/^Jobs: each background job runs in a cgroup of its own \(cgroup v1, /);
    expect(jobs.kill(job.id)).toBe(true);
    await until(() => found.every(dead), 'the detached grandchildren to be stopped');
  });

  it("the reaper stops a job's cgroup at EOF (the server died), and removes it", async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const reaper = new JobReaper(dir);
    const { cwd, jobs } = await setup(process.env, reaper);
    started(jobs.start({ command: `${DETACH} sleep 1000`, cwd, chatId: 'c' }));
    const found = await detached(cwd);
    reaper.flush();
    const group = (JSON.parse(readFileSync(reaper.ledgerFile!, 'utf8')).targets as Array<{ kind: string; path?: string }>).find((t) => t.kind === 'cgroup')?.path ?? '';
    groups.push(group);
    expect(group.startsWith(join(base, `patchbay-${process.pid}-`))).toBe(true);
    expect(cgroupPids(group)).toEqual(expect.arrayContaining(found));
    // What the kernel does when the server dies: the pipe's write end closes, and no dispose runs.
    (reaper as unknown as { child: { stdin: { end(): void } } }).child.stdin.end();
    await until(() => found.every(dead), 'the detached grandchildren to be stopped');
    await until(() => !existsSync(group), 'the group to be removed');
  });

  it("the next server's sweep stops a dead server's cgroups: those its ledger names, and those under its own cgroup it never got to name", async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const gone = spawnSync('true').pid!;
    // Its own folder of groups: every server that starts meanwhile (other test files) sweeps the
    // dead servers' groups of its own cgroup, and would stop these before the test looks.
    const own = join(base, `patchbay-sweep-test-${process.pid}`);
    mkdirSync(own);
    groups.push(own);
    const support = probeCgroups({ ...process.env, PATCHBAY_JOB_CGROUP: own });
    expect(support.ok).toBe(true);
    const fill = (name: string) => {
      const group = join(own, name);
      mkdirSync(group);
      groups.push(group);
      // As a job's wrapper does: in the group first, then the detaching.
      const c = spawn('/bin/sh', ['-c', `echo $$ > "$1"; ${DETACH} sleep 1000`, 'sh', join(group, 'cgroup.procs')], { cwd: dir, detached: true, stdio: 'ignore' });
      c.unref();
      pids.push(c.pid!);
      return { group, shell: c.pid! };
    };
    const named = fill(`patchbay-${gone}-1-7`);
    const found = await detached(dir);
    expect(cgroupPids(named.group)).toEqual(expect.arrayContaining([named.shell, ...found]));
    writeFileSync(join(dir, `${gone}.json`), JSON.stringify({ server: { pid: gone, start: '1' }, boot: bootId(), targets: [{ job: 'job-1', kind: 'cgroup', pid: 0, path: named.group }] }));
    expect(JobLedger.sweep(dir)).toBe(1);
    await until(() => [named.shell, ...found].every(dead), "the ledger's group to be stopped");
    await until(() => !existsSync(named.group), "the ledger's group to be removed");

    // No ledger record: the group's name says whose it is.
    for (const f of ['setsid.pid', 'forked.pid']) writeFileSync(join(dir, f), '');
    const unnamed = fill(`patchbay-${gone}-1-8`);
    const more = await detached(dir);
    // A live server's group (this process's) is left alone.
    const live = fill(`patchbay-${process.pid}-${readFileSync(`/proc/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]}-9`);
    expect(sweepCgroups(support)).toBe(1);
    await until(() => [unnamed.shell, ...more].every(dead), 'the unnamed group to be stopped');
    expect(isAlive(live.shell)).toBe(true);
  });
});

describe.runIf(process.platform === 'linux')('jobs without a cgroup', () => {
  it('still stop what they can see; doctor says a detached grandchild may escape', async () => {
    const { cwd, jobs } = await setup({ ...process.env, PATCHBAY_JOB_CGROUP: 'off' });
    const job = started(jobs.start({ command: 'echo $$ > sh.pid; sleep 1000', cwd, chatId: 'c' }));
    await until(() => existsSync(join(cwd, 'sh.pid')) && readFileSync(join(cwd, 'sh.pid'), 'utf8').length > 0, 'sh.pid');
    expect(jobs.doctorLine(false)).toBe('Jobs: no cgroup for background jobs (PATCHBAY_JOB_CGROUP=off): a process a job detaches (setsid, a double fork) before patchbay sees it may outlive the job');
    expect(jobs.doctorLine(true)).toBe("Jobs: background jobs run in the sandbox's pid namespace: every process a job starts is stopped with it");
    expect(jobs.kill(job.id)).toBe(true);
    const sh = Number(readFileSync(join(cwd, 'sh.pid'), 'utf8'));
    await until(() => dead(sh), 'the job to be stopped');
  });
});

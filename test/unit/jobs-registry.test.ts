/**
 * The job registry with real processes (src/core/jobs/registry.ts): ECA's running-jobs limit
 * (`background_tasks.clj` `register-shell-job!`, `max-jobs`), eviction of finished jobs
 * (`evict-stale-jobs!`), a killed job staying killed (`update-job-on-exit`), and what patchbay
 * adds: what a job's shell leaves running is stopped when it exits, and dispose stops every tree.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENDED_TAIL_CHARS, JobReaper, JobRegistry, jobEndedText } from '../../src/core/jobs/index.js';
import { isAlive } from '../../src/util/pid.js';
import { removeDir, tempDir } from './tools-helpers.js';

const dirs: string[] = [];
const registries: JobRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.dispose()));
  await Promise.all(dirs.splice(0).map(removeDir));
});

async function setup(opts: ConstructorParameters<typeof JobRegistry>[0] = {}) {
  const cwd = await tempDir('pb-jobs-');
  dirs.push(cwd);
  let changes = 0;
  const jobs = new JobRegistry({ ...opts, onChange: () => changes++ });
  registries.push(jobs);
  return { cwd, jobs, changes: () => changes };
}

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function started(r: ReturnType<JobRegistry['start']>) {
  if (!r.ok) throw new Error(r.message);
  return r.job;
}

describe('JobRegistry', () => {
  it('stops what the shell left running when it exits, and calls the job completed', async () => {
    const { cwd, jobs } = await setup({ graceMs: 200 });
    const job = started(jobs.start({ command: 'sleep 30 & echo $! > stray.pid; echo started', cwd, chatId: 'c' }));
    await jobs.settle(job.id, 10_000);
    expect(jobs.get(job.id)).toMatchObject({ status: 'completed', exitCode: 0 });
    expect(jobs.peek(job.id)!.lines).toEqual([{ text: 'started', stream: 'stdout' }]);
    await until(() => existsSync(join(cwd, 'stray.pid')), 'stray.pid');
    const stray = Number(readFileSync(join(cwd, 'stray.pid'), 'utf8'));
    await until(() => !isAlive(stray), 'the stray sleep to be stopped');
  });

  it('refuses a job past the running limit; a killed job stays killed after its exit; kill of a finished job is false', async () => {
    const { cwd, jobs, changes } = await setup({ maxRunning: 1 });
    const a = started(jobs.start({ command: 'sleep 30', cwd, chatId: 'c' }));
    expect(jobs.start({ command: 'true', cwd, chatId: 'c' })).toEqual({ ok: false, message: 'Maximum number of background jobs reached (1). Kill an existing job first.' });
    expect(jobs.kill(a.id)).toBe(true);
    await jobs.settle(a.id, 10_000);
    expect(jobs.get(a.id)).toMatchObject({ status: 'killed', exitCode: null });
    expect(jobs.kill(a.id)).toBe(false);
    expect(jobs.kill('job-404')).toBe(false);
    // start, kill; the refused one and the exit after the kill change nothing.
    expect(changes()).toBe(2);
  });

  it('evicts a finished job after keepFinishedMs and says so', async () => {
    const { cwd, jobs, changes } = await setup({ keepFinishedMs: 100 });
    const job = started(jobs.start({ command: 'exit 2', cwd, chatId: 'c' }));
    await jobs.settle(job.id, 10_000);
    expect(jobs.get(job.id)).toMatchObject({ status: 'failed', exitCode: 2 });
    await until(() => jobs.list().length === 0, 'eviction');
    expect(changes()).toBe(3); // start, fail, evict
    expect(jobs.peek(job.id)).toBeUndefined();
  });

  it('a line longer than maxLineChars is cut and marked, at once when it has no end yet; a working directory that does not exist fails the job', async () => {
    const { cwd, jobs } = await setup({ maxLineChars: 10 });
    const long = started(jobs.start({ command: 'printf "%0100d\\n" 0; echo short', cwd, chatId: 'c' }));
    await jobs.settle(long.id, 10_000);
    expect(jobs.peek(long.id)!.lines.map((l) => l.text)).toEqual(['0000000000…', 'short']);
    // A line that never ends shows its start while the job runs.
    const endless = started(jobs.start({ command: 'printf "%0100d" 0; printf "%0100d" 0; sleep 30', cwd, chatId: 'c' }));
    await until(() => (jobs.peek(endless.id)?.lines.length ?? 0) > 0, 'the endless line to show');
    expect(jobs.peek(endless.id)!.lines).toEqual([{ text: '0000000000…', stream: 'stdout' }]);
    expect(jobs.kill(endless.id)).toBe(true);
    const bad = started(jobs.start({ command: 'true', cwd: join(cwd, 'nope'), chatId: 'c' }));
    await jobs.settle(bad.id, 10_000);
    expect(jobs.get(bad.id)).toMatchObject({ status: 'failed', exitCode: null });
    expect(jobs.peek(bad.id)!.lines[0].text).toContain('Could not start the shell');
  });

  it('dispose stops every job, one that ignores SIGTERM too, and starts no more', async () => {
    const { cwd, jobs } = await setup({ graceMs: 200 });
    const job = started(jobs.start({ command: `trap '' TERM; echo $$ > sh.pid; while true; do sleep 0.1; done`, cwd, chatId: 'c' }));
    await until(() => existsSync(join(cwd, 'sh.pid')), 'sh.pid');
    const pid = Number(readFileSync(join(cwd, 'sh.pid'), 'utf8'));
    await jobs.dispose();
    await until(() => !isAlive(pid), 'the stubborn shell to be gone');
    expect(jobs.get(job.id)!.status).toBe('killed');
    expect(jobs.start({ command: 'true', cwd, chatId: 'c' }).ok).toBe(false);
  });

  it('keeps at most maxFinished finished jobs, evicting the oldest to have ended at once', async () => {
    const { cwd, jobs } = await setup({ maxFinished: 2 });
    for (let i = 0; i < 4; i++) await jobs.settle(started(jobs.start({ command: `echo ${i}`, cwd, chatId: 'c' })).id, 10_000);
    expect(jobs.list().map((j) => j.id)).toEqual(['job-3', 'job-4']);
    expect(jobs.peek('job-1')).toBeUndefined();
  });

  it('tells onEnded of a killed job too (ECA monitor-process-exit! on-exit), with a tail of at most ENDED_TAIL_CHARS', async () => {
    const ended: Array<{ id: string; status: string; text: string }> = [];
    const { cwd, jobs } = await setup({ graceMs: 200, onEnded: (job, tail) => ended.push({ id: job.id, status: job.status, text: jobEndedText(job, tail) }) });
    const job = started(jobs.start({ command: 'echo up; sleep 30', cwd, chatId: 'c' }));
    await until(() => (jobs.peek(job.id)?.lines.length ?? 0) > 0, 'output');
    expect(jobs.kill(job.id)).toBe(true);
    await until(() => ended.length === 1, 'the end to be told');
    expect(ended[0]).toEqual({ id: job.id, status: 'killed', text: 'Background job job-1 (`echo up; sleep 30`) killed with exit code none.\nLast 1 lines of output:\nup' });
    // 20 lines of 1000 characters: the notice keeps the newest that fit in ENDED_TAIL_CHARS.
    const big = started(jobs.start({ command: 'for i in $(seq 10 29); do printf "%0998d$i\\n" 0; done', cwd, chatId: 'c' }));
    await until(() => ended.length === 2, 'the big end');
    expect(ended[1].id).toBe(big.id);
    expect(ended[1].text.length).toBeLessThan(ENDED_TAIL_CHARS + 200);
    expect(ended[1].text).toContain('[17 lines / 17000 characters omitted]');
    expect(ended[1].text.endsWith('29')).toBe(true);
  });

  it('without a cgroup, stops a process that left the group (setsid) when the job ends, and one a killed job left too, once a scan has seen it', async () => {
    // What the reaper is told: the scan that found a descendant tells it.
    const tracked = new Set<number>();
    const reaper = {
      track: (_job: string, kind: 'group' | 'pid', pids: Array<{ pid: number }>) => kind === 'pid' && pids.forEach((p) => tracked.add(p.pid)),
      cgroup: () => {},
      untrack: () => {},
      forget: () => {},
      close: () => {},
      pid: undefined,
    };
    const { cwd, jobs } = await setup({ graceMs: 200, scanMs: 100, reaper, env: { ...process.env, PATCHBAY_JOB_CGROUP: 'off' } });
    const pidIn = (f: string) => Number(readFileSync(join(cwd, f), 'utf8'));
    const job = started(jobs.start({ command: 'setsid sleep 300 & echo $! > escaped.pid; sleep 1', cwd, chatId: 'c' }));
    await jobs.settle(job.id, 10_000);
    expect(jobs.get(job.id)!.status).toBe('completed');
    const escaped = pidIn('escaped.pid');
    await until(() => !isAlive(escaped), 'the escaped sleep to be stopped');
    const killed = started(jobs.start({ command: 'setsid sleep 300 & echo $! > escaped2.pid; sleep 300', cwd, chatId: 'c' }));
    await until(() => existsSync(join(cwd, 'escaped2.pid')), 'escaped2.pid');
    const escaped2 = pidIn('escaped2.pid');
    await until(() => tracked.has(escaped2), 'a scan to see the escaped sleep');
    expect(jobs.kill(killed.id)).toBe(true);
    await until(() => !isAlive(escaped2), "the killed job's escaped sleep to be stopped");
  });

  it('a job that starts a short-lived child every scan keeps what the reaper holds to the live ones (dead pids are dropped)', async () => {
    const reaper = new JobReaper();
    let told = 0;
    const track = reaper.track.bind(reaper);
    reaper.track = (job, kind, pids) => {
      if (kind === 'pid') told += pids.length;
      track(job, kind, pids);
    };
    const { cwd, jobs } = await setup({ graceMs: 200, scanMs: 30, reaper });
    started(jobs.start({ command: 'while true; do sleep 0.05; done', cwd, chatId: 'c' }));
    await until(() => told >= 10, 'ten short-lived children to be seen');
    // The group plus the child alive now (and at most one the last scan has not seen die).
    expect(reaper.tracked().length).toBeLessThanOrEqual(3);
  });
});

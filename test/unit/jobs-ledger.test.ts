/**
 * The reaper's fallback (src/core/jobs/ledger.ts): what a server that died with its reaper left
 * running is stopped by the next server's sweep, only where the record still names the same
 * processes (start times against pid reuse), and never a live server's.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JobLedger } from '../../src/core/jobs/ledger.js';
import { JobReaper } from '../../src/core/jobs/reaper.js';
import { isAlive } from '../../src/util/pid.js';
import { bootId, isZombie, startTime } from '../../src/util/process-tree.js';
import { tempDir, useJobTestCleanup } from './tools-helpers.js';

const { dirs, pids } = useJobTestCleanup();

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A `sleep` in a process group of its own, as a job is. */
function sleeper(): number {
  const c = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  c.unref();
  pids.push(c.pid!);
  return c.pid!;
}

describe.runIf(process.platform === 'linux')('JobLedger', () => {
  it("a dead server's record: its groups and same-start pids are SIGKILLed, a reused pid is not; the record goes", async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const dead = spawnSync('true').pid!;
    const group = sleeper();
    const reused = sleeper();
    writeFileSync(
      join(dir, `${dead}.json`),
      JSON.stringify({
        server: { pid: dead, start: '1' },
        boot: bootId(),
        targets: [
          { job: 'job-1', kind: 'group', pid: group, start: startTime(group) },
          // The same pid, another start time: an unrelated process now.
          { job: 'job-2', kind: 'pid', pid: reused, start: '1' },
        ],
      }),
    );
    expect(JobLedger.sweep(dir)).toBe(1);
    await until(() => !isAlive(group), 'the group to be stopped');
    expect(isAlive(reused)).toBe(true);
    expect(existsSync(join(dir, `${dead}.json`))).toBe(false);
  });

  it("a live server's record is left alone; a record that is not one is dropped", async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const group = sleeper();
    const live = new JobLedger(dir);
    live.write([{ job: 'job-1', kind: 'group', pid: group, start: startTime(group) }]);
    writeFileSync(join(dir, '12345.json'), '{not json');
    expect(JobLedger.sweep(dir)).toBe(0);
    expect(isAlive(group)).toBe(true);
    expect(JSON.parse(readFileSync(live.file, 'utf8')).targets).toHaveLength(1);
    expect(existsSync(join(dir, '12345.json'))).toBe(false);
    live.remove();
    expect(existsSync(live.file)).toBe(false);
  });

  it('the reaper writes what it is told and removes the record at a clean close', async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    mkdirSync(dir, { recursive: true });
    const reaper = new JobReaper(dir);
    const group = sleeper();
    reaper.track('job-1', 'group', [{ pid: group, start: startTime(group) }]);
    const file = reaper.ledgerFile!;
    // Debounced: written by the timer (or a flush), not at every change.
    expect(existsSync(file)).toBe(false);
    reaper.flush();
    expect(JSON.parse(readFileSync(file, 'utf8')).targets).toEqual([{ job: 'job-1', kind: 'group', pid: group, start: startTime(group) }]);
    reaper.forget('job-1');
    await until(() => JSON.parse(readFileSync(file, 'utf8')).targets.length === 0, 'the debounced write', 5_000);
    reaper.close();
    expect(existsSync(file)).toBe(false);
    // Told nothing live at its EOF, the reaper exits and stops nothing.
    await until(() => !isAlive(reaper.pid!), 'the reaper to exit');
    expect(isAlive(group)).toBe(true);
  });

  it('at EOF the reaper stops a group it was told of and not told to forget, SIGKILL for one that ignores SIGTERM', async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const reaper = new JobReaper(dir);
    const c = spawn('/bin/sh', ['-c', "trap '' TERM; while true; do sleep 0.1; done"], { detached: true, stdio: 'ignore' });
    c.unref();
    pids.push(c.pid!);
    await until(() => startTime(c.pid!) !== undefined, 'the shell');
    reaper.track('job-1', 'group', [{ pid: c.pid!, start: startTime(c.pid!) }]);
    reaper.close();
    await until(() => !isAlive(c.pid!), 'the stubborn group to be stopped');
    await until(() => !isAlive(reaper.pid!), 'the reaper to exit');
  });

  it('a group whose leader is gone, a target without a start time, and a record from another boot (or none) are left alone; such records go', async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    // The leader (sh) exits at once; its sleep lives on in the group the record names.
    const sh = spawn('/bin/sh', ['-c', 'sleep 300 & echo $!; read x'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
    const member = Number(await new Promise<string>((r) => sh.stdout!.once('data', (d: Buffer) => r(d.toString()))));
    pids.push(member);
    const leaderStart = startTime(sh.pid!);
    sh.stdin!.end();
    await new Promise((r) => sh.once('exit', r));
    const plain = sleeper();
    const other = sleeper();
    const dead = spawnSync('true').pid!;
    const record = (boot: string | undefined, targets: object[]) => JSON.stringify({ server: { pid: dead, start: '1' }, ...(boot ? { boot } : {}), targets });
    writeFileSync(
      join(dir, `${dead}.json`),
      record(bootId(), [
        { job: 'job-1', kind: 'group', pid: sh.pid, start: leaderStart },
        { job: 'job-2', kind: 'group', pid: plain },
        { job: 'job-2', kind: 'pid', pid: plain },
      ]),
    );
    writeFileSync(join(dir, `${dead}-b.json`), record('another-boot', [{ job: 'job-3', kind: 'group', pid: other, start: startTime(other) }]));
    writeFileSync(join(dir, `${dead}-c.json`), record(undefined, [{ job: 'job-4', kind: 'pid', pid: other, start: startTime(other) }]));
    writeFileSync(join(dir, `${dead}-d.json.tmp`), '{"server"');
    expect(JobLedger.sweep(dir)).toBe(0);
    // Orphaned, a killed member may linger as a zombie: that is not alive.
    expect(isAlive(member) && !isZombie(member)).toBe(true);
    expect(isAlive(plain)).toBe(true);
    expect(isAlive(other)).toBe(true);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('several ledgers in one process keep separate records: removing one leaves the other', async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const a = new JobLedger(dir);
    const b = new JobLedger(dir);
    a.write([]);
    b.write([]);
    expect(a.file).not.toBe(b.file);
    a.remove();
    expect(existsSync(b.file)).toBe(true);
    b.remove();
  });

  it('the reaper deletes the record once it has reaped at EOF (the server died without its clean close)', async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const reaper = new JobReaper(dir);
    const group = sleeper();
    reaper.track('job-1', 'group', [{ pid: group, start: startTime(group) }]);
    reaper.flush();
    expect(existsSync(reaper.ledgerFile!)).toBe(true);
    // What the kernel does when the server dies: the pipe's write end closes, and close() never runs.
    (reaper as unknown as { child: { stdin: { end(): void } } }).child.stdin.end();
    await until(() => !isAlive(group), 'the group to be stopped');
    await until(() => !existsSync(reaper.ledgerFile!), 'the record to be deleted');
    await until(() => !isAlive(reaper.pid!), 'the reaper to exit');
  });

  it('the reaper leaves a group alone whose leader is gone at EOF', async () => {
    const dir = await tempDir('pb-ledger-');
    dirs.push(dir);
    const reaper = new JobReaper(dir);
    const sh = spawn('/bin/sh', ['-c', 'sleep 300 & echo $!; read x'], { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
    const member = Number(await new Promise<string>((r) => sh.stdout!.once('data', (d: Buffer) => r(d.toString()))));
    pids.push(member);
    reaper.track('job-1', 'group', [{ pid: sh.pid!, start: startTime(sh.pid!) }]);
    sh.stdin!.end();
    await new Promise((r) => sh.once('exit', r));
    reaper.close();
    await until(() => !isAlive(reaper.pid!), 'the reaper to exit');
    expect(isAlive(member) && !isZombie(member)).toBe(true);
  });

  it('with no job left for idleMs the reaper exits (no NODE_OPTIONS in its env); the next job starts a new one', async () => {
    const saved = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = '--no-warnings';
    let reaper: JobReaper;
    try {
      reaper = new JobReaper(undefined, { idleMs: 100 });
      const group = sleeper();
      reaper.track('job-1', 'group', [{ pid: group, start: startTime(group) }]);
    } finally {
      if (saved === undefined) delete process.env.NODE_OPTIONS;
      else process.env.NODE_OPTIONS = saved;
    }
    const first = reaper.pid!;
    expect(
      readFileSync(`/proc/${first}/environ`, 'utf8')
        .split('\0')
        .some((e) => e.startsWith('NODE_OPTIONS=')),
    ).toBe(false);
    reaper.forget('job-1');
    await until(() => !isAlive(first), 'the idle reaper to exit');
    const next = sleeper();
    reaper.track('job-2', 'group', [{ pid: next, start: startTime(next) }]);
    expect(reaper.pid).not.toBe(first);
    expect(isAlive(reaper.pid!)).toBe(true);
    reaper.close();
    await until(() => !isAlive(next), 'the second job to be stopped by the new reaper');
  });
});

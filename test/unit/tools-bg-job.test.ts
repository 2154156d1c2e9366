/**
 * `shell_command` `background` and `bg_job` against a real registry and real processes, as ECA's
 * `src/eca/features/tools/shell.clj` `background-shell-command` and
 * `src/eca/features/tools/background.clj` answer.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobRegistry } from '../../src/core/jobs/index.js';
import { isAlive } from '../../src/util/pid.js';
import { bgJobTool, shellCommandTool } from '../../src/core/tools/native/index.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

const dirs: string[] = [];
const registries: JobRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.dispose()));
  await Promise.all(dirs.splice(0).map(removeDir));
});

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function setup() {
  const root = await tempDir('pb-bg-');
  dirs.push(root);
  const jobs = new JobRegistry({ graceMs: 200 });
  registries.push(jobs);
  return { root, jobs, shell: shellCommandTool({ jobs }), bg: bgJobTool(jobs), ctx: context([root]) };
}

describe('background shell_command and bg_job', () => {
  it('without a registry, background is refused and nothing runs', async () => {
    const root = await tempDir('pb-bg-');
    dirs.push(root);
    const r = await shellCommandTool().call({ command: 'touch ran', background: 'x' }, context([root]));
    expect(r.error).toBe(true);
    expect(text(r)).toContain('Background jobs are not available here');
    expect(existsSync(join(root, 'ran'))).toBe(false);
  });

  it('bg_job: no jobs, an unknown job, a missing job_id, a job no longer running', async () => {
    const { bg, shell, ctx } = await setup();
    expect(text(await bg.call({ action: 'list' }, ctx))).toBe('No background jobs.');
    expect(await bg.call({ action: 'kill', job_id: 'job-9' }, ctx)).toMatchObject({ error: true, outputs: [{ text: 'Background job job-9 not found.' }] });
    expect(await bg.call({ action: 'kill' }, ctx)).toMatchObject({ error: true, outputs: [{ text: 'job_id is required for kill action.' }] });
    expect((await bg.call({ action: 'stop' }, ctx)).error).toBe(true);
    const done = await shell.call({ command: 'echo hi', background: true }, ctx);
    expect(done.error).toBeFalsy();
    expect(text(done)).toBe('Background job job-1 already exited (exit 0); processes it left running were stopped; do not end a background command with `&`.\nOutput:\nhi');
    expect(await bg.call({ action: 'kill', job_id: 'job-1' }, ctx)).toMatchObject({ error: true, outputs: [{ text: 'Background job job-1 is not running (status: completed).' }] });
    expect(text(await bg.call({ action: 'read_output', job_id: 'job-1' }, ctx))).toBe('Job job-1 — completed (exit 0)\n\n(no new output)');
  });

  it('a job killed during the first 2 seconds is reported so; the call returns at once when its signal aborts', async () => {
    const { jobs, shell, ctx } = await setup();
    setTimeout(() => jobs.kill('job-1'), 300);
    const r = await shell.call({ command: 'echo up; sleep 30', background: 'sleeper' }, ctx);
    expect(r.error).toBe(true);
    expect(text(r)).toBe('Background job job-1 was killed before it had run 2 seconds.\nOutput:\nup');
    const abort = new AbortController();
    const call = shell.call({ command: 'sleep 30', background: 'other' }, { ...ctx, signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    expect(text(await call)).toContain('Background job job-2 started.');
    expect(jobs.get('job-2')!.status).toBe('running');
  });

  it('a command ending in `&` is not reported started: it exited and what it left is stopped; the usage text warns', async () => {
    const { root, shell, ctx } = await setup();
    const r = await shell.call({ command: 'sleep 30 & echo $! > left.pid', background: 'server' }, ctx);
    expect(text(r)).toContain('Background job job-1 already exited (exit 0); processes it left running were stopped');
    expect(text(r)).not.toContain('started');
    const pid = Number(readFileSync(join(root, 'left.pid'), 'utf8'));
    await until(() => !isAlive(pid), 'the process left running to be stopped');
    expect(shell.description).toContain('Do not end a background command with `&`');
    // background null is a foreground call (ECA's `(if (get arguments "background") …)`).
    expect(text(await shell.call({ command: 'echo fg', background: null }, ctx))).toBe('fg\n\nExit code: 0');
  });

  it('a call stopped before its job starts starts nothing (ECA: "Tool call is stopping, background job not started.")', async () => {
    const { root, jobs, shell, ctx } = await setup();
    const abort = new AbortController();
    // Stopped while the call checks its working directory (after it began, before the job starts).
    const call = shell.call({ command: 'touch ran; sleep 30', background: 'x' }, { ...ctx, signal: abort.signal });
    abort.abort();
    const r = await call;
    expect(r).toMatchObject({ error: true, outputs: [{ text: 'Tool call is stopping, background job not started.' }] });
    expect(jobs.list()).toEqual([]);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(join(root, 'ran'))).toBe(false);
  });

  it('initial output and read_output hand the model at most maxOutputChars, its newest part, with what was omitted', async () => {
    const root = await tempDir('pb-bg-');
    dirs.push(root);
    const jobs = new JobRegistry({ graceMs: 200 });
    registries.push(jobs);
    const shell = shellCommandTool({ jobs, maxOutputChars: 100 });
    const bg = bgJobTool(jobs, 100);
    const ctx = context([root]);
    // 50 lines of 10 characters (with their numbers) at once, then 50 more after a pause.
    const cmd = 'for i in $(seq 1000 1049); do echo "line--$i"; done; sleep 3; for i in $(seq 2000 2049); do echo "line--$i"; done; sleep 30';
    const first = text(await shell.call({ command: cmd, background: 'chatty' }, ctx));
    expect(first).toContain('Background job job-1 started.');
    const initial = first.slice(first.indexOf('Initial output:\n') + 'Initial output:\n'.length);
    expect(initial.length).toBeLessThan(200);
    expect(initial).toMatch(/^\[41 lines \/ 410 characters omitted\]\n/);
    expect(initial.endsWith('line--1049')).toBe(true);
    await until(() => (jobs.peek('job-1')?.lines.length ?? 0) >= 100, 'the second burst');
    const read = text(await bg.call({ action: 'read_output', job_id: 'job-1' }, ctx));
    expect(read).toContain('[41 lines / 410 characters omitted]\n');
    expect(read.endsWith('line--2049')).toBe(true);
    expect(read.length).toBeLessThan(250);
  });
});

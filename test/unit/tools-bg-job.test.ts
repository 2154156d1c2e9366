/**
 * `shell_command` `background` and `bg_job` against a real registry and real processes, as ECA's
 * `src/eca/features/tools/shell.clj` `background-shell-command` and
 * `src/eca/features/tools/background.clj` answer.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobRegistry } from '../../src/core/jobs/index.js';
import { bgJobTool, shellCommandTool } from '../../src/core/tools/native/index.js';
import { context, removeDir, tempDir, text } from './tools-helpers.js';

const dirs: string[] = [];
const registries: JobRegistry[] = [];
afterEach(async () => {
  await Promise.all(registries.splice(0).map((r) => r.dispose()));
  await Promise.all(dirs.splice(0).map(removeDir));
});

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
    expect(text(done)).toContain('Background job job-1 started.');
    expect(text(done)).toContain('Initial output:\nhi');
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
});

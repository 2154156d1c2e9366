/**
 * Off Linux there are no start times (src/util/process-tree.ts `startTime` is undefined): a pid the
 * registry once saw may be another process now, and nothing proves it is not. Dispose must then
 * signal only the job's live tree, never a remembered pid (src/core/jobs/registry.ts `strays`).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { JobRegistry } from '../../src/core/jobs/index.js';
import { isAlive } from '../../src/util/pid.js';
import { tempDir, useJobTestCleanup } from './tools-helpers.js';

vi.mock('../../src/util/process-tree.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../src/util/process-tree.js')>()),
  startTime: () => undefined,
}));

const { dirs, pids } = useJobTestCleanup();

describe.runIf(process.platform !== 'win32')('JobRegistry without start times', () => {
  it('dispose leaves alone a live process whose pid the job once had (unknown start time is no proof)', async () => {
    const cwd = await tempDir('pb-jobs-');
    dirs.push(cwd);
    const jobs = new JobRegistry({ graceMs: 200 });
    const r = jobs.start({ command: 'sleep 300', cwd, chatId: 'c' });
    if (!r.ok) throw new Error(r.message);
    // Stands for a pid the job's tree once had, now reused by an unrelated process.
    const other = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
    other.unref();
    pids.push(other.pid!);
    (jobs as unknown as { jobs: Map<string, { seen: Map<number, string | undefined> }> }).jobs.get(r.job.id)!.seen.set(other.pid!, undefined);
    await jobs.dispose();
    expect(jobs.get(r.job.id)!.status).toBe('killed');
    expect(isAlive(other.pid!)).toBe(true);
  });
});

/**
 * Issue 31, finding 3, over the built binary: a background job's grandchildren that detach at
 * once (`setsid -f`, and a double fork: both re-parented before any scan of the job's tree can
 * see them) are stopped by `jobs/kill`, by the server's exit, and, when the server and its reaper
 * are SIGKILLed together, at the latest by the next start. With the sandbox their pid namespace
 * dies with bwrap; without it the job's cgroup (src/util/cgroup.ts) holds them.
 */
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cliConfig, ECA, EcaProc, fakeProviderConfig, runPatchbay, tempDir, useFakeLlmSuite, useTempDirs, workspace } from './harness.js';
import { probeCgroups } from '../../src/util/cgroup.js';
import { isAlive } from '../../src/util/pid.js';
import { isZombie } from '../../src/util/process-tree.js';
import { probeSandbox } from '../../src/util/sandbox.js';
import { reaperOf } from '../support/job-reaper.js';
import { until } from '../support/until.js';

const scratch = useTempDirs();
const { llm, track } = useFakeLlmSuite();

/** The grandchildren this test found: a failing test must not leave them running. */
const seen: number[] = [];
afterEach(() => {
  for (const pid of seen.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone, as it should be */
    }
  }
});

/** Every process whose command line is `argv` (host pids: a sandboxed job's own are its namespace's). */
function processesRunning(...argv: string[]): number[] {
  const want = argv.join('\0') + '\0';
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8') === want && !isZombie(Number(entry))) found.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

const dead = (pid: number) => !isAlive(pid) || isZombie(pid);

const sandboxWorks = (await probeSandbox(process.env)).ok;
const cgroupsWork = probeCgroups().ok;

const modes = [
  { name: 'in the sandbox', sandbox: { enabled: true }, runs: process.platform === 'linux' && sandboxWorks },
  { name: 'without the sandbox (a cgroup)', sandbox: { enabled: false }, runs: process.platform === 'linux' && cgroupsWork },
] as const;

for (const mode of modes) {
  describe.runIf(mode.runs)(`job grandchildren ${mode.name}`, () => {
    const config = () => fakeProviderConfig(llm().url, 'openai-chat', { toolCall: { approval: { byDefault: 'allow' } }, sandbox: mode.sandbox });

    async function boot() {
      const root = scratch(workspace({}));
      const home = scratch(tempDir());
      const p = track(new EcaProc({ home, config: config() }));
      await p.initialize(root);
      await p.waitFor((m) => m.method === 'config/updated');
      return { p, root, home };
    }

    /**
     * Starts a job that detaches `sleep <tag>.1` with `setsid -f` and `sleep <tag>.2` with a
     * double fork, then waits in `sleep <tag>.3`; returns the host pids of the two.
     */
    async function startDetaching(p: EcaProc): Promise<number[]> {
      const tag = `9${randomInt(100_000, 999_999)}`;
      const command = `setsid -f sleep ${tag}.1; (sleep ${tag}.2 &) & sleep ${tag}.3`;
      llm().script([{ toolCall: { id: 'start', name: 'patchbay__shell_command', args: { command, background: 'detacher' } } }], [{ text: 'started' }]);
      const chatId = (await p.request(ECA.chatPrompt, { message: 'start it' })).result.chatId;
      await p.turnDone(chatId);
      let found: number[] = [];
      await until(() => (found = [...processesRunning('sleep', `${tag}.1`), ...processesRunning('sleep', `${tag}.2`)]).length === 2, 'the detached sleeps');
      seen.push(...found);
      return found;
    }

    it("doctor says how a job's grandchildren are stopped", async () => {
      const home = scratch(tempDir());
      const doctor = await runPatchbay(['doctor'], { home, cwd: scratch(workspace({})), env: { PATCHBAY_CONFIG: cliConfig({ sandbox: mode.sandbox }) }, timeoutMs: 60_000 });
      expect(doctor.stdout).toMatch(
        mode.sandbox.enabled
          ? /Jobs: background jobs run in the sandbox's pid namespace: every process a job starts is stopped with it/
          : /Jobs: each background job runs in a cgroup of its own \(cgroup v[12], \//,
      );
    });

    it('jobs/kill stops a setsid -f and a double-forked grandchild', async () => {
      const { p } = await boot();
      const found = await startDetaching(p);
      expect((await p.request(ECA.jobsKill, { jobId: 'job-1' })).result).toEqual({ killed: true });
      await until(() => found.every(dead), 'the detached grandchildren to be stopped');
    });

    it("the server's exit stops them", async () => {
      const { p } = await boot();
      const found = await startDetaching(p);
      await p.stop();
      await p.exited;
      await until(() => found.every(dead), 'the detached grandchildren to be stopped');
    });

    it('a server SIGKILLed with its reaper: the next start stops them at the latest', async () => {
      const { p, root, home } = await boot();
      const found = await startDetaching(p);
      const reaper = reaperOf(p.child.pid!);
      expect(reaper).toBeDefined();
      const jobsDir = join(home, '.patchbay', 'jobs');
      const record = () => (existsSync(jobsDir) ? readdirSync(jobsDir).filter((f) => f.endsWith('.json')) : []);
      await until(() => record().length === 1, 'the ledger record');
      // The OOM killer's way: both at once, no EOF handled, no dispose.
      process.kill(reaper!, 'SIGKILL');
      p.child.kill('SIGKILL');
      await p.exited;
      await until(() => dead(reaper!), 'the reaper to be gone');
      // The sandbox's namespace has died with bwrap (--die-with-parent); a cgroup waits for the next start.
      if (mode.sandbox.enabled) await until(() => found.every(dead), 'the sandboxed grandchildren to die with bwrap');
      else expect(found.every(isAlive)).toBe(true);
      const next = track(new EcaProc({ home, config: config() }));
      await next.initialize(root);
      await until(() => found.every(dead), 'the next start to stop the detached grandchildren');
      await until(() => record().length === 0, "the dead server's record to be dropped");
      await next.stop();
    });
  });
}

describe.runIf(process.platform === 'linux')('job grandchildren without the sandbox or a cgroup', () => {
  it('doctor says a detached grandchild may outlive its job', async () => {
    const home = scratch(tempDir());
    const doctor = await runPatchbay(['doctor'], {
      home,
      cwd: scratch(workspace({})),
      env: { PATCHBAY_JOB_CGROUP: 'off', PATCHBAY_CONFIG: cliConfig({ sandbox: { enabled: false } }) },
      timeoutMs: 60_000,
    });
    expect(doctor.stdout).toContain('Jobs: no cgroup for background jobs (PATCHBAY_JOB_CGROUP=off): a process a job detaches (setsid, a double fork) before patchbay sees it may outlive the job');
  });
});

/**
 * A forced shutdown's last resort (src/util/process-tree.ts `killDescendantsNow`, called by
 * src/runtime/workspace.ts `forceClose`) SIGKILLs every descendant at once, but must spare the
 * job reaper: it was just sent its EOF and has to live to stop what escaped the server.
 * Alone in its file: it SIGKILLs every child of this test worker (vitest runs files in forks).
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../../src/util/pid.js';
import { isZombie, killDescendantsNow } from '../../src/util/process-tree.js';

const pids: number[] = [];
afterEach(() => {
  for (const pid of pids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

async function until(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !ok();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const live = (pid: number) => isAlive(pid) && !isZombie(pid);

describe.runIf(process.platform !== 'win32')('killDescendantsNow', () => {
  it('SIGKILLs every descendant but the spared one and what runs under it', async () => {
    const victim = spawn('sleep', ['300'], { stdio: 'ignore' });
    // The spared process (as the reaper, detached) with a child of its own that prints its pid.
    const spared = spawn('/bin/sh', ['-c', 'sleep 300 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const grandchild = Number(await new Promise<string>((r) => spared.stdout!.once('data', (d: Buffer) => r(d.toString()))));
    pids.push(victim.pid!, spared.pid!, grandchild);
    killDescendantsNow([spared.pid, undefined]);
    await until(() => !live(victim.pid!), 'the victim to be killed');
    expect(live(spared.pid!)).toBe(true);
    expect(live(grandchild)).toBe(true);
  });
});

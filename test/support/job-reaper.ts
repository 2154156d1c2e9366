/** Finding a server's job reaper (src/core/jobs/reaper.ts: a child of the server named by its last argument) in /proc. */
import { readdirSync, readFileSync } from 'node:fs';

export function reaperOf(server: number): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== server) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('patchbay-job-reaper')) return Number(entry);
    } catch {
      /* exited meanwhile */
    }
  }
  return undefined;
}

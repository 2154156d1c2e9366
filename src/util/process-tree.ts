/**
 * The descendants of a process. Stdio MCP servers are often started through a launcher
 * (`npx`, `uvx`, a shell) whose children outlive it when only the launcher is killed; they are
 * found here (before the launcher dies and they are re-parented) so shutdown can stop them too.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { isAlive } from './pid.js';

/** Every process's parent, read once: callers walking several trees share one map. */
export function parentMap(): Map<number, number> {
  const parents = new Map<number, number>();
  if (process.platform === 'linux') {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may contain spaces and parentheses.
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        parents.set(Number(entry), ppid);
      } catch {
        /* exited meanwhile */
      }
    }
    return parents;
  }
  if (process.platform === 'win32') return parents;
  try {
    for (const line of execFileSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' }).split('\n')) {
      const [pid, ppid] = line.trim().split(/\s+/).map(Number);
      if (pid) parents.set(pid, ppid);
    }
  } catch {
    /* no ps: nothing to add */
  }
  return parents;
}

export function descendants(pid: number, parents: Map<number, number> = parentMap()): number[] {
  const children = new Map<number, number[]>();
  for (const [child, parent] of parents) {
    const list = children.get(parent) ?? [];
    list.push(child);
    children.set(parent, list);
  }
  const out: number[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length) {
    const p = queue.shift()!;
    out.push(p);
    queue.push(...(children.get(p) ?? []));
  }
  return out;
}

/**
 * When a process started, as an opaque token (Linux: clock ticks since boot, /proc/<pid>/stat
 * field 22): the same pid with another start time is another process. undefined when it is gone
 * or the system has no /proc (then only "is it alive" can be checked).
 */
export function startTime(pid: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/**
 * This boot's id (Linux): a pid or start time recorded in another boot names some other process.
 * undefined off Linux.
 */
export function bootId(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * SIGKILL to every descendant of this process, at once: the last resort of a shutdown that ran
 * late. `spare` (the job reaper) and what runs under it are left: it must live to read its EOF.
 */
export function killDescendantsNow(spare: Array<number | undefined> = []): void {
  const parents = parentMap();
  const skip = new Set<number>();
  for (const pid of spare) {
    if (!pid) continue;
    skip.add(pid);
    for (const d of descendants(pid, parents)) skip.add(d);
  }
  for (const p of descendants(process.pid, parents)) {
    if (skip.has(p)) continue;
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** SIGTERM, then SIGKILL for whatever is still alive after `graceMs`. */
/**
 * SIGKILL now to each process and its descendants (a forced shutdown of one workspace: only the
 * trees it started, never the whole process's children).
 */
export function killTreesNow(roots: Array<number | undefined>): void {
  const live = roots.filter((p): p is number => p !== undefined && p > 1);
  if (!live.length) return;
  const parents = parentMap();
  for (const root of live) {
    for (const p of [...descendants(root, parents), root]) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
}

export async function killAll(pids: number[], graceMs = 1_000): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    for (const p of pids) {
      try {
        process.kill(p, sig);
      } catch {
        /* gone */
      }
    }
  };
  const alive = () => pids.filter((p) => isAlive(p) && !isZombie(p));
  if (!alive().length) return;
  signal('SIGTERM');
  for (let waited = 0; waited < graceMs && alive().length; waited += 25) await new Promise((r) => setTimeout(r, 25).unref());
  if (alive().length) signal('SIGKILL');
}

/** A zombie has exited; only its parent's wait is missing (PID 1 in a container may never reap it). */
export function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

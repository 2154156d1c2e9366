/**
 * The workspace's start-up tasks as ECA `$/progress` (ECA docs/protocol.md "progress"; ECA's
 * handlers.clj `initialized` reports its own as "models", "plugins", "mcp-servers", "cleanup").
 */
import type { Progress } from '../../protocol/eca/lifecycle.js';
import type { StartupTask, StartupTaskId } from '../../runtime/workspace.js';

/** The runtime's task ids under ECA's names for the same work. */
const ECA_TASK_ID: Readonly<Record<StartupTaskId, string>> = { models: 'models', servers: 'mcp-servers' };

export function toEcaProgress(t: StartupTask): Progress {
  return { type: t.state === 'started' ? 'start' : 'finish', taskId: ECA_TASK_ID[t.id], title: t.title };
}

/**
 * Tasks reported before the editor's `initialized` wait for it (ECA sends `$/progress` only from
 * then on). Held ones go out starts first: eca-desktop (server.ts `maybeTransitionToRunning`)
 * counts initialization done as soon as no task is started, so a task that began and ended before
 * `initialized` must not be seen finished before one still running is seen started.
 */
export class EarlyTasks {
  private held: StartupTask[] | undefined = [];

  constructor(private readonly send: (p: Progress) => void) {}

  report(t: StartupTask): void {
    if (this.held) this.held.push(t);
    else this.send(toEcaProgress(t));
  }

  /** From now on tasks go out as they are reported; the held ones go first. */
  release(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const t of [...held.filter((x) => x.state === 'started'), ...held.filter((x) => x.state !== 'started')]) this.send(toEcaProgress(t));
  }
}

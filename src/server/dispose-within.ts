/** Stopping a façade's workspace or host on the way out, with a deadline (ECA `shutdown`/exit, ACP exit). */
import { errorMessage, logger } from '../util/log.js';

const log = logger('server');

/** A workspace or a host (runtime/host.ts): a clean stop, and a forced one. */
export interface Stoppable {
  dispose(): Promise<void>;
  forceClose(): void;
}

/**
 * Disposes the workspace, and what has not stopped by the deadline is stopped by force (child
 * processes killed, the store closed): a shutdown never hangs on a peer that will not go.
 */
export async function disposeWithin(workspace: Promise<Stoppable>, ms = 600): Promise<void> {
  let w: Stoppable;
  try {
    w = await workspace;
  } catch {
    return; // it never started: nothing to stop
  }
  const deadline = new Promise<'late'>((r) => setTimeout(() => r('late'), ms).unref());
  const outcome = await Promise.race([
    w.dispose().then(
      () => 'done' as const,
      (e: unknown) => (log.error(`shutdown: ${errorMessage(e)}`), 'failed' as const),
    ),
    deadline,
  ]);
  if (outcome === 'done') return;
  if (outcome === 'late') log.warn('shutdown did not finish in time: stopping child processes and closing the store');
  w.forceClose();
}

/**
 * Waiting on another party with a limit: `within` settles when `work` settles or after `ms`,
 * whichever comes first, and calls `late` in the second case. The work itself goes on (a
 * notification already on the wire cannot be called back); only the wait for it ends.
 */
export function within(work: Promise<unknown>, ms: number, late: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      late();
      resolve();
    }, ms);
    // Never keeps the process alive on its own.
    timer.unref?.();
    const end = () => {
      clearTimeout(timer);
      resolve();
    };
    work.then(end, end);
  });
}

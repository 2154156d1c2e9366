/** Whether a process exists (signal 0: nothing is sent). No imports: the server's start-up path uses it. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, it is just not ours to signal.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

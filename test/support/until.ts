/**
 * Waiting for something a test can only look at (a process gone, a file written): `check` again
 * every `stepMs` until it holds, or fail naming `what` after `ms`. No test-runner imports.
 */
export async function until(check: () => boolean, what: string, ms = 10_000, stepMs = 50): Promise<void> {
  for (const end = Date.now() + ms; !check();) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

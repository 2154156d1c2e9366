/**
 * `patchbay chat`'s quit-now path (src/cli/chat-client.ts `ServerProcess.kill`, used on a second
 * Ctrl-C and when `shutdown` hangs): the server gets its stdin closed and SIGTERM, so it can stop
 * its background jobs and peers, and is SIGKILLed only if it is still there a second later.
 */
import { describe, expect, it } from 'vitest';
import { ServerProcess } from '../../src/cli/chat-client.js';
import { cliEnv, tempDir, useTempDirs, workspace } from './harness.js';

const scratch = useTempDirs();

describe('ServerProcess.kill', () => {
  it('ends the server with SIGTERM (a clean exit), not SIGKILL', async () => {
    const home = scratch(tempDir());
    const server = new ServerProcess({ args: [], cwd: scratch(workspace()), verbose: false, env: cliEnv(home) });
    try {
      server.listen();
      await server.initialize(10_000);
      await server.kill();
      const exit = await server.exited;
      expect(exit.signal).not.toBe('SIGKILL');
      expect(exit).toEqual({ code: expect.any(Number), signal: null });
    } finally {
      await server.shutdown();
    }
  });
});

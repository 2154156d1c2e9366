/** `patchbay acp`: the Agent Client Protocol over stdio. stdout is the protocol; logs go to stderr and the log file. */
import { AcpServer } from '../server/acp/acp-server.js';
import { logger } from '../util/log.js';
import { exitAfterDrain, isBrokenPipe, stdioCommand, stdoutBroken } from './stdio-command.js';

export async function runAcp(args: string[]): Promise<void> {
  const { configFile, logLevel } = stdioCommand('acp', args);
  const log = logger('main');
  const server = new AcpServer({ input: process.stdin, output: process.stdout, configFile, logLevel, onExit: exitAfterDrain });
  // Never rethrow from here: a handler that throws turns one error into an endless loop.
  process.on('uncaughtException', (e: NodeJS.ErrnoException) => {
    if (isBrokenPipe(e) && stdoutBroken()) return server.clientGone(`the client's pipe closed (${e.code})`);
    log.error(`uncaught: ${e.stack ?? e.message}`);
  });
  process.on('unhandledRejection', (e) => log.error(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, () => server.clientGone(`received ${signal}`));
}

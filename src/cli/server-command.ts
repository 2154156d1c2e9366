/** `patchbay server`: ECA over stdio. stdout is the protocol; logs go to stderr and the log file. */
import { EcaServer } from '../server/eca/server.js';
import { logger } from '../util/log.js';
import { exitAfterDrain, isBrokenPipe, stdioCommand, stdoutBroken } from './stdio-command.js';

export async function runServer(args: string[]): Promise<void> {
  const { configFile, logLevel } = stdioCommand('server', args);
  const log = logger('main');
  const server = new EcaServer({ input: process.stdin, output: process.stdout, configFile, logLevel, onExit: exitAfterDrain });
  // Never rethrow from here: a handler that throws turns one error into an endless loop.
  process.on('uncaughtException', (e: NodeJS.ErrnoException) => {
    // Only our own stdout breaking means the editor is gone; a broken pipe to a child or a socket is
    // that peer's trouble (its own code handles it) and is only logged.
    if (isBrokenPipe(e) && stdoutBroken()) return server.editorGone(`the editor's pipe closed (${e.code})`);
    log.error(`uncaught: ${e.stack ?? e.message}`);
  });
  process.on('unhandledRejection', (e) => log.error(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
  // The editor (or its terminal) ending us: stop children and close the store first.
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, () => server.editorGone(`received ${signal}`));
}

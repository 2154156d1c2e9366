/** `patchbay acp`: the Agent Client Protocol over stdio. stdout is the protocol; logs go to stderr and the log file. */
import { usageError } from './help.js';
import { parseFlags } from './flags.js';
import { AcpServer } from '../server/acp/acp-server.js';
import { logger, setLogLevel, type LogLevel } from '../util/log.js';

const levels = ['error', 'warn', 'info', 'debug'];

export async function runAcp(args: string[]): Promise<void> {
  const { flags, error } = parseFlags(args, ['log-level', 'config-file']);
  if (error) {
    usageError('acp', error);
    process.exit(2);
  }
  const level = flags['log-level'];
  if (level && !levels.includes(level)) {
    process.stderr.write(`--log-level must be one of ${levels.join(', ')}\n`);
    process.exit(2);
  }
  if (level) setLogLevel(level as LogLevel);
  const log = logger('main');
  // Nothing but protocol may reach stdout: route stray console output to stderr.
  console.log = console.info = console.debug = (...a: unknown[]) => process.stderr.write(`${a.map(String).join(' ')}\n`);
  const server = new AcpServer({
    input: process.stdin,
    output: process.stdout,
    configFile: flags['config-file'],
    logLevel: level as LogLevel | undefined,
    onExit: (code) => {
      process.exitCode = code;
      process.stdout.write('', () => process.exit(code));
      setTimeout(() => process.exit(code), 200).unref();
    },
  });
  process.on('uncaughtException', (e: NodeJS.ErrnoException) => {
    if ((e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') && (process.stdout.destroyed || !!process.stdout.errored)) return server.clientGone(`the client's pipe closed (${e.code})`);
    log.error(`uncaught: ${e.stack ?? e.message}`);
  });
  process.on('unhandledRejection', (e) => log.error(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, () => server.clientGone(`received ${signal}`));
}

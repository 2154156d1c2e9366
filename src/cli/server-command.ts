/** `patchbay server`: ECA over stdio. stdout is the protocol; logs go to stderr and the log file. */
import { usageError } from './help.js';
import { parseFlags } from './flags.js';
import { EcaServer } from '../server/server.js';
import { logger, setLogLevel, type LogLevel } from '../util/log.js';

const levels = ['error', 'warn', 'info', 'debug'];

export async function runServer(args: string[]): Promise<void> {
  const { flags, error } = parseFlags(args, ['log-level', 'config-file']);
  if (error) {
    usageError('server', error);
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
  const server = new EcaServer({
    input: process.stdin,
    output: process.stdout,
    configFile: flags['config-file'],
    logLevel: level as LogLevel | undefined,
    onExit: (code) => {
      // Let the last writes (e.g. the shutdown response) drain, unless the pipe is already broken.
      // Set first: should the loop empty before a timer fires, the process still ends with `code`.
      process.exitCode = code;
      if (editorPipeBroken()) process.exit(code);
      process.stdout.write('', () => process.exit(code));
      setTimeout(() => process.exit(code), 200).unref();
    },
  });
  // Never rethrow from here: a handler that throws turns one error into an endless loop.
  process.on('uncaughtException', (e: NodeJS.ErrnoException) => {
    // Only our own stdout breaking means the editor is gone; a broken pipe to a child or a socket is
    // that peer's trouble (its own code handles it) and is only logged.
    if (isBrokenPipe(e) && editorPipeBroken()) return server.editorGone(`the editor's pipe closed (${e.code})`);
    log.error(`uncaught: ${e.stack ?? e.message}`);
  });
  process.on('unhandledRejection', (e) => log.error(`unhandled rejection: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`));
  // The editor (or its terminal) ending us: stop children and close the store first.
  for (const signal of ['SIGTERM', 'SIGHUP', 'SIGINT'] as const) process.on(signal, () => server.editorGone(`received ${signal}`));
}

function editorPipeBroken(): boolean {
  const out = process.stdout;
  return out.destroyed || out.writableEnded || !!out.errored;
}

function isBrokenPipe(e: NodeJS.ErrnoException): boolean {
  return e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED' || e.code === 'ERR_STREAM_WRITE_AFTER_END';
}

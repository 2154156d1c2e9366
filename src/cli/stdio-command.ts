/**
 * What `patchbay server` and `patchbay acp` share: both speak a protocol on stdio, so their flags,
 * logging and exit are the same. stdout is the protocol; logs go to stderr and the log file.
 */
import { usageError } from './help.js';
import { parseFlags } from './flags.js';
import { envLogLevel, setLogLevel, setStderrLevel, type LogLevel } from '../util/log.js';

const levels = ['error', 'warn', 'info', 'debug'];

export interface StdioFlags {
  configFile?: string;
  logLevel?: LogLevel;
}

/** `--log-level` and `--config-file`; a bad flag exits 2 with the command's usage. Nothing but protocol may reach stdout after this. */
export function stdioCommand(name: string, args: string[]): StdioFlags {
  const { flags, error } = parseFlags(args, ['log-level', 'config-file']);
  if (error) {
    usageError(name, error);
    process.exit(2);
  }
  const level = flags['log-level'];
  if (level && !levels.includes(level)) {
    process.stderr.write(`--log-level must be one of ${levels.join(', ')}\n`);
    process.exit(2);
  }
  if (level) setLogLevel(level as LogLevel);
  // Editors show every stderr line as an error (agent-shell, the ECA plugins' stderr buffers):
  // at the default level stderr carries only errors, the rest goes to the log file. A level asked
  // for (`--log-level`, `PATCHBAY_LOG_LEVEL`) is what stderr shows.
  setStderrLevel((level as LogLevel | undefined) ?? envLogLevel() ?? 'error');
  // Route stray console output to stderr.
  console.log = console.info = console.debug = (...a: unknown[]) => process.stderr.write(`${a.map(String).join(' ')}\n`);
  return { configFile: flags['config-file'], logLevel: level as LogLevel | undefined };
}

/** Ends the process with `code` once the last writes (e.g. a final answer) drained, unless the pipe is already broken. */
export function exitAfterDrain(code: number): void {
  // Set first: should the loop empty before a timer fires, the process still ends with `code`.
  process.exitCode = code;
  if (stdoutBroken()) process.exit(code);
  process.stdout.write('', () => process.exit(code));
  setTimeout(() => process.exit(code), 200).unref();
}

export function stdoutBroken(): boolean {
  const out = process.stdout;
  return out.destroyed || out.writableEnded || !!out.errored;
}

export function isBrokenPipe(e: NodeJS.ErrnoException): boolean {
  return e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED' || e.code === 'ERR_STREAM_WRITE_AFTER_END';
}

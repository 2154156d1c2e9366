/**
 * The process-wide logger. stdout of `patchbay server` carries protocol only, so logs go to
 * stderr and, once `logToFile` is called, to a log file. Secrets never reach it: callers log
 * names, never keys, and `redact` scrubs anything that looks like a key.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const order: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

let level: LogLevel = (process.env.PATCHBAY_LOG_LEVEL as LogLevel) in order ? (process.env.PATCHBAY_LOG_LEVEL as LogLevel) : 'info';
let file: string | undefined;
let toStderr = true;

export function setLogLevel(l: LogLevel): void {
  level = l;
}
export function logToFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  file = path;
}
export function logToStderr(on: boolean): void {
  toStderr = on;
}

const secretPattern = /\b(sk-[A-Za-z0-9_-]{8,}|sk-ant-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._-]{8,})/g;
export function redact(s: string): string {
  return s.replace(secretPattern, '[redacted]');
}

function write(l: LogLevel, scope: string, msg: string): void {
  if (order[l] > order[level]) return;
  const line = `${new Date().toISOString()} ${l.toUpperCase()} [${scope}] ${redact(msg)}\n`;
  if (toStderr) process.stderr.write(line);
  if (file) {
    try {
      appendFileSync(file, line);
    } catch {
      file = undefined;
    }
  }
}

export interface Logger {
  error(msg: string): void;
  warn(msg: string): void;
  info(msg: string): void;
  debug(msg: string): void;
}

export function logger(scope: string): Logger {
  return {
    error: (m) => write('error', scope, m),
    warn: (m) => write('warn', scope, m),
    info: (m) => write('info', scope, m),
    debug: (m) => write('debug', scope, m),
  };
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The process-wide logger. stdout of `patchbay server` carries protocol only, so logs go to
 * stderr and, once `logToFile` is called, to a log file. Secrets never reach it: callers log
 * names, never keys, and `redact` scrubs anything that looks like a key.
 */
import { appendFileSync, renameSync, statSync } from 'node:fs';
import { PRIVATE_FILE_MODE, ensurePrivateDir, ensurePrivateFile } from './private-dir.js';
import { dirname } from 'node:path';

export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
const order: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 };

let level: LogLevel = (process.env.PATCHBAY_LOG_LEVEL as LogLevel) in order ? (process.env.PATCHBAY_LOG_LEVEL as LogLevel) : 'info';
let toStderr = true;
/**
 * How much of it stderr shows, when less than the file: `patchbay server` and `patchbay acp` keep
 * stderr to errors unless a level was asked for (their editors show each stderr line as an
 * error: agent-shell, ECA's stderr buffers). Unset: stderr shows what the file gets.
 */
let stderrLevel: LogLevel | undefined;

/** The log file, capped: past `maxBytes` it is renamed to `<file>.1` (the older `.1` to `.2`) and started anew. */
interface LogFile {
  path: string;
  size: number;
  maxBytes: number;
  keep: number;
}
let file: LogFile | undefined;

/** 10 MB per file and two older files: at most 30 MB of logs whatever happens. */
export const LOG_MAX_BYTES = 10 * 1024 * 1024;

export function setLogLevel(l: LogLevel): void {
  level = l;
}
export function logToFile(path: string, opts: { maxBytes?: number; keep?: number } = {}): void {
  ensurePrivateDir(dirname(path));
  ensurePrivateFile(path);
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    /* a new file */
  }
  file = { path, size, maxBytes: opts.maxBytes ?? LOG_MAX_BYTES, keep: opts.keep ?? 2 };
}
export function setStderrLevel(l: LogLevel | undefined): void {
  stderrLevel = l;
}
/** The level asked for in the environment (`PATCHBAY_LOG_LEVEL`), if it is one. */
export function envLogLevel(env: NodeJS.ProcessEnv = process.env): LogLevel | undefined {
  const l = env.PATCHBAY_LOG_LEVEL;
  return l !== undefined && l in order ? (l as LogLevel) : undefined;
}
export function logToStderr(on: boolean): void {
  toStderr = on;
}

// A closed stderr (the editor went away) must never turn a log line into an exception: the
// 'error' event of a broken pipe is swallowed here and stderr logging stops for good.
process.stderr.on('error', () => {
  toStderr = false;
});

const secretPattern = /\b(sk-[A-Za-z0-9_-]{8,}|sk-ant-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._-]{8,})/g;
/** Values known to be secret (keys entered at login, OAuth tokens): scrubbed wherever they appear. */
const knownSecrets = new Set<string>();
/** Too short to be a credential, and scrubbing it would mangle ordinary text. */
const MIN_SECRET_LENGTH = 8;

/** Marks `value` as secret: no log line will ever contain it. Returns it, for use inline. */
export function rememberSecret(value: string): string {
  if (value.length >= MIN_SECRET_LENGTH) knownSecrets.add(value);
  return value;
}

export function redact(s: string): string {
  let out = s.replace(secretPattern, '[redacted]');
  for (const v of knownSecrets) if (out.includes(v)) out = out.split(v).join('[redacted]');
  return out;
}

function rotate(f: LogFile): void {
  for (let i = f.keep; i >= 1; i--) {
    try {
      renameSync(i === 1 ? f.path : `${f.path}.${i - 1}`, `${f.path}.${i}`);
    } catch {
      /* nothing to move at this step */
    }
  }
  f.size = 0;
}

function appendToFile(f: LogFile, line: string): void {
  const bytes = Buffer.byteLength(line);
  if (f.size > 0 && f.size + bytes > f.maxBytes) rotate(f);
  appendFileSync(f.path, line, { mode: PRIVATE_FILE_MODE });
  f.size += bytes;
}

/** Writes one line to stderr and the file. Never throws: logging is how failures are reported. */
function write(l: LogLevel, scope: string, msg: string): void {
  if (order[l] > order[level]) return;
  const line = `${new Date().toISOString()} ${l.toUpperCase()} [${scope}] ${redact(msg)}\n`;
  if (toStderr && (stderrLevel === undefined || order[l] <= order[stderrLevel])) {
    const err = process.stderr;
    if (err.destroyed || err.writableEnded) toStderr = false;
    else {
      try {
        err.write(line);
      } catch {
        toStderr = false;
      }
    }
  }
  if (file) {
    try {
      appendToFile(file, line);
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

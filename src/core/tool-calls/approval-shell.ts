/**
 * argsMatchers on the native `shell_command`'s `command`, judged per simple command (see the
 * doc comment of approval.ts for the rules and shell-words.ts for the splitting).
 *
 * The two sides fail in opposite directions. A deny or ask rule must not be dodged, so anything
 * it cannot see through (a word known only after expansion, a command that runs other code such
 * as `eval`, `sh -c`, `xargs`, `env`) is "unknown" and the call asks. An allow rule must not
 * allow more than it names, so every simple command has to match it, except plain filters
 * reading the previous command's output (`git log | head -20`).
 */
import { splitShellCommand, type ShellUnit } from '../tools/native/shell-words.js';

export type MatchResult = 'match' | 'no' | 'unknown';
type Test = (s: string) => boolean;

/** Commands that run other commands or code given as arguments. */
const RUNS_OTHER_CODE = new Set([
  'sudo',
  'doas',
  'su',
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'csh',
  'tcsh',
  'fish',
  'pwsh',
  'busybox',
  'eval',
  'exec',
  'source',
  '.',
  'xargs',
  'parallel',
  'env',
  'nohup',
  'nice',
  'ionice',
  'setsid',
  'stdbuf',
  'timeout',
  'command',
  'builtin',
  'time',
  'script',
  'chroot',
  'watch',
  'flock',
  'taskset',
  'strace',
  'unbuffer',
]);
/** Interpreters that run code given inline with one of these flags. */
const INLINE_CODE: Record<string, string[]> = {
  python: ['-c'],
  python3: ['-c'],
  perl: ['-e', '-E'],
  ruby: ['-e'],
  node: ['-e', '--eval', '-p', '--print'],
  php: ['-r'],
  lua: ['-e'],
  awk: [],
  gawk: [],
  mawk: [],
};
const FIND_RUNS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete']);

/** Plain filters that may follow an allowed command in a pipeline: they only transform its output. */
const PIPE_FILTERS = new Set(['head', 'tail', 'grep', 'egrep', 'fgrep', 'rg', 'wc', 'sort', 'uniq', 'cut', 'tr', 'less', 'more', 'cat', 'column', 'nl', 'fold', 'fmt', 'jq']);

function base(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

/** The unit runs code its words do not show (see RUNS_OTHER_CODE, INLINE_CODE, find -exec). */
function runsOtherCode(u: ShellUnit): boolean {
  const [name, ...args] = u.command;
  if (name === undefined) return false;
  const b = base(name);
  if (RUNS_OTHER_CODE.has(b)) return true;
  const inline = INLINE_CODE[b];
  if (inline && (inline.length === 0 || args.some((a) => inline.some((f) => a === f || a.startsWith(f))))) return true;
  return b === 'find' && args.some((a) => FIND_RUNS.has(a));
}

/** How a unit may be written down for matching: as typed, unquoted, from its command name on, with that name's directory dropped. */
function forms(u: ShellUnit): string[] {
  const out = [u.text, u.tokens.join(' '), u.command.join(' ')];
  if (u.command[0]?.includes('/')) out.push([base(u.command[0]), ...u.command.slice(1)].join(' '));
  return out;
}

/**
 * A deny or ask rule: the whole command matches, or any of its simple commands does. `unknown`
 * when it matches nowhere but cannot be read (no split, an expansion, code run by another
 * command, or Windows' cmd, whose quoting the splitter does not model): the caller fails closed.
 */
export function restrictingMatch(command: string, tests: Test[]): MatchResult {
  if (tests.some((t) => t(command))) return 'match';
  if (process.platform === 'win32') return 'unknown';
  const split = splitShellCommand(command);
  if (!split.ok) return 'unknown';
  if (split.units.some((u) => forms(u).some((f) => tests.some((t) => t(f))))) return 'match';
  return split.units.some((u) => u.expands || runsOtherCode(u)) ? 'unknown' : 'no';
}

/** A filter reading the previous command's output, naming no file outside the workspace. */
function isPipeFilter(u: ShellUnit): boolean {
  const [name, ...args] = u.command;
  if (!u.piped || u.writes || u.expands || name === undefined || !PIPE_FILTERS.has(name)) return false;
  return !args.some((a) => a.startsWith('/') || a.startsWith('~') || a.split('/').includes('..'));
}

/**
 * An allow rule: every simple command matches (as written or as unquoted words), or is a plain
 * filter in a pipeline after one that does; none writes a file through a redirection. A command
 * that cannot be split is never allowed.
 */
export function permittingMatch(command: string, tests: Test[]): MatchResult {
  if (process.platform === 'win32') return 'no';
  const split = splitShellCommand(command);
  if (!split.ok || split.units.length === 0) return 'no';
  const matches = (u: ShellUnit) => !u.writes && [u.text, u.tokens.join(' ')].some((f) => tests.some((t) => t(f)));
  return split.units.every((u, i) => matches(u) || (i > 0 && isPipeFilter(u))) ? 'match' : 'no';
}

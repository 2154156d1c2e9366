/**
 * Which tool calls touch a protected path (protected-paths.ts). Such a call always asks, even
 * when config or "approve for this chat" would allow it (tool-call.ts `decide`).
 *
 *   - a mutating tool with path arguments (`write_file`, `edit_file`, `move_file` source and
 *     destination, `shell_command`'s working_directory): any of those paths;
 *   - `shell_command`: any word of any simple command (unquoted, see shell-words.ts) or a
 *     piece of one (`sh -c 'echo x > .git/config'`, `--file=.envrc`) that names a protected
 *     path, relative to the working directory or absolute, or a glob that could (`.gi?/hooks`),
 *     plus a `git config` that changes a setting (it writes .git/config). Commands that only
 *     read (`ls .git`, `grep --exclude-dir=.git`, `git log -- .gitmodules`) count only for the
 *     files their redirections write. A command that cannot be split is not interpreted
 *     (approval.ts fails closed on it when rules look at commands); only a protected name in
 *     its text asks.
 *     This is a guard against mistakes and plain attempts, not a sandbox:
 *     a shell can always build a path the text does not show.
 */
import type { Tool } from '../../shapes/tool.js';
import { protectedName, protectedPath } from './protected-paths.js';
import { resolvePath } from '../../util/paths.js';
import { splitShellCommand, type ShellUnit } from '../tools/native/shell-words.js';

/** More pieces than this in one command are not checked one by one: the call asks. */
const MAX_PIECES = 512;

/**
 * Why this call must ask every time (naming the path), or undefined. Relative paths resolve in
 * `cwd` when given, else in the first root.
 */
export async function protectedTarget(tool: Tool, args: Record<string, unknown>, roots: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<string | undefined> {
  if (!tool.mutates) return undefined;
  const base = cwd !== undefined ? [cwd] : roots;
  for (const raw of safePaths(tool, args)) {
    const why = await protectedPath(resolvePath(raw, base), roots, env);
    if (why) return `"${raw}" is protected: ${why}`;
  }
  if (tool.server === 'patchbay' && tool.name === 'shell_command' && typeof args.command === 'string') {
    const wd = args.working_directory;
    const cwd = typeof wd === 'string' && wd ? resolvePath(wd, base) : (base[0] ?? process.cwd());
    return shellTarget(args.command, cwd, roots, env);
  }
  return undefined;
}

function safePaths(tool: Tool, args: Record<string, unknown>): string[] {
  try {
    return (tool.paths?.(args) ?? []).filter((p): p is string => typeof p === 'string' && p !== '');
  } catch {
    return [];
  }
}

async function shellTarget(command: string, cwd: string, roots: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const split = splitShellCommand(command);
  if (!split.ok) return byNameOnly(command, env);
  if (split.units.some(changesGitConfig)) return '"git config" writes .git/config (hooks and config run code)';
  const pieces = new Set<string>();
  for (const unit of split.units) for (const token of wordsThatMayWrite(unit)) for (const p of piecesOf(token, env)) pieces.add(p);
  if (pieces.size > MAX_PIECES) return `the command has too many words to check for protected paths`;
  for (const piece of pieces) {
    // By name first: a path built relative to a `cd` earlier in the command is still caught.
    const named = piece.split(/[\\/]/).find((seg) => protectedName(seg));
    if (named) return `"${piece}" is protected: ${named} (${protectedName(named)})`;
    const why = await protectedPath(resolvePath(piece, [cwd]), roots, env);
    if (why) return `"${piece}" is protected: ${why}`;
  }
  return undefined;
}

/**
 * A command that cannot be split: its structure is not guessed (approval.ts fails closed on it
 * when rules look at the command), but a protected name in its text still asks.
 */
function byNameOnly(command: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const piece of piecesOf(command, env)) {
    const named = piece.split(/[\\/]/).find((seg) => protectedName(seg));
    if (named) return `"${piece}" is protected: ${named} (${protectedName(named)})`;
  }
  return undefined;
}

/** A word and the path-like pieces inside it (`--file=.envrc`, `open('.git/config')`). */
function piecesOf(token: string, env: NodeJS.ProcessEnv): string[] {
  const expanded = token.replace(/\$\{?(HOME|XDG_CONFIG_HOME|PATCHBAY_HOME)(?![A-Za-z0-9_])\}?/g, (m, name: string) => env[name] ?? m);
  return [expanded, ...expanded.split(/[\s'"=:,;()<>|&{}[\]`$]+/)].filter((p) => p !== '');
}

/**
 * The words of a unit that may name a file it writes: every word, except for commands that only
 * read (`ls .git`, `grep -r x --exclude-dir=.git`, `git log -- .gitmodules`), where only the
 * targets of redirections that write count. Asking every time a model looks at `.git` would
 * teach users to click through.
 */
function wordsThatMayWrite(unit: ShellUnit): string[] {
  if (!onlyReads(unit)) return unit.tokens;
  return unit.redirects.filter((r) => r.writes).map((r) => r.target);
}

/** Programs that only read the files they are given. */
const READERS = new Set([
  'ls',
  'cat',
  'head',
  'tail',
  'less',
  'more',
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'ag',
  'wc',
  'stat',
  'file',
  'du',
  'tree',
  'diff',
  'cmp',
  'realpath',
  'readlink',
  'basename',
  'dirname',
  'test',
  '[',
  'echo',
  'printf',
  'pwd',
]);
/** git subcommands that only read. */
const GIT_READS = new Set(['log', 'status', 'diff', 'show', 'blame', 'ls-files', 'ls-tree', 'grep', 'rev-parse', 'describe', 'shortlog', 'cat-file', 'reflog']);
/** find actions that write or run something. */
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);

function onlyReads(unit: ShellUnit): boolean {
  const [name, ...args] = unit.command;
  if (name === undefined) return true;
  const b = name.slice(name.lastIndexOf('/') + 1);
  if (READERS.has(b)) return true;
  if (b === 'find') return !args.some((a) => FIND_ACTIONS.has(a));
  if (b === 'git') return GIT_READS.has(gitSubcommand(args).name ?? '');
  return false;
}

/** The git subcommand after global options, and the words after it. */
function gitSubcommand(args: string[]): { name?: string; rest: string[] } {
  let k = 0;
  // Global options that take a value as the next word.
  while (k < args.length && args[k]!.startsWith('-')) k += ['-C', '-c', '--git-dir', '--work-tree', '--namespace'].includes(args[k]!) ? 2 : 1;
  return { name: args[k], rest: args.slice(k + 1) };
}

/**
 * A `git config` that may change a setting: everything but `--get*`/`--list` reads, the
 * `get`/`list` subcommands, or a single name (`git config user.name`). Also a unit that
 * mentions `git … config` behind a wrapper (`env git config …`, `sh -c "git config …"`).
 */
function changesGitConfig(unit: ShellUnit): boolean {
  const [name, ...args] = unit.command;
  const b = name?.slice(name.lastIndexOf('/') + 1);
  if (b !== 'git') return /\bgit\b[^;&|]*\bconfig\b/.test(unit.tokens.join(' '));
  const sub = gitSubcommand(args);
  if (sub.name !== 'config') return false;
  const options = sub.rest.filter((w) => w.startsWith('-'));
  const operands = sub.rest.filter((w) => !w.startsWith('-'));
  if (options.some((o) => GIT_CONFIG_WRITE_OPTIONS.has(o.split('=')[0]!))) return true;
  if (options.some((o) => GIT_CONFIG_READ_OPTIONS.has(o))) return false;
  if (operands[0] === 'get' || operands[0] === 'list') return false;
  return operands.length !== 1;
}

const GIT_CONFIG_WRITE_OPTIONS = new Set(['--unset', '--unset-all', '--add', '--replace-all', '--rename-section', '--remove-section', '--edit', '-e']);
const GIT_CONFIG_READ_OPTIONS = new Set(['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--list', '-l', '--get-color', '--get-colorbool']);

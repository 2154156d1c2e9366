/**
 * argsMatchers on the native `shell_command`'s `command`, judged per simple command (see the
 * doc comment of approval.ts for the rules and shell-words.ts for the splitting).
 */
import { splitShellCommand, type ShellUnit } from './tools/native/shell-words.js';

export type MatchResult = 'match' | 'no' | 'unknown';
type Test = (s: string) => boolean;

/**
 * A deny or ask rule: the whole command matches, or any of its simple commands does (as
 * written, as unquoted words, or from the command name on). `unknown` when the command does
 * not match as a whole and cannot be split: the caller fails closed.
 */
export function restrictingMatch(command: string, tests: Test[]): MatchResult {
  if (tests.some((t) => t(command))) return 'match';
  const split = splitShellCommand(command);
  if (!split.ok) return 'unknown';
  const hit = split.units.some((u) => {
    const forms = [u.text, u.tokens.join(' '), u.command.join(' ')];
    return forms.some((f) => tests.some((t) => t(f)));
  });
  return hit ? 'match' : 'no';
}

/**
 * An allow rule: every simple command matches (as written or as unquoted words) and none
 * writes a file through a redirection. A command that cannot be split is never allowed.
 */
export function permittingMatch(command: string, tests: Test[]): MatchResult {
  const split = splitShellCommand(command);
  if (!split.ok || split.units.length === 0) return 'no';
  const each = (u: ShellUnit) => !u.writes && [u.text, u.tokens.join(' ')].some((f) => tests.some((t) => t(f)));
  return split.units.every(each) ? 'match' : 'no';
}

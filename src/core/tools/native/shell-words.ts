/**
 * Splits a `/bin/sh -c` command line into the simple commands it runs, so approval rules can
 * judge each one (`git status; rm -rf ~` is two commands, not one that starts with "git").
 *
 * Units are separated by `;`, newline, `&&`, `||`, `|`, `|&` and `&`. Single quotes, double
 * quotes and backslash escapes are understood (backslash-newline continues the line), and `#`
 * at the start of a word comments out the rest of the line. Anything whose effect cannot be
 * read from the text is refused rather than guessed ("cannot tell", so callers fail closed):
 * command substitution (`$(…)`, backticks, also inside double quotes), `$'…'` quoting,
 * subshells and groups in parentheses, heredocs and here-strings (`<<`), process substitution,
 * unbalanced quotes, a trailing backslash, a redirection without a target, and a command name
 * that is only known after expansion (`$X args`, `/bin/r?`, `{r,}m`).
 *
 * The facts (which constructs to split at and which to refuse) follow ECA's shell parser; the
 * code is our own.
 */

export interface ShellRedirect {
  /** The operator as written, without its file descriptor (`>`, `>>`, `>|`, `&>`, `<`, `>&`, …). */
  op: string;
  /** The target word, unquoted. */
  target: string;
  /** True when it opens a file for writing (not `/dev/null`, not an fd duplication like `2>&1`). */
  writes: boolean;
}

export interface ShellUnit {
  /** The unit's source text, trimmed. */
  text: string;
  /** Every word with quotes and escapes removed, redirections in place (`echo x > f`). */
  tokens: string[];
  /** Plain words (no redirection operators or targets), leading assignments included. */
  words: string[];
  /** The words from the command name on: leading `VAR=value` and keywords such as `then` dropped. */
  command: string[];
  redirects: ShellRedirect[];
  /** True when any redirection writes a file. */
  writes: boolean;
  /** True when a word or redirection target is only known after expansion (`$X`, `*`, `{a,b}`). */
  expands: boolean;
  /** True when the unit reads the previous unit's output (`a | b`: true for `b`). */
  piped: boolean;
}

export type ShellSplit = { ok: true; units: ShellUnit[] } | { ok: false; reason: string };

/** Words that come before the command proper; skipping them finds the program that runs. */
const PREFIX_WORDS = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', 'time', 'exec', 'command', 'builtin', 'nohup']);

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;

const LITERAL_BRACKETS = new Set(['[', ']', '[[', ']]', '{', '}']);

interface Word {
  value: string;
  /** Source offset of the word's first character (for telling `A=1` from `"A=1"`). */
  start: number;
  end: number;
  /** An unquoted `$` expansion or a glob/brace character: the value is not the final text. */
  expands: boolean;
}

type Token = { kind: 'word'; word: Word } | { kind: 'redirect'; redirect: ShellRedirect; expands: boolean };

class Refused extends Error {}

/** The simple commands of `command`, or why it cannot be told what it runs. */
export function splitShellCommand(command: string): ShellSplit {
  try {
    return { ok: true, units: new Splitter(command).run() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, reason: e.message };
    throw e;
  }
}

class Splitter {
  private i = 0;
  private units: ShellUnit[] = [];
  private unitStart = 0;
  /** The separator that ended the previous unit was a pipe. */
  private pipedNext = false;
  private tokens: Token[] = [];
  private word: Word | undefined;
  private pending: { op: string } | undefined;

  constructor(private readonly s: string) {}

  run(): ShellUnit[] {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i]!;
      const next = s[this.i + 1];
      if (c === ' ' || c === '\t') {
        this.endWord();
        this.i++;
      } else if (c === '\n' || c === ';') {
        this.endUnit(1);
      } else if (c === '#' && !this.word) {
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
      } else if (c === '\\') {
        if (next === undefined) throw new Refused('a backslash ends the command');
        if (next !== '\n') this.append(next, false, this.i + 2);
        this.i += 2;
      } else if (c === "'") {
        const close = s.indexOf("'", this.i + 1);
        if (close < 0) throw new Refused('unbalanced single quote');
        this.append(s.slice(this.i + 1, close), false, close + 1);
        this.i = close + 1;
      } else if (c === '"') {
        this.doubleQuoted(this.i + 1);
      } else if (c === '`') {
        throw new Refused('command substitution (backticks)');
      } else if (c === '$') {
        if (next === '(') throw new Refused('command substitution $(…)');
        if (next === "'") throw new Refused("$'…' quoting");
        if (next === '"') {
          this.doubleQuoted(this.i + 2);
        } else {
          this.append('$', true);
          this.i++;
        }
      } else if (c === '(' || c === ')') {
        throw new Refused('a subshell or group in parentheses');
      } else if (c === '&') {
        if (next === '>') this.redirect();
        else this.endUnit(next === '&' ? 2 : 1);
      } else if (c === '|') {
        this.endUnit(next === '|' || next === '&' ? 2 : 1);
      } else if (c === '>' || c === '<') {
        this.redirect();
      } else {
        this.append(c, c === '*' || c === '?' || c === '[' || c === '{');
        this.i++;
      }
    }
    this.endUnit(0);
    return this.units;
  }

  /** A double-quoted string whose content starts at `from`. */
  private doubleQuoted(from: number): void {
    const s = this.s;
    let j = from;
    let text = '';
    let expands = false;
    for (;;) {
      if (j >= s.length) throw new Refused('unbalanced double quote');
      const c = s[j]!;
      if (c === '"') break;
      if (c === '`') throw new Refused('command substitution (backticks)');
      if (c === '$' && s[j + 1] === '(') throw new Refused('command substitution $(…)');
      if (c === '\\' && j + 1 < s.length && '$`"\\\n'.includes(s[j + 1]!)) {
        if (s[j + 1] !== '\n') text += s[j + 1];
        j += 2;
        continue;
      }
      if (c === '$') expands = true;
      text += c;
      j++;
    }
    this.append(text, expands, j + 1);
    this.i = j + 1;
  }

  /** A redirection operator at `this.i`, with an optional fd number just before it. */
  private redirect(): void {
    const s = this.s;
    // `2>` : digits glued to the operator name a file descriptor, not a word.
    if (this.word && /^\d+$/.test(this.word.value) && this.s.slice(this.word.start, this.i) === this.word.value) this.word = undefined;
    else this.endWord();
    if (this.pending) throw new Refused('a redirection without a target');
    const rest = s.slice(this.i, this.i + 3);
    if (rest.startsWith('<<')) throw new Refused('a heredoc or here-string (<<)');
    if (/^[<>]\(/.test(rest)) throw new Refused('process substitution');
    const op = /^(&>>|&>|>>|>\||>&|<&|<>|>|<)/.exec(rest)![0];
    this.i += op.length;
    this.pending = { op };
  }

  private append(text: string, expands: boolean, end = this.i + 1): void {
    if (!this.word) this.word = { value: '', start: this.i, end, expands: false };
    this.word.value += text;
    this.word.end = end;
    this.word.expands ||= expands;
  }

  private endWord(): void {
    const w = this.word;
    if (!w) return;
    this.word = undefined;
    if (this.pending) {
      const op = this.pending.op;
      this.pending = undefined;
      const dup = (op === '>&' || op === '<&') && /^(\d+|-)$/.test(w.value);
      const writes = op !== '<' && op !== '<&' && !dup && w.value !== '/dev/null';
      this.tokens.push({ kind: 'redirect', redirect: { op, target: w.value, writes }, expands: w.expands });
    } else {
      this.tokens.push({ kind: 'word', word: w });
    }
  }

  /** Ends the current unit at `this.i` and skips a separator of `sepLength` characters. */
  private endUnit(sepLength: number): void {
    this.endWord();
    if (this.pending) throw new Refused('a redirection without a target');
    const text = this.s.slice(this.unitStart, this.i).trim();
    const sep = this.s.slice(this.i, this.i + sepLength);
    this.i += sepLength;
    this.unitStart = this.i;
    const tokens = this.tokens;
    this.tokens = [];
    const piped = this.pipedNext;
    this.pipedNext = sep === '|' || sep === '|&';
    if (tokens.length) this.units.push(toUnit(this.s, text, tokens, piped));
  }
}

function toUnit(source: string, text: string, tokens: Token[], piped: boolean): ShellUnit {
  const words: Word[] = [];
  const redirects: ShellRedirect[] = [];
  const flat: string[] = [];
  let expands = false;
  for (const t of tokens) {
    if (t.kind === 'word') {
      words.push(t.word);
      flat.push(t.word.value);
      // `[ -f x ]`, `{ …; }`: test and group words, not globs.
      expands ||= t.word.expands && !LITERAL_BRACKETS.has(t.word.value);
    } else {
      redirects.push(t.redirect);
      flat.push(t.redirect.op, t.redirect.target);
      expands ||= t.expands;
    }
  }
  let k = 0;
  while (k < words.length) {
    const w = words[k]!;
    const raw = source.slice(w.start, w.end);
    if (ASSIGNMENT.test(raw) || (PREFIX_WORDS.has(w.value) && raw === w.value)) k++;
    else break;
  }
  const name = words[k];
  if (name && name.expands && !['[', '[[', '{'].includes(name.value)) {
    throw new Refused(`the command name "${source.slice(name.start, name.end)}" is only known after expansion`);
  }
  return {
    text,
    tokens: flat,
    words: words.map((w) => w.value),
    command: words.slice(k).map((w) => w.value),
    redirects,
    writes: redirects.some((r) => r.writes),
    expands,
    piped,
  };
}

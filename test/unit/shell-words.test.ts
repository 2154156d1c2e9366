import { describe, expect, it } from 'vitest';
import { splitShellCommand, type ShellUnit } from '../../src/core/tools/native/shell-words.js';

function units(command: string): ShellUnit[] {
  const r = splitShellCommand(command);
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r.units;
}

const texts = (c: string) => units(c).map((u) => u.text);
const words = (c: string) => units(c).map((u) => u.tokens.join(' '));

describe('splitShellCommand: units', () => {
  it('splits at ; newline && || | |& and &', () => {
    expect(texts('a 1; b 2\nc && d || e | f |& g & h')).toEqual(['a 1', 'b 2', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  it('does not split inside quotes or at escaped separators', () => {
    expect(words(`echo 'a; b' "c && d" e\\;f`)).toEqual(['echo a; b c && d e;f']);
    expect(words("echo 'line1\nline2'")).toEqual(['echo line1\nline2']);
  });

  it('removes quotes and escapes from words', () => {
    expect(words(`"r"m victim.txt`)).toEqual(['rm victim.txt']);
    expect(words(`r\\m  victim.txt`)).toEqual(['rm victim.txt']);
    expect(words(`'r'"m" x`)).toEqual(['rm x']);
    expect(words(`echo "a\\"b\\\\c\\d"`)).toEqual(['echo a"b\\c\\d']);
  });

  it('backslash-newline continues the line', () => {
    expect(words('r\\\nm x \\\n y')).toEqual(['rm x y']);
  });

  it('# at a word start comments to the end of the line', () => {
    expect(texts('ls # ; rm -rf ~\nrm x')).toEqual(['ls # ; rm -rf ~', 'rm x']);
    expect(words('ls # ; rm -rf ~\nrm x')).toEqual(['ls', 'rm x']);
    expect(words('echo a#b')).toEqual(['echo a#b']);
  });

  it('skips empty units', () => {
    expect(texts(';; a ;\n\n b &')).toEqual(['a', 'b']);
    expect(units('   ')).toEqual([]);
  });

  it('separates leading assignments and keywords from the command', () => {
    const [u] = units('FOO=1 BAR+=x rm victim');
    expect(u!.words).toEqual(['FOO=1', 'BAR+=x', 'rm', 'victim']);
    expect(u!.command).toEqual(['rm', 'victim']);
    expect(units('if true; then rm x; fi').map((x) => x.command.join(' '))).toEqual(['true', 'rm x', '']);
    // a quoted "A=1" is a command name, not an assignment
    expect(units('"A=1" x')[0]!.command).toEqual(['A=1', 'x']);
  });
});

describe('splitShellCommand: redirections', () => {
  const redirects = (c: string) => units(c)[0]!.redirects;

  it('marks output redirections to files as writing', () => {
    for (const c of ['echo x > f', 'echo x>>f', 'echo x >| f', 'echo x &> f', 'echo x &>> f', 'echo x 2> f', 'echo x >& f', 'cat <> f']) {
      expect(units(c)[0]!.writes, c).toBe(true);
    }
    expect(redirects('git log > ~/.bashrc')).toEqual([{ op: '>', target: '~/.bashrc', writes: true }]);
  });

  it('/dev/null, fd duplications and input do not write', () => {
    for (const c of ['ls > /dev/null', 'ls 2>&1', 'ls >&2', 'ls 2>&-', 'cat < f', 'cat 0<&3', 'ls 2>/dev/null']) {
      expect(units(c)[0]!.writes, c).toBe(false);
    }
  });

  it('a glued fd number is not a word; a spaced one is', () => {
    expect(units('ls 2>&1')[0]!.words).toEqual(['ls']);
    expect(units('echo 2 > f')[0]!.words).toEqual(['echo', '2']);
    expect(words('echo x>f')).toEqual(['echo x > f']);
  });
});

describe('splitShellCommand: refuses what it cannot tell', () => {
  it.each([
    ['echo $(rm victim.txt)', 'command substitution'],
    ['echo `rm victim.txt`', 'backticks'],
    ['echo "$(rm x)"', 'command substitution'],
    ['echo "`rm x`"', 'backticks'],
    ["echo $'\\x72m'", 'quoting'],
    ['(rm x)', 'subshell'],
    ['cat <<EOF\nrm\nEOF', 'heredoc'],
    ['cat <<< rm', 'here-string'],
    ['diff <(ls) x', 'process substitution'],
    ['echo > >(sh)', 'redirection without a target'],
    ["echo 'open", 'single quote'],
    ['echo "open', 'double quote'],
    ['echo x \\', 'backslash'],
    ['echo x >', 'without a target'],
    ['echo x > ; rm y', 'without a target'],
    ['X=rm; $X victim', 'only known after expansion'],
    ['/bin/r? victim', 'only known after expansion'],
    ['{r,}m victim', 'only known after expansion'],
  ])('%j', (command, reason) => {
    const r = splitShellCommand(command);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('accepts [ and [[ as commands, and expansions in arguments', () => {
    expect(units('[ -f x ] && [[ -d y ]]').map((u) => u.command[0])).toEqual(['[', '[[']);
    expect(words('echo "$HOME" $USER *.ts')).toEqual(['echo $HOME $USER *.ts']);
  });
});

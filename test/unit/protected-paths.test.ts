import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { protectedTarget } from '../../src/core/tool-calls/protected-calls.js';
import { protectedPath } from '../../src/core/tool-calls/protected-paths.js';
import { nativeTools } from '../../src/core/tools/native/index.js';
import type { Tool } from '../../src/shapes/tool.js';
import { removeDir, tempDir } from './tools-helpers.js';

let ws: string;
let home: string;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  ws = await tempDir();
  home = await tempDir();
  env = { HOME: home, XDG_CONFIG_HOME: join(home, 'cfg'), PATCHBAY_HOME: join(home, 'data') };
});
afterEach(async () => {
  await removeDir(ws);
  await removeDir(home);
});

const tools = new Map(nativeTools().map((t) => [t.name, t] as [string, Tool]));
const tool = (name: string) => tools.get(name)!;

describe('protectedPath', () => {
  it('protects the listed names inside a workspace, at any depth and without case', async () => {
    for (const rel of [
      '.patchbay/config.json',
      '.git/hooks/pre-commit',
      '.git',
      '.vscode/settings.json',
      '.idea/x.xml',
      '.zed/tasks.json',
      '.claude/settings.json',
      '.cursor/rules',
      '.husky/pre-push',
      '.githooks/x',
      '.envrc',
      '.mcp.json',
      '.gitmodules',
      '.eca/config.json',
      'sub/.git/config',
      '.PATCHBAY/config.json',
    ]) {
      expect(await protectedPath(join(ws, rel), [ws], env), rel).toBeDefined();
    }
  });

  it('matches whole segments, not substrings', async () => {
    for (const rel of ['src/.gitignore', '.github/workflows/ci.yml', 'my.git/x', '.envrc.example', 'a.txt', '.patchbayrc']) {
      expect(await protectedPath(join(ws, rel), [ws], env), rel).toBeUndefined();
    }
  });

  it('follows symlinks, dangling ones too', async () => {
    await mkdir(join(ws, '.git', 'hooks'), { recursive: true });
    await symlink(join(ws, '.git', 'hooks'), join(ws, 'hooks'));
    await symlink(join(ws, '.vscode', 'tasks.json'), join(ws, 'tasks'));
    expect(await protectedPath(join(ws, 'hooks', 'pre-commit'), [ws], env)).toContain('.git');
    expect(await protectedPath(join(ws, 'tasks'), [ws], env)).toContain('.vscode');
  });

  it("protects patchbay's user config and data folders anywhere", async () => {
    expect(await protectedPath(join(home, 'cfg', 'patchbay', 'config.json'), [ws], env)).toContain('user config');
    expect(await protectedPath(join(home, 'data', 'trust.json'), [ws], env)).toContain('trust');
    expect(await protectedPath(join(home, 'cfg', 'other', 'x'), [ws], env)).toBeUndefined();
    // outside a workspace the names alone do not count (the outside check asks anyway)
    expect(await protectedPath(join(home, '.git', 'config'), [ws], env)).toBeUndefined();
  });
});

describe('protectedTarget', () => {
  it('write_file, edit_file and move_file (both ends) on a protected path', async () => {
    expect(await protectedTarget(tool('write_file'), { path: '.patchbay/config.json', content: '{}' }, [ws], env)).toMatch(/"\.patchbay\/config\.json" is protected/);
    expect(await protectedTarget(tool('edit_file'), { path: join(ws, '.vscode/settings.json') }, [ws], env)).toBeDefined();
    expect(await protectedTarget(tool('move_file'), { source: 'a', destination: '.git/hooks/pre-commit' }, [ws], env)).toBeDefined();
    expect(await protectedTarget(tool('move_file'), { source: '.envrc', destination: 'b' }, [ws], env)).toBeDefined();
    expect(await protectedTarget(tool('write_file'), { path: 'src/a.ts', content: '' }, [ws], env)).toBeUndefined();
  });

  it('read-only tools may read protected paths', async () => {
    expect(await protectedTarget(tool('read_file'), { path: '.git/config' }, [ws], env)).toBeUndefined();
  });

  it('shell_command: any word or piece of a word naming a protected path', async () => {
    const shell = tool('shell_command');
    for (const command of [
      'echo x > .patchbay/config.json',
      'cp evil ./.git/hooks/pre-commit',
      `echo {} > ${join(ws, '.vscode', 'settings.json')}`,
      `sh -c 'echo x >> .envrc'`,
      'cd sub && echo x > ../.mcp.json',
      'tee --output=.idea/workspace.xml',
      'echo x > $XDG_CONFIG_HOME/patchbay/config.json',
      `python3 -c "open('.claude/settings.json','w')"`,
      'git config core.hooksPath /tmp/h',
      'git -C . config --local core.fsmonitor evil',
    ]) {
      expect(await protectedTarget(shell, { command }, [ws], env), command).toBeDefined();
    }
    for (const command of ['echo x > notes.txt', 'git status && git diff', 'cat src/.gitignore', 'git config --get user.name', 'ls .github/workflows']) {
      expect(await protectedTarget(shell, { command }, [ws], env), command).toBeUndefined();
    }
  });

  it('shell_command: git config writes however they are spelled, globs that could name a protected path, wrappers', async () => {
    const shell = tool('shell_command');
    for (const command of [
      'git config core.hooksPath get',
      'git config set core.hooksPath list',
      'git config --unset core.hooksPath',
      'env git config core.hooksPath h',
      'sh -c "git config core.hooksPath h"',
      'cp pre-commit .gi?/hooks',
      'cp x .p*y/config.json',
      'echo x > .ENVRC',
    ]) {
      expect(await protectedTarget(shell, { command }, [ws], env), command).toBeDefined();
    }
  });

  it('shell_command: commands that only read may name protected paths; their writing redirections still count', async () => {
    const shell = tool('shell_command');
    for (const command of [
      'grep -rn foo . --exclude-dir=.git',
      'find . -path ./.git -prune -o -name "*.ts" -print',
      'ls -la .git',
      'cat .vscode/settings.json',
      'git log -- .gitmodules',
      'git config user.name',
      'git config get user.name',
      'git --no-pager config --list',
    ]) {
      expect(await protectedTarget(shell, { command }, [ws], env), command).toBeUndefined();
    }
    for (const command of ['cat x > .git/config', 'find . -name x -delete -path .git', 'git log > .envrc']) {
      expect(await protectedTarget(shell, { command }, [ws], env), command).toBeDefined();
    }
  });

  it('shell_command: a symlink named in the command and the working directory count', async () => {
    await mkdir(join(ws, '.patchbay'));
    await symlink(join(ws, '.patchbay'), join(ws, 'cfg'));
    await writeFile(join(ws, 'a.txt'), 'x');
    expect(await protectedTarget(tool('shell_command'), { command: 'echo x > cfg/config.json' }, [ws], env)).toBeDefined();
    expect(await protectedTarget(tool('shell_command'), { command: 'echo x > pre-commit', working_directory: '.git/hooks' }, [ws], env)).toBeDefined();
  });

  it('shell_command that cannot be split: only protected names in its text count', async () => {
    expect(await protectedTarget(tool('shell_command'), { command: 'echo $(echo x > .git/config)' }, [ws], env)).toBeDefined();
    expect(await protectedTarget(tool('shell_command'), { command: 'echo `date` > notes.txt' }, [ws], env)).toBeUndefined();
  });
});

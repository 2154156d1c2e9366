/**
 * `patchbay --version` (`-v`, `patchbay version`) names the version and the commit the build was
 * made from. The commit is recorded at build time (scripts/build-info.mjs → dist/build-info.json),
 * so a copy of the built package outside any checkout, as an npm install is, still names it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPatchbay, tempDir, useTempDirs } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const scratch = useTempDirs();

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', ['-C', cwd, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** What the checkout's HEAD is, as the build should have recorded it. */
function checkoutCommit(): string {
  const top = spawnSync('git', ['-C', ROOT, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' });
  return top.status === 0 && realpathSync(top.stdout.trim()) === realpathSync(ROOT) ? git(ROOT, 'rev-parse', '--short', 'HEAD') : 'unknown';
}

function buildInfo(dir: string): { version: string; commit: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/build-info.mjs'), dir], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(readFileSync(join(dir, 'dist', 'build-info.json'), 'utf8')) as { version: string; commit: string };
}

describe('patchbay --version', () => {
  it('--version, -v and `version` print the version and the commit of this build', async () => {
    const want = `patchbay ${VERSION} (commit ${checkoutCommit()})\n`;
    for (const arg of ['--version', '-v', 'version']) {
      const r = await runPatchbay([arg]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(want);
    }
  });

  it('a copy of the built package outside the checkout (an install) still names the commit it was built from', async () => {
    const pkg = scratch(tempDir('pb-installed-'));
    for (const part of ['bin', 'dist', 'package.json']) cpSync(join(ROOT, part), join(pkg, part), { recursive: true });
    const r = spawnSync(process.execPath, [join(pkg, 'bin', 'patchbay'), '--version'], { cwd: pkg, encoding: 'utf8', env: { ...process.env, HOME: pkg } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`patchbay ${VERSION} (commit ${checkoutCommit()})\n`);
  });

  it('the build records the checkout\'s short commit, and "unknown" outside a checkout or inside another project\'s', () => {
    const repo = scratch(tempDir('pb-repo-'));
    writeFileSync(join(repo, 'package.json'), JSON.stringify({ name: 'x', version: '9.8.7' }));
    expect(buildInfo(repo)).toEqual({ version: '9.8.7', commit: 'unknown' });

    git(repo, 'init', '-q');
    git(repo, 'add', 'package.json');
    git(repo, 'commit', '-qm', 'first');
    const sha = git(repo, 'rev-parse', '--short', 'HEAD');
    expect(buildInfo(repo)).toEqual({ version: '9.8.7', commit: sha });

    // A package folder inside another repository (say node_modules/patchbay-ai of a project) is not that project's build.
    const nested = join(repo, 'node_modules', 'pkg');
    mkdirSync(nested, { recursive: true });
    writeFileSync(join(nested, 'package.json'), JSON.stringify({ name: 'pkg', version: '1.2.3' }));
    expect(buildInfo(nested)).toEqual({ version: '1.2.3', commit: 'unknown' });
  });
});

#!/usr/bin/env node
// Writes dist/build-info.json: the version and the commit this build was made from, which
// `patchbay --version` prints. The commit is `git rev-parse --short HEAD` when the package folder
// is the top of a git checkout (a packaged install keeps the file it was built with), else "unknown".
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The short commit of the checkout `root` is the top of, or "unknown" (no git, not a checkout, or inside another project's). */
export function commitOf(root) {
  const git = (...args) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    // A package built inside another repository (node_modules/… of a project) must not take that project's commit.
    if (realpathSync(git('rev-parse', '--show-toplevel')) !== realpathSync(root)) return 'unknown';
    return git('rev-parse', '--short', 'HEAD') || 'unknown';
  } catch {
    return 'unknown';
  }
}

export function writeBuildInfo(root) {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const info = { version, commit: commitOf(root) };
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'dist', 'build-info.json'), `${JSON.stringify(info)}\n`);
  return info;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const info = writeBuildInfo(resolve(process.argv[2] ?? resolve(import.meta.dirname, '..')));
  process.stdout.write(`dist/build-info.json: ${info.version} (commit ${info.commit})\n`);
}

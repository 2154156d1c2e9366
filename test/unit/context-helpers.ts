/** Shared helpers for the context tests: real temp workspaces, real git repositories. */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export function tempWorkspace(prefix = 'patchbay-ctx-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

export function removeWorkspace(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** Write files (relative path → content), creating folders. */
export function writeFiles(root: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
  }
}

export function git(root: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `git init` + `git add -A`, checking the repository is the temp folder itself. */
export function gitRepo(root: string): void {
  git(root, 'init', '-q');
  if (realpathSync(git(root, 'rev-parse', '--show-toplevel').trim()) !== root) throw new Error('not a fresh repository');
  git(root, 'add', '-A');
}

export async function eventually<T>(fn: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

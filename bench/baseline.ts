/**
 * The builds a bench can measure: this checkout ("current"), and optionally a BASELINE build to
 * measure side by side with it in the same run (before/after figures).
 *
 * A baseline is either
 *   - `PATCHBAY_BENCH_BASELINE=<dir>`: a checkout whose `dist/` is built (`bin/patchbay` runs it), or
 *   - `--baseline <git rev>` (e.g. `npm run bench -- --baseline 8c00c1c startup`): the rev is
 *     exported with `git archive` (no `git worktree`, so the repository's worktree list is left
 *     alone) into `$PATCHBAY_BENCH_CACHE` (default `<tmpdir>/patchbay-bench-baselines`)`/<sha>`,
 *     given a symlink to this checkout's `node_modules`, and built with `npm run build`; a `.built`
 *     marker makes later runs reuse it. When the rev's package-lock.json differs from this
 *     checkout's, the shared node_modules may not fit it: the bench says so, and a baseline of
 *     your own (`npm ci && npm run build`, then PATCHBAY_BENCH_BASELINE) is the robust way.
 *
 * With neither, only the current build is measured.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BIN, ROOT } from './util.js';

export interface Build {
  /** `current` or `baseline` (the label in every figure). */
  name: string;
  /** The checkout's root. */
  root: string;
  /** Its `bin/patchbay`. */
  bin: string;
  /** What it is (a rev and its sha, or a folder). */
  describe: string;
}

export const CURRENT: Build = { name: 'current', root: ROOT, bin: BIN, describe: `this checkout (${ROOT})` };

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || r.error?.message || '').slice(-2000)}`);
  return r.stdout;
}

/** `--baseline <rev>` or `--baseline=<rev>` among `argv`, and `argv` without it. */
export function takeBaselineArg(argv: string[]): { rev: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let rev: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--baseline') rev = argv[++i];
    else if (a.startsWith('--baseline=')) rev = a.slice('--baseline='.length);
    else rest.push(a);
  }
  return { rev, rest };
}

/** A built checkout in `dir` (its `dist/bundle/main.cjs` exists). */
function fromDir(dir: string): Build {
  const root = resolve(dir);
  const bin = join(root, 'bin', 'patchbay');
  if (!existsSync(bin) || !existsSync(join(root, 'dist', 'bundle', 'main.cjs'))) {
    throw new Error(`PATCHBAY_BENCH_BASELINE=${dir}: no built checkout there (bin/patchbay and dist/bundle/main.cjs; run \`npm run build\` in it)`);
  }
  return { name: 'baseline', root, bin, describe: `the checkout in ${root}` };
}

/** Exports and builds `rev` once into the cache; later runs reuse it. */
function fromRev(rev: string, log: (s: string) => void): Build {
  const sha = run('git', ['rev-parse', '--verify', `${rev}^{commit}`], ROOT).trim();
  const cache = process.env.PATCHBAY_BENCH_CACHE || join(tmpdir(), 'patchbay-bench-baselines');
  const dir = join(cache, sha);
  const marker = join(dir, '.built');
  const describe = `${rev} (${sha.slice(0, 12)}), built in ${dir}`;
  if (existsSync(marker)) return { name: 'baseline', root: dir, bin: join(dir, 'bin', 'patchbay'), describe };
  log(`baseline: exporting ${rev} (${sha.slice(0, 12)}) into ${dir} and building it (once)…`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = `${dir}.tar`;
  run('git', ['archive', '--format=tar', '-o', tar, sha], ROOT);
  run('tar', ['-xf', tar, '-C', dir], dir);
  rmSync(tar, { force: true });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir');
  const lock = (d: string): string => (existsSync(join(d, 'package-lock.json')) ? readFileSync(join(d, 'package-lock.json'), 'utf8') : '');
  if (lock(dir) !== lock(ROOT)) {
    log(
      `  warning: ${rev}'s package-lock.json differs from this checkout's; it is built with this checkout's node_modules (for its own, \`npm ci && npm run build\` a checkout and set PATCHBAY_BENCH_BASELINE)`,
    );
  }
  run('npm', ['run', 'build'], dir);
  writeFileSync(marker, `${sha}\n`);
  return { name: 'baseline', root: dir, bin: join(dir, 'bin', 'patchbay'), describe };
}

/** The baseline the command line or the environment names, if any (building it when needed). */
export function resolveBaseline(rev: string | undefined, log: (s: string) => void): Build | undefined {
  if (rev) return fromRev(rev, log);
  const dir = process.env.PATCHBAY_BENCH_BASELINE;
  return dir ? fromDir(dir) : undefined;
}

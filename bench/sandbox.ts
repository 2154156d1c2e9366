/**
 * The cost of the OS sandbox (issue 31): a `true` run several ways, interleaved round by round
 * (the order rotating each round, so every leg shares the machine's load and none always goes
 * first):
 *
 *   patchbay  what shell_command does for a call, on the built dist/: `WorkspaceSandbox.plan(roots)`
 *             (the probe is cached after the first call; the policy is built again, as the tool
 *             gate and the tool each do per call), then `runShell('true', { wrap: plan.wrap })`,
 *             which runs `bwrap <policy> -- /bin/sh -c true` in its own process group and settles
 *             when its stdio closes. Two homes: `full`, where every path of the default hidden
 *             list exists and the chat has two roots (git repositories with `.patchbay/`), so
 *             bwrap does every mount a well-stocked home asks for; `plain`, one such root and no
 *             hidden path but patchbay's own home;
 *   policy    bwrap spawned from node with exactly the arguments the `full` policy gives it: what
 *             patchbay's `full` leg takes beyond it is patchbay's own code (plan, env, runShell),
 *             what it takes beyond bare bwrap is the policy's mounts;
 *   bwrap     the same `sh -c true` under bare bwrap with the same namespaces and no mounts but
 *             `/`, `/dev`, `/proc` and a /tmp tmpfs, spawned from node, until it closes;
 *   sh        `sh -c true` spawned from node, until it closes.
 *
 * Figures: median and p90 of each, patchbay / bwrap (target ≤ 1.3×), bwrap / sh (for
 * information: what the namespaces cost), and to tell where patchbay's extra time goes, the
 * in-process time of plan() and of wrap() (bwrapArgs: a stat per path) and the mounts the policy
 * adds.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { configSchema as ConfigSchema } from '../src/config/schema.js';
import type { runShell as RunShell } from '../src/core/tools/native/shell.js';
import type { HIDDEN_DEFAULT as HiddenDefault, WorkspaceSandbox as WorkspaceSandboxClass } from '../src/runtime/sandbox.js';
import type { Argv } from '../src/util/sandbox.js';
import { now, percentile, ROOT, tempDir } from './util.js';

export const SANDBOX_TARGET = 1.3;
const ROUNDS = Number(process.env.BENCH_SANDBOX_ROUNDS ?? 300);
const WARM = 20;
/** In-process timings of plan() and wrap(), each this many times. */
const INPROC = 2000;

export type Leg = 'full' | 'plain' | 'policy' | 'bwrap' | 'sh';
export const LEGS: Leg[] = ['full', 'plain', 'policy', 'bwrap', 'sh'];
export const LEG_NAMES: Record<Leg, string> = {
  full: 'patchbay, full home',
  plain: 'patchbay, plain home',
  policy: 'bwrap, full policy args',
  bwrap: 'bare bwrap',
  sh: 'sh -c true',
};

export interface Spread {
  p50: number;
  p90: number;
  min: number;
  max: number;
}

export interface HomeFigures {
  /** Median µs per call in process: plan(roots), and plan.wrap(argv, cwd). */
  planUs: number;
  wrapUs: number;
  /** Binds and tmpfs mounts beyond the bare leg's, and `--remount-ro`s. */
  extraMounts: number;
  remounts: number;
}

export interface SandboxRun {
  rounds: number;
  bwrap: string;
  version: string;
  legs: Record<Leg, Spread>;
  /** Round by round, the median of a / b. */
  perRound: (a: Leg, b: Leg) => number;
  homes: { full: HomeFigures; plain: HomeFigures };
}

interface SandboxModule {
  WorkspaceSandbox: typeof WorkspaceSandboxClass;
  HIDDEN_DEFAULT: typeof HiddenDefault;
}
interface SchemaModule {
  configSchema: typeof ConfigSchema;
}
interface ShellModule {
  runShell: typeof RunShell;
}

const dist = (rel: string): string => pathToFileURL(join(ROOT, 'dist', rel)).href;

function spread(xs: number[]): Spread {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), min: s[0], max: s[s.length - 1] };
}

const median = (xs: number[]): number => spread(xs).p50;

/** Spawns `command args` with no input and piped output (as runShell does); resolves with ms from spawn to close. */
function timeSpawn(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let err = '';
    child.stdout.on('data', () => {});
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`${command} exited ${String(code)}: ${err.trim().slice(0, 300)}`))));
  });
}

/** A home with patchbay's config and home, `roots` git roots with `.patchbay/`, and (`hidden`) those paths of the hidden list. */
function makeHome(roots: string[], hidden: readonly string[]): { home: string; roots: string[] } {
  const home = tempDir('pb-bench-sandbox-home-');
  for (const h of hidden) {
    const p = join(home, h.slice(2));
    // The ones that are files in real life.
    if (/\.netrc$|\.git-credentials$/.test(p)) {
      mkdirSync(join(p, '..'), { recursive: true });
      writeFileSync(p, 'secret\n');
    } else mkdirSync(p, { recursive: true });
  }
  mkdirSync(join(home, '.config', 'patchbay'), { recursive: true });
  writeFileSync(join(home, '.config', 'patchbay', 'config.json'), '{}\n');
  mkdirSync(join(home, '.cache', 'patchbay'), { recursive: true });
  const dirs = roots.map((name) => {
    const r = join(home, 'src', name);
    mkdirSync(join(r, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(r, '.git', 'config'), '[core]\n');
    mkdirSync(join(r, '.patchbay'), { recursive: true });
    return r;
  });
  return { home, roots: dirs };
}

const TRUE: Argv = { command: '/bin/sh', args: ['-c', 'true'] };

const BARE = [
  '--die-with-parent',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--unshare-net',
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--tmpfs',
  '/tmp',
];

const mounts = (args: string[]): number => args.filter((a) => a === '--bind' || a === '--ro-bind' || a === '--tmpfs').length;

export async function runSandbox(log: (s: string) => void = console.log): Promise<SandboxRun> {
  const { WorkspaceSandbox, HIDDEN_DEFAULT } = (await import(dist('runtime/sandbox.js'))) as SandboxModule;
  const { runShell } = (await import(dist('core/tools/native/shell.js'))) as ShellModule;
  const { configSchema } = (await import(dist('config/schema.js'))) as SchemaModule;
  const config = configSchema.parse({ memory: { enabled: true } });

  /** A sandboxed chat in a home made by makeHome: its plan, and one shell_command call. */
  const chatIn = async (made: { home: string; roots: string[] }) => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: made.home, PATCHBAY_HOME: join(made.home, '.cache', 'patchbay') };
    delete env.XDG_CONFIG_HOME;
    const sandbox = new WorkspaceSandbox({ env, homeDir: made.home, config: () => config });
    const plan = await sandbox.plan(made.roots);
    if (plan.kind !== 'sandboxed') throw new Error(`no sandbox here: ${plan.why}`);
    const cwd = made.roots[0];
    const signal = new AbortController().signal;
    const call = async (): Promise<number> => {
      const t0 = now();
      const p = await sandbox.plan(made.roots);
      if (p.kind !== 'sandboxed') throw new Error(`the sandbox went away: ${p.why}`);
      const r = await runShell('true', { cwd, timeoutMs: 30_000, signal, maxOutputChars: 100_000, env, wrap: p.wrap });
      if (r.exitCode !== 0) throw new Error(`sandboxed true exited ${String(r.exitCode)}: ${r.spawnError ?? r.output.slice(0, 300)}`);
      return now() - t0;
    };
    /** Where patchbay's own time goes, in process. */
    const inProcess = async (): Promise<Pick<HomeFigures, 'planUs' | 'wrapUs'>> => {
      const planTimes: number[] = [];
      const wrapTimes: number[] = [];
      for (let i = 0; i < INPROC; i++) {
        const t0 = now();
        const p = await sandbox.plan(made.roots);
        const t1 = now();
        if (p.kind === 'sandboxed') p.wrap(TRUE, cwd);
        planTimes.push((t1 - t0) * 1000);
        wrapTimes.push((now() - t1) * 1000);
      }
      return { planUs: median(planTimes), wrapUs: median(wrapTimes) };
    };
    const args = plan.wrap(TRUE, cwd).args;
    return { plan, env, cwd, call, inProcess, args, extraMounts: mounts(args) - mounts(BARE), remounts: args.filter((a) => a === '--remount-ro').length };
  };

  const full = await chatIn(makeHome(['app', 'lib'], HIDDEN_DEFAULT));
  const plain = await chatIn(makeHome(['app'], []));
  const { bwrap, version } = full.plan.support;
  log(`sandbox: \`true\` through runShell + WorkspaceSandbox.plan (dist/) vs bare ${bwrap} (${version}) vs sh, ${ROUNDS} interleaved rounds…`);
  log(`  full home: ${full.extraMounts} mounts and ${full.remounts} remounts more than bare bwrap; plain home: ${plain.extraMounts} and ${plain.remounts}`);

  const once: Record<Leg, () => Promise<number>> = {
    full: full.call,
    plain: plain.call,
    policy: () => timeSpawn(bwrap, [...full.args, '--', '/bin/sh', '-c', 'true'], full.env, full.cwd),
    bwrap: () => timeSpawn(bwrap, [...BARE, '--', '/bin/sh', '-c', 'true'], full.env, full.cwd),
    sh: () => timeSpawn('/bin/sh', ['-c', 'true'], full.env, full.cwd),
  };
  const times: Record<Leg, number[]> = { full: [], plain: [], policy: [], bwrap: [], sh: [] };
  for (let round = 0; round < WARM + ROUNDS; round++) {
    for (let i = 0; i < LEGS.length; i++) {
      const leg = LEGS[(round + i) % LEGS.length];
      const t = await once[leg]();
      if (round >= WARM) times[leg].push(t);
    }
  }
  const legs = Object.fromEntries(LEGS.map((l) => [l, spread(times[l])])) as Record<Leg, Spread>;
  const home = async (c: typeof full): Promise<HomeFigures> => ({ ...(await c.inProcess()), extraMounts: c.extraMounts, remounts: c.remounts });
  return {
    rounds: ROUNDS,
    bwrap,
    version,
    legs,
    perRound: (a, b) => median(times[a].map((x, i) => x / times[b][i])),
    homes: { full: await home(full), plain: await home(plain) },
  };
}

/**
 * Runs acpx (the headless ACP client, npm `acpx`, pinned in test/conformance/node22 and installed
 * by scripts/ensure-node22.mjs) against the built `patchbay acp` for one prompt, and hands back
 * what it printed. acpx needs Node 22; patchbay runs on this Node (20), by absolute path, because
 * acpx resolves the agent command's `node` through PATH.
 *
 * `--format json --json-strict` makes acpx print the raw ACP JSON-RPC traffic, both directions,
 * one message per line and nothing else on stdout (acpx docs/CLI.md "Output formats"); `exec`
 * runs a one-shot session that keeps nothing under ~/.acpx (HOME is a temp dir anyway).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BIN, cliEnv } from './harness.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NODE22_DIR = join(ROOT, 'test/conformance/node22');
export const NODE22 = join(NODE22_DIR, 'node_modules/.bin/node');
export const ACPX = join(NODE22_DIR, 'node_modules/acpx/dist/cli.js');

/** acpx's exit codes (its docs/CLI.md "Exit codes", src/types.ts `EXIT_CODES`). */
export const ACPX_EXIT = { ok: 0, agentError: 1, usage: 2, timeout: 3, noSession: 4, permissionDenied: 5, interrupted: 130 } as const;

/** Throws with the fix when Node 22 or acpx is not installed (they come from the npm registry). */
export function assertAcpxInstalled(): void {
  if (!existsSync(NODE22) || !existsSync(ACPX)) {
    throw new Error(`acpx or Node 22 missing under ${NODE22_DIR}: run \`node scripts/ensure-node22.mjs\` (npm test does)`);
  }
}

export interface AcpxOptions {
  /** The workspace: acpx's --cwd, which it sends as session/new `cwd`. */
  cwd: string;
  /** The temp home for acpx and patchbay (HOME, XDG_CONFIG_HOME, PATCHBAY_HOME; see harness cliEnv). */
  home: string;
  /** patchbay's config (PATCHBAY_CONFIG), inherited by the agent from acpx's environment. */
  config: Record<string, unknown>;
  /** How permission requests are answered. */
  permissions: 'approve-all' | 'deny-all';
  /** Kill the whole process group and reject after this long (default 60 s). */
  timeoutMs?: number;
}

/** One JSON-RPC message acpx printed: its own requests and responses and the agent's. */
export type AcpxLine = { jsonrpc: '2.0'; id?: number | string | null; method?: string; params?: any; result?: any; error?: any };

export interface AcpxRun {
  code: number | null;
  lines: AcpxLine[];
  stdout: string;
  stderr: string;
}

/** `acpx --<permissions> --format json --json-strict --cwd <cwd> --agent "<node20> <bin/patchbay> acp" exec <prompt>`. */
export function runAcpx(prompt: string, opts: AcpxOptions): Promise<AcpxRun> {
  return runAcpxCommand(['exec', prompt], opts);
}

/** The same with another acpx command after the options (`['sessions', 'new']`, `['prompt', text]`): its persistent sessions live under the temp HOME's ~/.acpx. */
export function runAcpxCommand(command: string[], opts: AcpxOptions): Promise<AcpxRun> {
  assertAcpxInstalled();
  // acpx shell-splits --agent; the paths here hold no spaces or quotes (temp dirs and the repo).
  const agent = `${process.execPath} ${BIN} acp`;
  const args = [ACPX, `--${opts.permissions}`, '--format', 'json', '--json-strict', '--cwd', opts.cwd, '--agent', agent, ...command];
  // Its own process group, so a deadline kills acpx and the agent it started together.
  const child = spawn(NODE22, args, {
    cwd: opts.cwd,
    env: cliEnv(opts.home, { PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 }, ...opts.config }) }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timeoutMs = opts.timeoutMs ?? 60_000;
  return new Promise((resolveRun, reject) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
      reject(new Error(`acpx did not exit in ${timeoutMs} ms\nstdout:\n${stdout.slice(-4000)}\nstderr:\n${stderr.slice(-4000)}`));
    }, timeoutMs);
    child.on('error', (e) => (clearTimeout(timer), reject(e)));
    child.on('close', (code) => {
      clearTimeout(timer);
      try {
        resolveRun({ code, lines: parseLines(stdout), stdout, stderr });
      } catch (e) {
        reject(e instanceof Error ? new Error(`${e.message}\nstderr:\n${stderr.slice(-4000)}`) : e);
      }
    });
  });
}

/** --json-strict promises JSON only on stdout: a line that is not JSON fails the test, with the line. */
function parseLines(stdout: string): AcpxLine[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as AcpxLine;
      } catch {
        throw new Error(`acpx printed a line that is not JSON: ${l.slice(0, 300)}`);
      }
    });
}

/**
 * The pids of live processes whose environment has HOME=<home>: what a run with that temp home
 * left behind (acpx, patchbay and their children all inherit it). Linux /proc; elsewhere empty.
 */
export function processesWithHome(home: string): number[] {
  if (!existsSync('/proc')) return [];
  const needle = `HOME=${home}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

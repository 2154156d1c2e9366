/**
 * Shared bench helpers: a spawned `patchbay server` driven over real stdio with hand-parsed
 * Content-Length frames (every message carries the time its bytes arrived), percentiles,
 * temp dirs and formatting.
 *
 * All times are `performance.now()` in the bench process: the fake LLM, the direct SSE
 * client and the reader of patchbay's stdout all live here, so one clock serves them all.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { FramedProcess, initializeParams, type Msg } from '../test/support/framed.js';

/** The checkout root (this file runs from bench/.out/bench/). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Writes `text` to bench/.work/<name> (directories created) and returns the absolute path: a
 * script written there resolves its imports from the checkout's node_modules.
 */
export function workFile(name: string, text: string): string {
  const file = join(ROOT, 'bench', '.work', name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}
export const BIN = join(ROOT, 'bin', 'patchbay');

export const now = (): number => performance.now();
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- statistics

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function median(xs: number[]): number {
  return percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

export function summarize(xs: number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const sum = s.reduce((a, b) => a + b, 0);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), min: s[0], max: s[s.length - 1], mean: sum / s.length };
}

// ---------------------------------------------------------------- formatting

export const ms = (x: number, digits = 2): string => (Number.isFinite(x) ? `${x.toFixed(digits)} ms` : 'n/a');
export const mb = (kb: number): string => `${(kb / 1024).toFixed(1)} MB`;
export const rate = (perSec: number): string => (perSec >= 1000 ? `${(perSec / 1000).toFixed(1)}k/s` : `${perSec.toFixed(0)}/s`);
export const ratio = (x: number, digits = 2): string => (Number.isFinite(x) ? `${x.toFixed(digits)}×` : 'n/a');
export const pct = (x: number): string => (Number.isFinite(x) ? `${(x * 100).toFixed(0)}%` : 'n/a');

// ---------------------------------------------------------------- files

const temps: string[] = [];

export function tempDir(prefix = 'pb-bench-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}

export function cleanupTemps(): void {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** `VmRSS` / `VmHWM` of a live process, in kB (Linux). */
export function procMemKb(pid: number): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: field('VmRSS'), hwm: field('VmHWM') };
}

/** Clock ticks per second of /proc/<pid>/stat's CPU times. */
let clockTicks: number | undefined;

/**
 * CPU time (user + system, all threads) a live process has used so far, in ms (Linux, from
 * /proc/<pid>/stat; a resolution of one clock tick, 10 ms on most systems). Unlike wall-clock
 * time it barely moves when other processes load the cores, so before/after figures of a busy
 * machine compare better in it.
 */
export function procCpuMs(pid: number): number {
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces and parentheses): state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / clockTicks;
}

// ---------------------------------------------------------------- patchbay over stdio

export type { Msg };

/** A message and the bench-clock time its last byte was read from the child's stdout. */
export interface Timed {
  msg: Msg;
  t: number;
}

export type Listener = (msg: Msg, t: number) => void;

export function fakeConfig(fakeUrl: string): Record<string, unknown> {
  return {
    providers: { fake: { api: 'openai-chat', url: `${fakeUrl}/v1`, key: 'x', models: { m1: {} } } },
    defaultModel: 'fake/m1',
    chat: { generateTitles: false },
    gateway: { port: 0 },
  };
}

export interface SpawnOptions {
  /** Used for HOME and PATCHBAY_HOME. */
  home: string;
  config?: Record<string, unknown>;
  /**
   * Extra node flags for the child, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. Defaults to
   * $BENCH_CHILD_NODE_ARGS (space-separated) so any bench can be profiled without edits.
   */
  nodeArgs?: string[];
  /** Extra environment variables for the child (e.g. `PATCHBAY_LOCAL_MODEL: 'off'`). */
  env?: Record<string, string>;
  /** The `bin/patchbay` to run: this checkout's by default, a baseline's (bench/baseline.ts) to compare. */
  bin?: string;
}

/**
 * Requests, responses and listeners over any framing (ECA's Content-Length, ACP's lines): every
 * message comes with the bench-clock time its bytes were read.
 */
export class TimedRpc {
  private nextId = 1_000_000;
  private readonly pending = new Map<number, (m: Timed) => void>();
  private readonly listeners = new Set<Listener>();

  constructor(
    private readonly sendMsg: (msg: Record<string, unknown>) => void,
    private readonly stderrTail: () => string,
  ) {}

  /** A message read at `t`: settles its request, then every listener hears it. */
  dispatch(msg: Msg, t: number): void {
    if (msg.method === undefined && typeof msg.id === 'number') {
      const resolve = this.pending.get(msg.id);
      if (resolve) {
        this.pending.delete(msg.id);
        resolve({ msg, t });
      }
    }
    for (const l of this.listeners) l(msg, t);
  }

  /** Calls `fn` for every message from now on; returns the unsubscribe. */
  listen(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Sends a request; resolves with the response and the time it arrived (rejects on an error response). */
  request(method: string, params?: unknown, timeoutMs = 60_000): Promise<Timed> {
    const id = this.nextId++;
    const p = new Promise<Timed>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${method}: no response in ${timeoutMs} ms; stderr tail:\n${this.stderrTail().slice(-2000)}`));
      }, timeoutMs);
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        if (m.msg.error) reject(new Error(`${method} failed: ${m.msg.error.code} ${m.msg.error.message}`));
        else resolve(m);
      });
    });
    this.sendMsg({ id, method, ...(params === undefined ? {} : { params }) });
    return p;
  }

  /** The next message matching `pred` (from now on). */
  waitFor(pred: (m: Msg) => boolean, what: string, timeoutMs = 60_000): Promise<Timed> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out waiting for ${what}; stderr tail:\n${this.stderrTail().slice(-2000)}`));
      }, timeoutMs);
      const off = this.listen((msg, t) => {
        if (!pred(msg)) return;
        clearTimeout(timer);
        off();
        resolve({ msg, t });
      });
    });
  }
}

/** The environment and node flags of a spawned patchbay (HOME and PATCHBAY_HOME are `home`). */
export function childEnv(opts: SpawnOptions): { env: Record<string, string>; nodeArgs: string[] } {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: opts.home,
    PATCHBAY_HOME: opts.home,
    ...(opts.config ? { PATCHBAY_CONFIG: JSON.stringify(opts.config) } : {}),
    ...opts.env,
  };
  return { env, nodeArgs: opts.nodeArgs ?? (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(/\s+/).filter(Boolean) };
}

export class Server extends FramedProcess {
  private readonly rpc = new TimedRpc(
    (m) => this.send(m),
    () => this.stderr,
  );

  constructor(opts: SpawnOptions) {
    const { env, nodeArgs } = childEnv(opts);
    super([...nodeArgs, opts.bin ?? BIN, 'server'], env, { stderrLimit: 100_000 });
  }

  // Not a frame: say so and carry on (a throw here would kill the bench).
  protected onBadFrame(e: Error): void {
    process.stderr.write(`bench: ${e.message}\n`);
  }

  protected onMessage(msg: Msg, t: number): void {
    this.rpc.dispatch(msg, t);
  }

  listen(fn: Listener): () => void {
    return this.rpc.listen(fn);
  }

  request(method: string, params?: unknown, timeoutMs = 60_000): Promise<Timed> {
    return this.rpc.request(method, params, timeoutMs);
  }

  waitFor(pred: (m: Msg) => boolean, what: string, timeoutMs = 60_000): Promise<Timed> {
    return this.rpc.waitFor(pred, what, timeoutMs);
  }

  initializeParams(root: string): Record<string, unknown> {
    return initializeParams(root, 'patchbay-bench');
  }

  /** initialize → initialized → the first `config/updated` (models known). */
  async handshake(root: string): Promise<void> {
    const configured = this.waitFor((m) => m.method === 'config/updated', 'config/updated');
    await this.request('initialize', this.initializeParams(root));
    this.notify('initialized', {});
    await configured;
  }

  /** shutdown + exit (so `--cpu-prof` profiles get written), SIGKILL after 5 s as a last resort. */
  stop(): Promise<number | null> {
    return this.stopWith(() => this.request('shutdown', undefined, 5_000), 5_000);
  }
}

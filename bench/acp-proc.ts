/**
 * A spawned `patchbay acp` driven over real stdio with hand-parsed newline-delimited JSON-RPC
 * (ACP's stdio transport: one message per line, no embedded newlines), the ndjson sibling of
 * bench/util.ts `Server`. No ACP SDK on the measuring side: every message carries the
 * bench-clock time its bytes were read, and nothing but a line split and JSON.parse stands
 * between the pipe and that time.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN, now, type Listener, type Msg, type Timed } from './util.js';

export class AcpProc {
  readonly child: ChildProcessWithoutNullStreams;
  /** `now()` just before the spawn. */
  readonly spawnedAt: number;
  readonly exited: Promise<number | null>;
  stderr = '';
  private nextId = 0;
  private rest = '';
  private readonly pending = new Map<number, (m: Timed) => void>();
  private readonly listeners = new Set<Listener>();

  /** `home` is HOME and PATCHBAY_HOME, as for bench/util.ts Server; BENCH_CHILD_NODE_ARGS applies too. */
  constructor(opts: { home: string; config?: Record<string, unknown>; env?: Record<string, string> }) {
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: opts.home,
      PATCHBAY_HOME: opts.home,
      ...(opts.config ? { PATCHBAY_CONFIG: JSON.stringify(opts.config) } : {}),
      ...opts.env,
    };
    const nodeArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
    this.spawnedAt = now();
    this.child = spawn(process.execPath, [...nodeArgs, BIN, 'acp'], { env, stdio: 'pipe' });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (d: string) => this.onData(d, now()));
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      if (this.stderr.length > 100_000) this.stderr = this.stderr.slice(-50_000);
    });
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  private onData(d: string, t: number): void {
    this.rest += d;
    let nl: number;
    while ((nl = this.rest.indexOf('\n')) >= 0) {
      const line = this.rest.slice(0, nl);
      this.rest = this.rest.slice(nl + 1);
      if (line.trim() === '') continue;
      let msg: Msg;
      try {
        msg = JSON.parse(line) as Msg;
      } catch {
        // Not a message: say so and carry on (a throw here would kill the bench).
        process.stderr.write(`bench: patchbay acp wrote a line that is not JSON: ${line.slice(0, 200)}\n`);
        continue;
      }
      if (msg.method === undefined && typeof msg.id === 'number') {
        const resolve = this.pending.get(msg.id);
        if (resolve) {
          this.pending.delete(msg.id);
          resolve({ msg, t });
        }
      }
      for (const l of this.listeners) l(msg, t);
    }
  }

  send(msg: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
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
        reject(new Error(`${method}: no response in ${timeoutMs} ms; stderr tail:\n${this.stderr.slice(-2000)}`));
      }, timeoutMs);
      this.pending.set(id, (m) => {
        clearTimeout(timer);
        if (m.msg.error) reject(new Error(`${method} failed: ${m.msg.error.code} ${m.msg.error.message}`));
        else resolve(m);
      });
    });
    this.send({ id, method, ...(params === undefined ? {} : { params }) });
    return p;
  }

  /** ACP v1 `initialize` of a client offering nothing (the smallest an editor sends). */
  initialize(timeoutMs = 30_000): Promise<Timed> {
    return this.request('initialize', { protocolVersion: 1, clientCapabilities: {} }, timeoutMs);
  }

  /**
   * ACP has no shutdown request: a client ends the agent by closing its stdin. SIGKILL after
   * 5 s as a last resort.
   */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.stdin.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}

/**
 * A spawned `patchbay acp` driven over real stdio with hand-parsed newline-delimited JSON-RPC
 * (ACP's stdio transport: one message per line, no embedded newlines), the ndjson sibling of
 * bench/util.ts `Server`. No ACP SDK on the measuring side: every message carries the
 * bench-clock time its bytes were read, and nothing but a line split and JSON.parse stands
 * between the pipe and that time.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN, childEnv, now, TimedRpc, type Listener, type Msg, type SpawnOptions, type Timed } from './util.js';

export class AcpProc {
  readonly child: ChildProcessWithoutNullStreams;
  /** `now()` just before the spawn. */
  readonly spawnedAt: number;
  readonly exited: Promise<number | null>;
  stderr = '';
  private rest = '';
  private readonly rpc = new TimedRpc(
    (m) => this.send(m),
    () => this.stderr,
  );

  /** `home` is HOME and PATCHBAY_HOME, as for bench/util.ts Server; BENCH_CHILD_NODE_ARGS applies too. */
  constructor(opts: SpawnOptions) {
    const { env, nodeArgs } = childEnv(opts);
    this.spawnedAt = now();
    this.child = spawn(process.execPath, [...nodeArgs, opts.bin ?? BIN, 'acp'], { env, stdio: 'pipe' });
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
      this.rpc.dispatch(msg, t);
    }
  }

  send(msg: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
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

/**
 * A child process spoken to over stdio with hand-made `Content-Length` frames, shared by the
 * e2e harness (test/e2e/harness.ts) and the benchmarks (bench/util.ts): framing, sending, the
 * child's stderr and exit, and a graceful stop. How responses are awaited is left to each.
 *
 * No test-runner imports: bench/tsconfig.json compiles this file too.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

export interface Msg {
  jsonrpc: '2.0';
  id?: number | string | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: unknown };
}

const CRLF2 = Buffer.from('\r\n\r\n', 'ascii');
const EMPTY = Buffer.alloc(0);

/** `msg` as one JSON-RPC frame (header and body in one buffer, so one write). */
export function encodeFrame(msg: Record<string, unknown>): Buffer {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...msg }), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
}

/** Bytes that are not a `Content-Length` frame. */
export class FrameError extends Error {}

/** Splits a byte stream into the JSON messages of its `Content-Length` frames. */
export class FrameDecoder {
  private buf: Buffer = EMPTY;

  /**
   * Adds bytes and calls `onMessage` for each frame they complete, in order. A header without
   * `Content-Length` throws a FrameError, after dropping what was buffered.
   */
  push(d: Buffer, onMessage: (msg: Msg) => void): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    for (;;) {
      const end = this.buf.indexOf(CRLF2);
      if (end < 0) return;
      const m = /Content-Length:\s*(\d+)/i.exec(this.buf.toString('ascii', 0, end));
      if (!m) {
        const header = this.buf.toString('utf8', 0, end);
        this.buf = EMPTY;
        throw new FrameError(`bad header from server: ${JSON.stringify(header.slice(0, 200))}`);
      }
      const start = end + 4;
      const stop = start + Number(m[1]);
      if (this.buf.length < stop) return;
      const msg = JSON.parse(this.buf.toString('utf8', start, stop)) as Msg;
      this.buf = stop === this.buf.length ? EMPTY : this.buf.subarray(stop);
      onMessage(msg);
    }
  }
}

/** `initialize` params of an editor with chat support and one workspace folder, `root`. */
export function initializeParams(root: string, clientName: string): Record<string, unknown> {
  return {
    processId: process.pid,
    clientInfo: { name: clientName, version: '1' },
    capabilities: { codeAssistant: { chat: true } },
    workspaceFolders: [{ uri: pathToFileURL(root).href, name: 'ws' }],
  };
}

/** `node …args` with piped stdio, read and written as frames. */
export abstract class FramedProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  /** `performance.now()` just before the spawn. */
  readonly spawnedAt: number;
  stderr = '';
  protected nextId = 1;
  private readonly decoder = new FrameDecoder();

  /** `stderrLimit`: past this many characters, only the last half of them is kept. */
  constructor(args: string[], env: Record<string, string>, opts: { stderrLimit?: number } = {}) {
    this.spawnedAt = performance.now();
    this.child = spawn(process.execPath, args, { env, stdio: 'pipe' });
    this.child.stdout.on('data', (d: Buffer) => {
      const t = performance.now();
      try {
        this.decoder.push(d, (msg) => this.onMessage(msg, t));
      } catch (e) {
        if (!(e instanceof FrameError)) throw e;
        this.onBadFrame(e);
      }
    });
    this.child.stderr.on('data', (d: Buffer) => {
      this.stderr += d.toString();
      if (opts.stderrLimit !== undefined && this.stderr.length > opts.stderrLimit) this.stderr = this.stderr.slice(-opts.stderrLimit / 2);
    });
    this.exited = new Promise((r) => this.child.on('exit', (code) => r(code)));
  }

  /** Each message from the child, with the time its bytes were read. */
  protected abstract onMessage(msg: Msg, t: number): void;

  /** Output that is not a frame (what was buffered is dropped); rethrown unless overridden. */
  protected onBadFrame(e: FrameError): void {
    throw e;
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  writeRaw(bytes: string | Buffer): void {
    this.child.stdin.write(bytes);
  }

  send(msg: Record<string, unknown>): void {
    this.writeRaw(encodeFrame(msg));
  }

  notify(method: string, params?: unknown): void {
    this.send({ method, ...(params === undefined ? {} : { params }) });
  }

  /**
   * `shutdown` (awaited as `shutdown()` says) + `exit`, then SIGKILL if the child is still
   * there after `killAfterMs`. Resolves with the exit code.
   */
  protected async stopWith(shutdown: () => Promise<unknown>, killAfterMs: number): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    try {
      await shutdown();
      this.notify('exit');
    } catch {
      /* gone or stuck */
    }
    const t = setTimeout(() => this.child.kill('SIGKILL'), killAfterMs);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}

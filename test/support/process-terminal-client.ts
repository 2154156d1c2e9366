/**
 * A stand-in for an ACP client's terminals (Zed's, acpx's) with real processes: `terminal/create`
 * spawns the command in its own process group, output is kept within `outputByteLimit` by dropping
 * from the start at a character boundary (ACP `CreateTerminalRequest.outputByteLimit`),
 * `wait_for_exit` resolves when it exits, `kill` kills it and keeps the terminal, `release` kills
 * and forgets it. It records every call in order, and can be told to misbehave.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { CreateTerminalRequest, TerminalOutputResponse, WaitForTerminalExitResponse } from '@agentclientprotocol/sdk';
import type { TerminalClient } from '../../src/server/acp/terminal.js';

export interface Misbehaviour {
  /** `terminal/create` fails with this message. */
  createError?: string;
  /** `terminal/create` is answered only when `answerCreate()` is called. */
  holdCreate?: boolean;
  /** The output is kept whole, whatever the limit. */
  ignoreLimit?: boolean;
  /** `terminal/output` fails with this message. */
  outputError?: string;
  /** `terminal/kill` and `terminal/release` are never answered (the process is still killed). */
  silentAfterExit?: boolean;
}

interface Terminal {
  child: ChildProcess;
  output: Buffer;
  truncated: boolean;
  limit: number | null;
  exit?: { exitCode: number | null; signal: string | null };
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
}

export class ProcessTerminalClient implements TerminalClient {
  readonly calls: Array<{ method: string; terminalId?: string; params?: CreateTerminalRequest }> = [];
  readonly pids: number[] = [];
  private readonly terminals = new Map<string, Terminal>();
  private next = 0;
  private held: Array<() => void> = [];

  constructor(private readonly misbehave: Misbehaviour = {}) {}

  methods(): string[] {
    return this.calls.map((c) => c.method);
  }

  /** Answers the held `terminal/create` requests (see `holdCreate`). */
  answerCreate(): void {
    for (const go of this.held.splice(0)) go();
  }

  async createTerminal(params: CreateTerminalRequest): Promise<{ id: string }> {
    this.calls.push({ method: 'create', params });
    if (this.misbehave.holdCreate) await new Promise<void>((r) => this.held.push(r));
    if (this.misbehave.createError) throw new Error(this.misbehave.createError);
    const env = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    const child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? undefined, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (child.pid) this.pids.push(child.pid);
    const id = `term-${++this.next}`;
    const t: Terminal = {
      child,
      output: Buffer.alloc(0),
      truncated: false,
      limit: this.misbehave.ignoreLimit ? null : (params.outputByteLimit ?? null),
      exited: new Promise((resolve) => {
        child.on('close', (code, signal) => {
          t.exit = { exitCode: code, signal };
          resolve(t.exit);
        });
        child.on('error', () => {
          t.exit = { exitCode: 127, signal: null };
          resolve(t.exit);
        });
      }),
    };
    const push = (b: Buffer): void => {
      t.output = Buffer.concat([t.output, b]);
      if (t.limit !== null && t.output.length > t.limit) {
        let start = t.output.length - t.limit;
        while (start < t.output.length && (t.output[start] & 0xc0) === 0x80) start++;
        t.output = t.output.subarray(start);
        t.truncated = true;
      }
    };
    child.stdout?.on('data', push);
    child.stderr?.on('data', push);
    this.terminals.set(id, t);
    return { id };
  }

  async waitForExit(terminalId: string): Promise<WaitForTerminalExitResponse> {
    this.calls.push({ method: 'waitForExit', terminalId });
    return this.get(terminalId).exited;
  }

  async output(terminalId: string): Promise<TerminalOutputResponse> {
    this.calls.push({ method: 'output', terminalId });
    if (this.misbehave.outputError) throw new Error(this.misbehave.outputError);
    const t = this.get(terminalId);
    return { output: t.output.toString('utf8'), truncated: t.truncated, exitStatus: t.exit ?? null };
  }

  async kill(terminalId: string): Promise<unknown> {
    this.calls.push({ method: 'kill', terminalId });
    killGroup(this.get(terminalId));
    if (this.misbehave.silentAfterExit) await new Promise(() => {});
    return {};
  }

  async release(terminalId: string): Promise<unknown> {
    this.calls.push({ method: 'release', terminalId });
    const t = this.get(terminalId);
    killGroup(t);
    this.terminals.delete(terminalId);
    if (this.misbehave.silentAfterExit) await new Promise(() => {});
    return {};
  }

  /** Terminals created and not released. */
  open(): string[] {
    return [...this.terminals.keys()];
  }

  /** After a test: nothing it started keeps running. */
  killAll(): void {
    for (const pid of this.pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
  }

  private get(id: string): Terminal {
    const t = this.terminals.get(id);
    if (!t) throw new Error(`unknown terminal ${id}`);
    return t;
  }
}

function killGroup(t: Terminal): void {
  if (t.exit || !t.child.pid) return;
  try {
    process.kill(-t.child.pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}

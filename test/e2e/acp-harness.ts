/**
 * `patchbay acp` driven by the ACP SDK's own client (`client()` over the child's real stdio), as
 * Zed or CodeCompanion drive an agent. Records every `session/update`; answers permission, file
 * and terminal requests with handlers a test sets.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { afterEach } from 'vitest';
import {
  client,
  methods,
  ndJsonStream,
  type ClientCapabilities,
  type ClientConnection,
  type ClientContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type WriteTextFileRequest,
} from '@agentclientprotocol/sdk';
import { BIN, cliEnv } from './harness.js';
import { ProcessTerminalClient } from '../support/process-terminal-client.js';
import { AcpSchemaCheck } from './acp-schema.js';

export interface AcpStart {
  home: string;
  /** PATCHBAY_CONFIG (a free gateway port is added). */
  config?: Record<string, unknown>;
  /** Laid over the harness's environment; a key given as undefined is left unset. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** More arguments after `acp` (`--log-level`). */
  args?: string[];
}

export class AcpProc {
  readonly child: ChildProcessWithoutNullStreams;
  readonly conn: ClientConnection;
  readonly notifications: SessionNotification[] = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  readonly reads: ReadTextFileRequest[] = [];
  readonly writes: WriteTextFileRequest[] = [];
  stderr = '';
  exitCode: number | null | undefined;
  readonly exited: Promise<number | null>;
  /** How a permission request is answered (default: the first option, "allow"). */
  onPermission: (r: RequestPermissionRequest) => RequestPermissionResponse | Promise<RequestPermissionResponse> = (r) => ({ outcome: { outcome: 'selected', optionId: r.options[0]!.optionId } });
  /** `fs/read_text_file`, when the client offers it (caps). */
  onRead?: (r: ReadTextFileRequest) => ReadTextFileResponse | Promise<ReadTextFileResponse>;
  onWrite?: (r: WriteTextFileRequest) => void | Promise<void>;
  /** `elicitation/create`, when the client offers it (caps). */
  onElicit?: (r: CreateElicitationRequest) => CreateElicitationResponse | Promise<CreateElicitationResponse>;
  readonly elicitations: CreateElicitationRequest[] = [];
  /** The client's terminals (`terminal/*`): real processes, every call recorded. */
  readonly terminals = new ProcessTerminalClient();
  /** Every message both ways checked against ACP's schema (./acp-schema.ts); useAcpProcs fails a test with violations. */
  readonly schema = new AcpSchemaCheck();
  private waiters: Array<() => void> = [];

  constructor(opts: AcpStart) {
    this.child = spawn(process.execPath, [BIN, 'acp', ...(opts.args ?? [])], {
      cwd: opts.cwd ?? opts.home,
      env: cliEnv(opts.home, { PATCHBAY_CONFIG: JSON.stringify({ gateway: { port: 0 }, ...opts.config }), ...opts.env }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    // A second reader of stdout: the SDK's stream gets the same chunks.
    this.child.stdout.on('data', (d: Buffer) => this.schema.feed('toClient', d));
    // A write racing the agent's exit fails with EPIPE on our end of stdin: the exit code tells the test.
    this.child.stdin.on('error', () => undefined);
    this.exited = new Promise((r) => this.child.on('exit', (code) => ((this.exitCode = code), r(code))));
    const app = client({ name: 'patchbay-test' })
      .onNotification(methods.client.session.update, ({ params }) => {
        this.notifications.push(params);
        for (const w of this.waiters.splice(0)) w();
      })
      .onRequest(methods.client.session.requestPermission, ({ params }) => {
        this.permissionRequests.push(params);
        for (const w of this.waiters.splice(0)) w();
        return this.onPermission(params);
      })
      .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
        this.reads.push(params);
        if (!this.onRead) throw new Error('no fs in this test');
        return this.onRead(params);
      })
      .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
        this.writes.push(params);
        if (!this.onWrite) throw new Error('no fs in this test');
        await this.onWrite(params);
        return {};
      })
      .onRequest(methods.client.elicitation.create, async ({ params }) => {
        this.elicitations.push(params);
        if (!this.onElicit) throw new Error('no elicitation in this test');
        return this.onElicit(params);
      })
      .onRequest(methods.client.terminal.create, async ({ params }) => ({ terminalId: (await this.terminals.createTerminal(params)).id }))
      .onRequest(methods.client.terminal.output, ({ params }) => this.terminals.output(params.terminalId))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => this.terminals.waitForExit(params.terminalId))
      .onRequest(methods.client.terminal.kill, async ({ params }) => (await this.terminals.kill(params.terminalId), {}))
      .onRequest(methods.client.terminal.release, async ({ params }) => (await this.terminals.release(params.terminalId), {}));
    // What the client writes passes the schema check on its way to stdin.
    const stdin = (Writable.toWeb(this.child.stdin) as WritableStream<Uint8Array>).getWriter();
    const toAgent = new WritableStream<Uint8Array>({
      write: (chunk) => {
        this.schema.feed('toAgent', chunk);
        return stdin.write(chunk);
      },
      close: () => stdin.close(),
      abort: (reason) => stdin.abort(reason),
    });
    this.conn = app.connect(ndJsonStream(toAgent, Readable.toWeb(this.child.stdout) as ReadableStream<Uint8Array>));
  }

  get agent(): ClientContext {
    return this.conn.agent;
  }

  initialize(caps: ClientCapabilities = {}) {
    return this.agent.request(methods.agent.initialize, { protocolVersion: 1, clientCapabilities: caps, clientInfo: { name: 'patchbay-test', version: '0' } });
  }

  async newSession(cwd: string): Promise<string> {
    const r = await this.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
    return r.sessionId;
  }

  prompt(sessionId: string, text: string) {
    return this.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
  }

  /** The updates of a session, in order. */
  updates(sessionId: string): SessionUpdate[] {
    return this.notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  /** The text of a session's agent message chunks. */
  text(sessionId: string, kind: 'agent_message_chunk' | 'agent_thought_chunk' | 'user_message_chunk' = 'agent_message_chunk'): string {
    return this.updates(sessionId)
      .flatMap((u) => (u.sessionUpdate === kind && u.content.type === 'text' ? [u.content.text] : []))
      .join('');
  }

  /** Resolves once `pred` holds (checked after each notification or permission request). */
  async until(pred: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr:\n${this.stderr.slice(-3000)}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }

  /** Closes stdin (the client goes away) and waits for the exit; SIGKILL after `ms`. */
  async stop(ms = 3000): Promise<number | null> {
    this.terminals.killAll();
    if (this.exitCode !== undefined) return this.exitCode;
    this.child.stdin.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), ms);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}

/**
 * Every AcpProc handed to the returned function is stopped after each test; then the test fails
 * if any message it exchanged broke ACP's schema (AcpProc.schema; `schema.skip` for bad input
 * sent on purpose).
 */
export function useAcpProcs(): (p: AcpProc) => AcpProc {
  let procs: AcpProc[] = [];
  afterEach(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    const report = procs.map((p) => p.schema.report()).filter(Boolean);
    procs = [];
    if (report.length) throw new Error(`ACP messages that break ACP's schema (schema/v1/schema.json):\n${report.join('\n')}`);
  });
  return (p) => {
    procs.push(p);
    return p;
  };
}

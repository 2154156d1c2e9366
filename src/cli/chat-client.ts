/**
 * `patchbay chat`'s connection to its own `patchbay server` child: spawn it, speak ECA over its
 * stdio, keep its stderr in a bounded log buffer (streamed live with --verbose), and shut it
 * down cleanly (`shutdown`, `exit`; after 2 s stdin closed and SIGTERM; SIGKILL a second later).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { basename } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';
import type { z } from 'zod';
import type { AskQuestionParams, AskQuestionResult } from '../protocol/eca/ask.js';
import type { ConfigUpdated, ShowMessage } from '../protocol/eca/lifecycle.js';
import { ECA, type ClientNotification, type ClientRequest, type EcaNotificationType } from '../protocol/eca/methods.js';
import { failPending, request, RequestError } from '../rpc/request.js';

/**
 * The `bin/patchbay` to start the server with: beside our module (`dist/cli/chat-client.js` or
 * `dist/bundle/<chunk>` → `../../bin/patchbay`), else the script this process runs as. (In a
 * CommonJS bundle `import.meta.url` is empty, hence the fallback.)
 */
export function patchbayBin(): string {
  const candidates: string[] = [];
  try {
    candidates.push(fileURLToPath(new URL('../../bin/patchbay', import.meta.url)));
  } catch {
    /* no import.meta.url */
  }
  if (process.argv[1]) candidates.push(process.argv[1]);
  return candidates.find((c) => existsSync(c)) ?? candidates[0] ?? 'patchbay';
}

const LOG_LIMIT = 256 * 1024;
/** How long a SIGTERMed server gets to stop its jobs before SIGKILL. */
const KILL_WAIT_MS = 1_000;

export interface ServerOptions {
  /** Extra args after `server` (`--config-file`, `--log-level`). */
  args: string[];
  cwd: string;
  verbose: boolean;
  env?: NodeJS.ProcessEnv;
  /** Where `--verbose` streams the server's stderr. */
  logSink?: (chunk: string) => void;
  onShowMessage?: (m: ShowMessage) => void;
  /**
   * Answers `chat/askQuestion` (declared in `initialize` only when set, so the server offers the
   * model `ask_user` and MCP servers elicitation only when someone is there to answer).
   */
  askQuestion?: (q: AskQuestionParams, signal: AbortSignal) => Promise<AskQuestionResult>;
}

export type ChatConfig = NonNullable<ConfigUpdated['chat']>;

export class ServerGone extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
  ) {
    super(`patchbay server exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`})`);
  }
}

export class ServerProcess {
  readonly conn: MessageConnection;
  private readonly child: ChildProcess;
  private logBuf = '';
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Settles when the child exits, for any reason. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private shuttingDown = false;
  /** The chat config from the latest `config/updated`, merged field by field. */
  config: ChatConfig = {};
  private configSeen!: () => void;
  private readonly configReady = new Promise<void>((r) => (this.configSeen = r));
  private configWaiters: Array<() => void> = [];

  constructor(private readonly opts: ServerOptions) {
    this.child = spawn(process.execPath, [patchbayBin(), 'server', ...opts.args], {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group: Ctrl-C in the terminal is ours to handle (chat/promptStop), not a
      // signal that kills the server. It still exits when we do (stdin closes, parent watch).
      detached: true,
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
        // A server that exits with its stdout still open (a grandchild holds it) fails what waits.
        failPending(this.conn, new ServerGone(code, signal));
      });
      this.child.once('error', (e) => {
        this.appendLog(`failed to start patchbay server: ${e.message}\n`);
        this.exitInfo ??= { code: null, signal: null };
        resolve(this.exitInfo);
      });
    });
    this.child.stdin!.on('error', () => {}); // EPIPE when the server is gone; `exited` reports it.
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => {
      this.appendLog(chunk);
      if (opts.verbose) (opts.logSink ?? ((c) => process.stderr.write(c)))(chunk);
    });
    this.conn = createMessageConnection(new StreamMessageReader(this.child.stdout!), new StreamMessageWriter(this.child.stdin!));
    this.on(ECA.configUpdated, (p) => {
      for (const [k, v] of Object.entries(p.chat ?? {})) if (v !== undefined) (this.config as Record<string, unknown>)[k] = v;
      this.configSeen();
      for (const w of this.configWaiters.splice(0)) w();
    });
    this.on(ECA.showMessage, (p) => opts.onShowMessage?.(p));
    const ask = opts.askQuestion;
    if (ask) {
      this.conn.onRequest(ECA.chatAskQuestion.method, async (raw: unknown, token) => {
        const q = ECA.chatAskQuestion.params.safeParse(raw);
        if (!q.success) return { answer: null, cancelled: true };
        // The server withdraws a question ($/cancelRequest) when the turn is stopped.
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort());
        try {
          return await ask(q.data, abort.signal);
        } finally {
          sub.dispose();
        }
      });
    }
    // Everything else we do not use (tool/serverUpdated, chat/opened, chat/statusChanged, …).
    this.conn.onNotification(() => {});
    this.conn.onError(() => {});
    this.conn.onClose(() => {});
  }

  /** Resolves at the next `config/updated` (already merged into `config`), or after `ms`. */
  nextConfig(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.configWaiters.push(() => (clearTimeout(timer), resolve()));
    });
  }

  /** Starts listening; call after every handler is registered. */
  listen(): void {
    this.conn.listen();
  }

  get logs(): string {
    return this.logBuf;
  }

  get alive(): boolean {
    return !this.exitInfo;
  }

  private appendLog(chunk: string): void {
    this.logBuf += chunk;
    if (this.logBuf.length > LOG_LIMIT) this.logBuf = this.logBuf.slice(-LOG_LIMIT);
  }

  /**
   * A request of the ECA table; fails when the server exits or `ms` pass (then the server is sent
   * $/cancelRequest), or when its answer does not fit the table's result schema.
   */
  async request<E extends ClientRequest>(entry: E, params: z.input<E['params']>, ms = 30_000): Promise<z.output<E['result']>> {
    const { method } = entry;
    if (this.exitInfo) throw new ServerGone(this.exitInfo.code, this.exitInfo.signal);
    let raw: unknown;
    try {
      raw = await request<unknown>(this.conn, method, params, { timeoutMs: ms, cancel: 'lsp' });
    } catch (e) {
      if (!(e instanceof RequestError) || e.reason !== 'closed') throw e;
      // Its stdout closes a moment before the exit is reported: say how the server ended.
      const info = await Promise.race([this.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 1000).unref())]);
      throw info ? new ServerGone(info.code, info.signal) : e;
    }
    const parsed = entry.result.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`unexpected ${method} answer from patchbay server: ${issue.path.join('.') || 'result'}: ${issue.message}`);
    }
    return parsed.data as z.output<E['result']>;
  }

  notify<E extends ClientNotification>(entry: E, params?: z.input<E['params']>): void {
    if (this.exitInfo) return;
    void this.conn.sendNotification(entry.method, params).catch(() => {});
  }

  /** A server → client notification of the ECA table; what does not fit its schema is dropped. */
  on<E extends EcaNotificationType<string, z.ZodType, 'serverToClient'>>(entry: E, handler: (params: z.output<E['params']>) => void): void {
    this.conn.onNotification(entry.method, (raw: unknown) => {
      const p = entry.params.safeParse(raw);
      if (p.success) handler(p.data as z.output<E['params']>);
    });
  }

  /** `initialize` + `initialized`, then waits (at most `configWaitMs`) for the first `config/updated`. */
  async initialize(configWaitMs = 30_000): Promise<ChatConfig> {
    await this.request(ECA.initialize, {
      processId: process.pid,
      clientInfo: { name: 'patchbay-chat' },
      capabilities: { codeAssistant: { chat: true, ...(this.opts.askQuestion ? { chatCapabilities: { askQuestion: true } } : {}) } },
      workspaceFolders: [{ uri: pathToFileURL(this.opts.cwd).href, name: basename(this.opts.cwd) || this.opts.cwd }],
    });
    this.notify(ECA.initialized, {});
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.configReady, this.exited.then((e) => Promise.reject(new ServerGone(e.code, e.signal))), new Promise<void>((r) => (timer = setTimeout(r, configWaitMs)))]).finally(() =>
      clearTimeout(timer),
    );
    return this.config;
  }

  /** `shutdown` then `exit`; kills the child if it has not exited 2 s later. */
  async shutdown(): Promise<void> {
    if (this.shuttingDown) return void (await this.exited);
    this.shuttingDown = true;
    if (!this.exitInfo) {
      try {
        await this.request(ECA.shutdown, null, 2_000);
      } catch {
        /* exiting anyway */
      }
      this.notify(ECA.exit);
      let timer: NodeJS.Timeout | undefined;
      const killed = await Promise.race([this.exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), 2_000)))]);
      clearTimeout(timer);
      if (killed) await this.kill();
    }
    this.conn.dispose();
    this.child.stdin?.destroy();
  }

  /**
   * Quit now (second Ctrl-C, or a shutdown that hangs): stdin closed and SIGTERM, which the
   * server answers by stopping its jobs and peers; SIGKILL only if it is still there a second later.
   */
  async kill(): Promise<void> {
    if (this.exitInfo) return;
    this.child.stdin?.end();
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([this.exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), KILL_WAIT_MS)))]);
    clearTimeout(timer);
    if (late) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}

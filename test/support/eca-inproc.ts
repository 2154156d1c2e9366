/**
 * The fast tier: the real ECA server (src/server/eca/server.ts) in this process, over an in-memory
 * stream pair, with a vscode-jsonrpc client on the other end. No process is spawned and nothing is
 * bundled, so a protocol test takes milliseconds; the binary-level e2e suite stays the safety net.
 */
import { afterEach } from 'vitest';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node.js';
import { EcaServer } from '../../src/server/eca/server.js';
import { initializeParams } from './framed.js';
import { logToStderr } from '../../src/util/log.js';

export interface Notification {
  method: string;
  params: any;
}

export class InProcEca {
  readonly client: MessageConnection;
  readonly server: EcaServer;
  readonly notifications: Notification[] = [];
  /** Set once the server asked to end the process (exit code). */
  exitCode: number | undefined;
  private readonly waiters: Array<{ pred: (n: Notification) => boolean; resolve: (n: Notification) => void }> = [];
  private readonly exited: Promise<number>;

  constructor(opts: { home: string; config?: Record<string, unknown>; env?: Record<string, string> }) {
    // The server's log goes to its file under the home; this process's stderr stays the test runner's.
    logToStderr(false);
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    let exited!: (code: number) => void;
    this.exited = new Promise((r) => (exited = r));
    this.server = new EcaServer({
      input: toServer,
      output: toClient,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: opts.home,
        XDG_CONFIG_HOME: join(opts.home, '.config'),
        PATCHBAY_HOME: join(opts.home, '.patchbay'),
        PATCHBAY_LOCAL_MODEL: 'off',
        // No listeners unless a test asks: the fast tier is about protocol and turns.
        PATCHBAY_CONFIG: JSON.stringify({ gateway: { enabled: false }, openctx: { host: { enabled: false } }, ...opts.config }),
        ...opts.env,
      },
      onExit: (code) => {
        this.exitCode = code;
        exited(code);
      },
    });
    this.client = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
    this.client.onNotification((method: string, params: unknown) => {
      const n = { method, params };
      this.notifications.push(n);
      for (const w of [...this.waiters]) if (w.pred(n)) (this.waiters.splice(this.waiters.indexOf(w), 1), w.resolve(n));
    });
    this.client.listen();
  }

  request<R = any>(method: string, params?: unknown): Promise<R> {
    return this.client.sendRequest(method, params) as Promise<R>;
  }

  notify(method: string, params?: unknown): void {
    void this.client.sendNotification(method, params);
  }

  async initialize(root: string, extra: Record<string, unknown> = {}): Promise<any> {
    const result = await this.request('initialize', { ...initializeParams(root, 'in-process'), ...extra });
    this.notify('initialized', {});
    return result;
  }

  /** The first notification (already received or future) matching `pred`. */
  waitFor(pred: (n: Notification) => boolean, what = 'notification', timeoutMs = 10_000): Promise<Notification> {
    const seen = this.notifications.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      this.waiters.push({ pred, resolve: (n) => (clearTimeout(t), resolve(n)) });
    });
  }

  contents(chatId: string): Array<{ role: string; content: any }> {
    return this.notifications.filter((n) => n.method === 'chat/contentReceived' && n.params.chatId === chatId).map((n) => n.params);
  }

  /** The end of a chat's Nth turn: its `progress finished` content. */
  turnDone(chatId: string, nth = 1): Promise<Notification> {
    let count = 0;
    return this.waitFor(
      (n) => n.method === 'chat/contentReceived' && n.params.chatId === chatId && n.params.content.type === 'progress' && n.params.content.state === 'finished' && ++count === nth,
      `turn ${nth} of ${chatId}`,
    );
  }

  /** shutdown + exit, as an editor does; resolves with the exit code. */
  async stop(): Promise<number> {
    if (this.exitCode === undefined) {
      await Promise.race([this.request('shutdown').catch(() => undefined), new Promise((r) => setTimeout(r, 2_000))]);
      this.notify('exit');
    }
    const code = await this.exited;
    this.client.dispose();
    return code;
  }
}

/**
 * Servers a test file starts, each stopped after its test: call `track(new InProcEca(...))`
 * (the one set-up every fast-tier file shares).
 */
export function useInProcEca(): (s: InProcEca) => InProcEca {
  let open: InProcEca[] = [];
  afterEach(async () => {
    await Promise.all(open.map((s) => s.stop()));
    open = [];
  });
  return (s) => {
    open.push(s);
    return s;
  };
}

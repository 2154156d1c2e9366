/**
 * The remote API's HTTP listener (ECA src/eca/remote/server.clj), on 127.0.0.1 only: `remote.port`
 * when set (tried alone; 0 is any free port), else 7777 or the next free of 20, as ECA. Its URL and
 * token go to a run file, `<PATCHBAY_HOME>/remote/run/<pid>.json` (directory 0700, file 0600),
 * removed when it stops; the log names the URL and the file, never the token.
 */
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { errorMessage, logger } from '../../../util/log.js';
import { readRunFileAs, scanRunFiles, writePrivateFile } from '../../../util/run-files.js';
import { generateToken } from './auth.js';
import { handleRequest, type RemoteContext } from './routes.js';
import type { SseStream } from './sse.js';
import type { FrontEndPort } from '../../../runtime/front-end-port.js';
import type { Attachment } from '../../../core/chat/port.js';
import { ChatStates } from './chat-state.js';

const log = logger('remote');

/** ECA's base port and how many it tries from there. */
export const DEFAULT_REMOTE_PORT = 7777;
const PORT_ATTEMPTS = 20;

export const REMOTE_RUN_FILE_VERSION = 1;

export const remoteRunFileSchema = z.object({
  version: z.literal(REMOTE_RUN_FILE_VERSION),
  pid: z.number().int().positive(),
  startedAt: z.number(),
  /** `http://127.0.0.1:<port>` (the API is under `/api/v1`). */
  url: z.string().min(1),
  port: z.number().int().positive(),
  /** The bearer token (`remote.password`, or the generated one). */
  token: z.string().min(1),
});
export type RemoteRunFile = z.infer<typeof remoteRunFileSchema>;

export function remoteRunDir(home: string): string {
  return join(home, 'remote', 'run');
}

/**
 * The run files of remote APIs whose process is gone (a patchbay that was killed): removed when
 * another starts, as the gateway does. A live process's file, or another user's, is left alone.
 */
export function removeStaleRunFiles(home: string): string[] {
  const removed: string[] = [];
  for (const file of scanRunFiles(remoteRunDir(home), remoteRunFileSchema).stale) {
    try {
      rmSync(file, { force: true });
      removed.push(file);
    } catch {
      // not ours to remove
    }
  }
  return removed;
}

/** A run file's content, when it is this user's regular file (readOwnFile) and parses as one. */
export function readRemoteRunFile(file: string): RemoteRunFile | undefined {
  return readRunFileAs(file, remoteRunFileSchema);
}

export interface RemoteConfig {
  enabled: boolean;
  port?: number;
  password?: string;
}

export interface RemoteServerOptions {
  config: RemoteConfig;
  /** PATCHBAY_HOME: the run file goes under it. */
  home: string;
  /** The host's port (the workspace's until there is a Host). */
  port: FrontEndPort;
  /** The chat's title when it exists (live or stored), undefined when it does not. */
  chat: (chatId: string) => { title?: string } | undefined;
  session: (statuses: ChatStates) => Record<string, unknown>;
}

/** Servers made in this process: a second one (tests) gets its own run file. */
let instances = 0;

export class RemoteServer {
  private closed = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
    readonly token: string,
    readonly runFile: string,
    private readonly streams: Set<SseStream>,
    private readonly tracking: Attachment,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Listens, writes the run file, logs the URL. Rejects when no port could be bound. */
  static async start(opts: RemoteServerOptions): Promise<RemoteServer> {
    const token = opts.config.password ?? generateToken();
    let listening = 0;
    const streams = new Set<SseStream>();
    const statuses = new ChatStates();
    const ctx: RemoteContext = { token, listenPort: () => listening, port: opts.port, chat: opts.chat, statuses, session: () => opts.session(statuses), streams };
    const server = createServer((req, res) => handleRequest(ctx, req, res));
    // A stream stays open for as long as the client reads: no request timeout for it.
    server.requestTimeout = 0;
    server.headersTimeout = 10_000;
    server.on('clientError', (_e, socket) => socket.destroy());
    const candidates = opts.config.port !== undefined ? [opts.config.port] : Array.from({ length: PORT_ATTEMPTS }, (_, i) => DEFAULT_REMOTE_PORT + i);
    let lastError: unknown;
    for (const p of candidates) {
      try {
        listening = await listen(server, p);
        break;
      } catch (e) {
        lastError = e;
        if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') break;
      }
    }
    if (!listening) {
      const tried = candidates.length > 1 ? `ports ${candidates[0]}-${candidates[candidates.length - 1]}` : `port ${candidates[0]}`;
      throw new Error(`remote API: could not listen on 127.0.0.1 ${tried}: ${errorMessage(lastError)}`);
    }
    removeStaleRunFiles(opts.home);
    const n = ++instances;
    const runFile = join(remoteRunDir(opts.home), n === 1 ? `${process.pid}.json` : `${process.pid}-${n}.json`);
    const self = new RemoteServer(server, listening, token, runFile, streams, opts.port.attach(statuses.frontEnd));
    const run: RemoteRunFile = { version: REMOTE_RUN_FILE_VERSION, pid: process.pid, startedAt: Date.now(), url: self.url, port: listening, token };
    try {
      writePrivateFile(runFile, `${JSON.stringify(run, null, 2)}\n`);
    } catch (e) {
      server.close();
      throw new Error(`remote API: could not write ${runFile}: ${errorMessage(e)}`);
    }
    log.info(`remote API listening on ${self.url}/api/v1 (token in ${runFile})`);
    return self;
  }

  /** Clients told (`session:disconnecting`), streams ended, the listener closed, the run file removed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.tracking.detach();
    for (const s of [...this.streams]) {
      s.send('session:disconnecting', { reason: 'shutdown' });
      s.close();
    }
    rmSync(this.runFile, { force: true });
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /** At process exit, when there is no time for `close`: the run file at least. */
  removeRunFile(): void {
    rmSync(this.runFile, { force: true });
  }
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (e: Error): void => {
      server.off('listening', onListening);
      reject(e);
    };
    const onListening = (): void => {
      server.off('error', onError);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, '127.0.0.1');
  });
}

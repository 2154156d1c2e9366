/**
 * Opening and closing one MCP connection: stdio child process, or remote Streamable HTTP with
 * the SSE fallback the spec describes for older servers
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#backwards-compatibility).
 */
import { isAlive } from '../../util/pid.js';
import { descendants, killAll } from '../../util/process-tree.js';
import type { Readable } from 'node:stream';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { DEFAULT_INHERITED_ENV_VARS, getDefaultEnvironment, StdioClientTransport, type StdioServerParameters } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { cappedLines } from '../../util/capped-lines.js';
import { errorMessage, type Logger } from '../../util/log.js';
import type { RemoteServerConfig, ServerConfig, StdioServerConfig } from './config.js';
import { FastReadBuffer } from './fast-parse.js';
import type { McpOAuthClient } from './oauth-provider.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { guardedFetch } from './oauth-fetch.js';
import { finishSignIn, isAuthError, isRefusal, isTransportMismatch, MAX_SIGN_INS, oauthChallenge, SigningInTransport } from './oauth-transport.js';
import type { StderrTail } from './stderr-tail.js';
import type { Argv } from '../../util/sandbox.js';
import { resolve } from 'node:path';

/** A stderr line longer than this is cut: a child writing megabytes without a newline must not grow patchbay's memory. */
const MAX_STDERR_LINE = 8192;

export interface Connection {
  client: Client;
  transport: 'stdio' | 'streamable-http' | 'sse';
  /** The child's pid (stdio only). */
  pid?: number;
  /** Closes the client; for stdio, the child is gone (or SIGKILLed) when this resolves. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** A fresh client with every handler installed; called once per attempt. */
  makeClient: () => Client;
  env: NodeJS.ProcessEnv;
  cwd?: string;
  timeoutMs: number;
  /** Abandons the attempt (stop() during start). */
  signal: AbortSignal;
  log: Logger;
  /** Each line the child writes to stderr. */
  onStderr: (line: string) => void;
  /** Where a stdio child's last stderr lines are kept; a failed start reports them. */
  stderrTail?: StderrTail;
  /** A remote server's OAuth client (remote servers without a configured Authorization header). */
  oauth?: McpOAuthClient;
  /** Runs a stdio server in the OS sandbox: `command args` becomes `bwrap … -- command args` (an entry of a workspace's own config). */
  wrap?: (argv: Argv, cwd: string) => Argv;
}

export async function connect(config: ServerConfig, opts: ConnectOptions): Promise<Connection> {
  return config.kind === 'stdio' ? connectStdio(config, opts) : connectRemote(config, opts);
}

/**
 * What a stdio server inherits beyond the SDK's safe default set (HOME, LOGNAME, PATH, SHELL,
 * TERM, USER): what a server needs to reach the network the user is on (proxies, extra CA
 * certificates: an `npx` server behind a TLS-inspecting proxy cannot even be fetched without
 * them), to speak the user's language, and to find a temp directory. Nothing that authenticates.
 */
export const INHERITED_ENV_VARS: readonly string[] = [
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'ALL_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
  'all_proxy',
  'NODE_EXTRA_CA_CERTS',
  'NODE_USE_SYSTEM_CA',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'CURL_CA_BUNDLE',
  'LANG',
  'LANGUAGE',
  'TMPDIR',
  'TEMP',
  'TMP',
  // The gateway's address, not its token: a server that is also a tool provider finds the token in
  // this gateway's run file (PATCHBAY_HOME/gateway/run, the provider SDK's discovery), while a
  // server whose tool prints its environment (server-everything's get-env) cannot hand the token
  // to the model. Issue 29: "patchbay's tokens are never passed".
  'PATCHBAY_GATEWAY_URL',
  'PATCHBAY_HOME',
];

/** Inherited by pattern: the locale categories (LC_ALL, LC_CTYPE, LC_MESSAGES, …). */
const INHERITED_ENV_PATTERN = /^LC_[A-Z_]+$/;

/**
 * Never inherited by pattern, whatever it looks like: nothing named like a key, token or password
 * (provider keys such as OPENAI_API_KEY are never in the lists above). The entry's `env` may
 * still name one on purpose.
 */
const SECRET_ENV_NAME = /KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH/i;

/**
 * The child gets the SDK's safe default set, {@link INHERITED_ENV_VARS} and the `LC_*` locale
 * variables, taken from patchbay's environment, then the entry's own `env` (which wins). The SDK
 * merges in `getDefaultEnvironment()` (from `process.env`) itself; we pass the set explicitly so
 * `opts.env` wins.
 */
export function childEnv(env: NodeJS.ProcessEnv, extra: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = getDefaultEnvironment();
  const take = (key: string): void => {
    const v = env[key];
    // A value starting with `()` is an exported shell function (shellshock): never passed on.
    if (v !== undefined && !v.startsWith('()')) out[key] = v;
  };
  for (const key of [...DEFAULT_INHERITED_ENV_VARS, ...INHERITED_ENV_VARS]) take(key);
  for (const key of Object.keys(env)) if (INHERITED_ENV_PATTERN.test(key) && !SECRET_ENV_NAME.test(key)) take(key);
  return { ...out, ...extra };
}

/**
 * The SDK's stdio transport, remembering the pid (the SDK forgets it as soon as close() starts)
 * and reading with FastReadBuffer (fast-parse.ts).
 */
export class TrackedStdioTransport extends StdioClientTransport {
  spawnedPid: number | undefined;

  constructor(params: StdioServerParameters) {
    super(params);
    // The SDK keeps its buffer in a private field; should a later SDK rename it, its own stays.
    const self = this as unknown as { _readBuffer?: unknown };
    if (self._readBuffer instanceof ReadBuffer) self._readBuffer = new FastReadBuffer(params.maxBufferSize);
  }

  override async start(): Promise<void> {
    await super.start();
    this.spawnedPid = this.pid ?? undefined;
  }
}

async function connectStdio(config: StdioServerConfig, opts: ConnectOptions): Promise<Connection> {
  const cwd = config.cwd ?? opts.cwd;
  // bwrap is the child: closing stdin ends the server, and a signal to bwrap ends its whole pid namespace.
  const argv = opts.wrap ? opts.wrap({ command: config.command, args: config.args }, resolve(cwd ?? '.')) : { command: config.command, args: config.args };
  const transport = new TrackedStdioTransport({
    command: argv.command,
    args: argv.args,
    env: childEnv(opts.env, config.env),
    cwd,
    stderr: 'pipe',
  });
  // The PassThrough exists before start(), so early output is not lost.
  let stderrDone: Promise<void> = Promise.resolve();
  if (transport.stderr) {
    stderrDone = cappedLines(transport.stderr as Readable, MAX_STDERR_LINE, (line) => {
      opts.stderrTail?.push(line);
      opts.onStderr(line);
    });
  }
  const client = opts.makeClient();
  try {
    await connectOrAbort(client, transport, opts);
  } catch (e) {
    // A failed initialize already started the SDK's close in the background; finish it now.
    await client.close().catch(() => {});
    if (transport.spawnedPid) await ensureDead(transport.spawnedPid, opts.log);
    if (opts.signal.aborted || !opts.stderrTail) throw e;
    // "Connection closed" says nothing; why the child quit is in its stderr, which may still be
    // in the pipe when the exit is seen: read it to its end (bounded), then report its tail.
    await Promise.race([stderrDone, delay(1000)]);
    const tail = opts.stderrTail.text();
    throw tail ? new Error(`${errorMessage(e)}; stderr: ${tail}`) : e;
  }
  const pid = transport.spawnedPid;
  return {
    client,
    transport: 'stdio',
    pid,
    async close() {
      // Launchers (npx, uvx, sh) leave their children behind when they die: note them first.
      const family = pid ? descendants(pid) : [];
      // The SDK ends stdin, waits 2 s, sends SIGTERM, waits 2 s, sends SIGKILL (spec "Shutdown", stdio).
      await client.close().catch((e: unknown) => opts.log.debug(`close: ${errorMessage(e)}`));
      if (pid) await ensureDead(pid, opts.log);
      await killAll(family);
    },
  };
}

async function connectRemote(config: RemoteServerConfig, opts: ConnectOptions): Promise<Connection> {
  const url = new URL(config.url);
  const requestInit: RequestInit = { headers: config.headers };
  const headers = Object.keys(config.headers);
  await opts.oauth?.load();
  let streamableError: string | undefined;
  if (config.type !== 'sse') {
    const transport = opts.oauth ? new SigningInTransport(url, { requestInit, headers }, opts.oauth) : new StreamableHTTPClientTransport(url, { requestInit, fetch: guardedFetch({ url, headers }) });
    const client = opts.makeClient();
    try {
      await connectOrAbort(client, transport, opts);
      return {
        client,
        transport: 'streamable-http',
        async close() {
          // Polite session end (HTTP DELETE); a server that does not support it answers 405.
          await Promise.race([transport.terminateSession().catch(() => {}), delay(1000)]);
          await client.close().catch(() => {});
        },
      };
    } catch (e) {
      await client.close().catch(() => {});
      if (opts.signal.aborted || isAuthError(e) || isRefusal(e) || (transport instanceof SigningInTransport && transport.challenged && !isTransportMismatch(e))) throw e;
      streamableError = oneLine(errorMessage(e));
      opts.log.info(`Streamable HTTP failed (${streamableError}); trying SSE`);
    }
  }
  try {
    return await connectSse(url, requestInit, headers, opts);
  } catch (e) {
    if (isAuthError(e) || opts.signal.aborted) throw e;
    throw new Error(streamableError ? `Streamable HTTP: ${streamableError}; SSE: ${oneLine(errorMessage(e))}` : errorMessage(e));
  }
}

/**
 * The SSE transport, signing in as SigningInTransport does: the SDK's SSE transport meets the 401
 * in start(), sends the user to the authorization page and throws UnauthorizedError; once the
 * code is exchanged (`finishAuth`), a new transport connects with the token.
 */
async function connectSse(url: URL, requestInit: RequestInit, headers: string[], opts: ConnectOptions): Promise<Connection> {
  for (let round = 0; ; round++) {
    const oauth = opts.oauth;
    const fetchFn = guardedFetch({ url, headers, ...oauthChallenge(oauth) });
    const transport = new SSEClientTransport(url, { requestInit, fetch: fetchFn, ...(oauth ? { authProvider: oauth } : {}) });
    const client = opts.makeClient();
    try {
      await connectOrAbort(client, transport, opts);
      oauth?.settle?.();
      return { client, transport: 'sse', close: () => client.close().catch(() => {}) };
    } catch (e) {
      await client.close().catch(() => {});
      oauth?.settle?.();
      const signedIn = e instanceof UnauthorizedError && opts.oauth && round < MAX_SIGN_INS && !opts.signal.aborted && (await finishSignIn(opts.oauth, (code) => transport.finishAuth(code)));
      if (!signedIn) throw e;
    }
  }
}

/**
 * `initialize` must not be cancelled (spec "Cancellation"), so an abort closes the transport
 * instead of passing the signal to the request; the pending request then fails with "Connection closed".
 */
async function connectOrAbort(client: Client, transport: Transport, opts: ConnectOptions): Promise<void> {
  opts.signal.throwIfAborted();
  const onAbort = () => void client.close().catch(() => {});
  opts.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect(transport, { timeout: opts.timeoutMs });
  } finally {
    opts.signal.removeEventListener('abort', onAbort);
  }
}

/** Error texts from HTTP servers can be whole HTML pages; logs and `lastError` want one short line. */
export function oneLine(s: string, max = 300): string {
  const line = s.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}

/** The SDK sends SIGKILL without waiting for it; make sure no child outlives its connection. */
async function ensureDead(pid: number, log: Logger): Promise<void> {
  for (let i = 0; i < 20 && isAlive(pid); i++) await delay(25);
  if (!isAlive(pid)) return;
  log.warn(`child ${pid} still alive after close; sending SIGKILL`);
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  for (let i = 0; i < 40 && isAlive(pid); i++) await delay(25);
}

/**
 * The OpenCtx host: serves OpenCtx providers (built-in or user modules) over HTTP on loopback,
 * one endpoint per provider at `POST /providers/<name>`, with body `{method, params?, settings?}`
 * and answer `{result}` or `{error: {code, message}}` (specs/openctx-protocol-0.1.md).
 *
 * Who may call: only local processes holding the token. Every request must carry
 * `Authorization: Bearer <token>` (compared in constant time); requests with an `Origin` header
 * (browsers) or a non-loopback `Host` (DNS rebinding) are refused with 403 before anything else.
 *
 * HTTP status: 401/403/404/405/413/400 for transport-level refusals; protocol-level errors
 * (-32601 unknown method, -32602 bad params, -32603 internal) are sent with 200 so OpenCtx clients,
 * which discard the body of non-2xx answers, can show the message.
 */
import { isLoopbackHostHeader, secretsEqual } from '../../../util/loopback.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorMessage, logger, type Logger } from '../../../util/log.js';
import {
  ErrorCodes,
  OpenCtxError,
  requestMessageSchema,
  settingsSchema,
  describeZodError,
  openCtxMethods,
  paramsSchemas,
  type MetaResult,
  type OpenCtxMethod,
  type OpenCtxProviderImpl,
  type ResponseError,
} from './protocol.js';

export interface OpenCtxHostOptions {
  /** Only loopback addresses are allowed. */
  host: '127.0.0.1' | 'localhost' | '::1';
  /** 0 = any free port. */
  port: number;
  /** Shared secret clients send as `Authorization: Bearer <token>`. */
  token: string;
  providers: Record<string, OpenCtxProviderImpl>;
  log?: Logger;
  /** Request body cap in bytes; default 1 MB. */
  maxBodyBytes?: number;
  /** A provider call that takes longer answers -32603; default 30 s. */
  callTimeoutMs?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_CALL_TIMEOUT_MS = 30_000;
const providerNamePattern = /^[A-Za-z0-9._-]+$/;

/** `Host` is 127.0.0.1, localhost or [::1], with no port or the host's own port. */
export { isLoopbackHostHeader };

/** Constant-time check of `Authorization: Bearer <token>`. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = header ? /^Bearer[ ]+(\S+)\s*$/i.exec(header) : null;
  return secretsEqual(token, m ? m[1] : undefined);
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: ResponseError,
  ) {
    super(error.message);
  }
}

export class OpenCtxHost {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly log: Logger;
  private readonly providers: Map<string, OpenCtxProviderImpl>;
  private readonly maxBody: number;
  private readonly callTimeoutMs: number;
  private boundPort = 0;

  constructor(private readonly opts: OpenCtxHostOptions) {
    if (!['127.0.0.1', 'localhost', '::1'].includes(opts.host)) {
      throw new Error(`OpenCtx host must listen on loopback, not ${JSON.stringify(opts.host)}`);
    }
    if (typeof opts.token !== 'string' || opts.token.length < 16) {
      throw new Error('OpenCtx host token must be a string of at least 16 characters');
    }
    this.log = opts.log ?? logger('openctx-host');
    this.maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.callTimeoutMs = opts.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.providers = new Map();
    for (const [name, impl] of Object.entries(opts.providers)) {
      if (!providerNamePattern.test(name)) throw new Error(`invalid OpenCtx provider name ${JSON.stringify(name)}`);
      this.providers.set(name, impl);
    }
  }

  /** Base URL; provider `<name>` is at `${url}/providers/<name>`. */
  get url(): string {
    const h = this.opts.host === '::1' ? '[::1]' : this.opts.host;
    return `http://${h}:${this.boundPort}`;
  }

  providerUrl(name: string): string {
    return `${this.url}/providers/${encodeURIComponent(name)}`;
  }

  async start(): Promise<{ url: string }> {
    if (this.server) return { url: this.url };
    const server = createServer((req, res) => {
      this.handle(req, res).catch((e) => {
        this.log.error(`openctx host: unexpected failure: ${errorMessage(e)}`);
        if (!res.headersSent) send(res, 500, { error: { code: ErrorCodes.InternalError, message: 'internal error' } });
        else res.destroy();
      });
    });
    server.requestTimeout = this.callTimeoutMs + 10_000;
    server.headersTimeout = 10_000;
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (e) => this.log.error(`openctx host: ${errorMessage(e)}`));
    this.server = server;
    this.boundPort = (server.address() as AddressInfo).port;
    this.log.info(`openctx host listening on ${this.url} (${[...this.providers.keys()].join(', ') || 'no providers'})`);
    return { url: this.url };
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
    for (const [name, p] of this.providers) {
      try {
        await p.dispose?.();
      } catch (e) {
        this.log.warn(`openctx provider ${name}: dispose failed: ${errorMessage(e)}`);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      this.guard(req);
      const name = this.route(req);
      const provider = this.providers.get(name);
      if (!provider) {
        throw new HttpRefusal(404, { code: ErrorCodes.MethodNotFound, message: `unknown OpenCtx provider ${JSON.stringify(name)}` });
      }
      const body = await readBody(req, this.maxBody);
      const answer = await this.dispatch(name, provider, body);
      send(res, 200, answer);
    } catch (e) {
      if (e instanceof HttpRefusal) {
        if (e.status !== 404) this.log.debug(`openctx host: ${e.status} ${req.method} ${req.url}: ${e.message}`);
        send(res, e.status, { error: e.error }, e.status === 413);
        return;
      }
      throw e;
    }
  }

  /** Browsers, DNS-rebound pages and callers without the token are refused. */
  private guard(req: IncomingMessage): void {
    if (req.headers.origin !== undefined) {
      throw new HttpRefusal(403, { code: ErrorCodes.InvalidRequest, message: 'browser origins are not allowed' });
    }
    if (!isLoopbackHostHeader(req.headers.host, this.boundPort)) {
      throw new HttpRefusal(403, { code: ErrorCodes.InvalidRequest, message: 'Host must be a loopback address' });
    }
    if (!bearerMatches(req.headers.authorization, this.opts.token)) {
      throw new HttpRefusal(401, { code: ErrorCodes.InvalidRequest, message: 'missing or invalid bearer token' });
    }
  }

  private route(req: IncomingMessage): string {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const m = /^\/providers\/([^/]+)\/?$/.exec(path);
    if (!m) {
      throw new HttpRefusal(404, { code: ErrorCodes.InvalidRequest, message: `no such endpoint ${path}; use POST /providers/<name>` });
    }
    if (req.method !== 'POST') {
      throw new HttpRefusal(405, { code: ErrorCodes.InvalidRequest, message: `method ${req.method} not allowed; use POST` });
    }
    try {
      return decodeURIComponent(m[1]);
    } catch {
      return m[1];
    }
  }

  /** Runs one request message against one provider; never throws. */
  async dispatch(name: string, provider: OpenCtxProviderImpl, body: string): Promise<{ result: unknown } | { error: ResponseError }> {
    let raw: unknown;
    try {
      raw = JSON.parse(body);
    } catch (e) {
      return { error: { code: ErrorCodes.ParseError, message: `request body is not valid JSON: ${errorMessage(e)}` } };
    }
    const msg = requestMessageSchema.safeParse(raw);
    if (!msg.success) {
      return { error: { code: ErrorCodes.InvalidRequest, message: `invalid request message: ${describeZodError(msg.error)}` } };
    }
    const { method } = msg.data;
    if (!(openCtxMethods as string[]).includes(method)) {
      const supported = openCtxMethods.filter((m) => m === 'meta' || typeof provider[m] === 'function');
      return {
        error: {
          code: ErrorCodes.MethodNotFound,
          message: `unknown method ${JSON.stringify(method)} for OpenCtx provider ${JSON.stringify(name)} (supported: ${supported.join(', ')})`,
        },
      };
    }
    const m = method as OpenCtxMethod;
    const params = paramsSchemas[m].safeParse(msg.data.params ?? {});
    if (!params.success) {
      return { error: { code: ErrorCodes.InvalidParams, message: `invalid params for ${m}: ${describeZodError(params.error)}` } };
    }
    const settings = settingsSchema.safeParse(msg.data.settings ?? {});
    if (!settings.success) {
      return { error: { code: ErrorCodes.InvalidParams, message: `invalid settings: ${describeZodError(settings.error)}` } };
    }
    try {
      const result = await this.withTimeout(() => call(provider, m, params.data, settings.data));
      return { result: normalizeResult(name, m, result) };
    } catch (e) {
      if (e instanceof OpenCtxError) {
        return { error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } };
      }
      this.log.warn(`openctx provider ${name}.${m} failed: ${e instanceof Error && e.stack ? e.stack : errorMessage(e)}`);
      return { error: { code: ErrorCodes.InternalError, message: `provider ${JSON.stringify(name)} failed in ${m}: ${errorMessage(e)}` } };
    }
  }

  private withTimeout<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out after ${this.callTimeoutMs} ms`)), this.callTimeoutMs);
      timer.unref?.();
      fn().then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }
}

async function call(provider: OpenCtxProviderImpl, method: OpenCtxMethod, params: unknown, settings: Record<string, unknown>): Promise<unknown> {
  switch (method) {
    case 'meta':
      return provider.meta(params as never, settings);
    case 'mentions':
      return provider.mentions ? provider.mentions(params as never, settings) : [];
    case 'items':
      return provider.items ? provider.items(params as never, settings) : [];
    case 'annotations':
      return provider.annotations ? provider.annotations(params as never, settings) : [];
  }
}

/** Every result is truthy: lists default to `[]`, meta is an object that always has `name`. */
function normalizeResult(name: string, method: OpenCtxMethod, result: unknown): unknown {
  if (method === 'meta') {
    if (result !== undefined && result !== null && (typeof result !== 'object' || Array.isArray(result))) {
      throw new Error('meta must return an object');
    }
    const meta = { ...((result ?? {}) as Partial<MetaResult>) };
    if (typeof meta.name !== 'string' || meta.name === '') meta.name = name;
    return meta;
  }
  if (result === undefined || result === null) return [];
  if (!Array.isArray(result)) throw new Error(`${method} must return an array`);
  return result;
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    return Promise.reject(tooLarge(max));
  }
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (c: Buffer) => {
      if (done) return;
      size += c.length;
      if (size > max) {
        done = true;
        req.pause();
        reject(tooLarge(max));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (e) => {
      if (done) return;
      done = true;
      reject(e);
    });
  });
}

function tooLarge(max: number): HttpRefusal {
  return new HttpRefusal(413, { code: ErrorCodes.InvalidRequest, message: `request body exceeds ${max} bytes` });
}

function send(res: ServerResponse, status: number, body: unknown, close = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}

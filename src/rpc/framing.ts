/**
 * LSP base-protocol framing (specs/lsp-3.0.md "Base Protocol"): `Content-Length` headers,
 * an optional `Content-Type` whose charset must be utf-8, then a JSON-RPC 2.0 body.
 *
 * vscode-jsonrpc's own reader ignores the charset and only logs malformed bodies; this
 * reader instead reports every framing, parse and shape fault through `onProtocolError`
 * so the connection can answer −32700 / −32600 as JSON-RPC 2.0 requires, and keeps reading.
 */
import type { Readable } from 'node:stream';
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc';

export const ParseError = -32700;
export const InvalidRequest = -32600;

export interface ProtocolFault {
  code: typeof ParseError | typeof InvalidRequest;
  message: string;
  /** The request id when it could be recovered from the bad message, else null. */
  id: string | number | null;
}

const CRLF2 = Buffer.from('\r\n\r\n', 'ascii');
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export class FramedReader extends AbstractMessageReader {
  private buffer: Buffer = Buffer.alloc(0);
  private callback: DataCallback | undefined;

  constructor(
    private readonly input: Readable,
    private readonly onProtocolError: (fault: ProtocolFault) => void,
  ) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const onData = (chunk: Buffer) => this.onData(chunk);
    const onEnd = () => this.fireClose();
    const onError = (e: Error) => this.fireError(e);
    this.input.on('data', onData);
    this.input.on('end', onEnd);
    this.input.on('close', onEnd);
    this.input.on('error', onError);
    return {
      dispose: () => {
        this.input.off('data', onData);
        this.input.off('end', onEnd);
        this.input.off('close', onEnd);
        this.input.off('error', onError);
      },
    };
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf(CRLF2);
      if (headerEnd < 0) {
        if (this.buffer.length > 8192) this.resync('Header section too long or not terminated by \\r\\n\\r\\n');
        return;
      }
      const headers = parseHeaders(this.buffer.subarray(0, headerEnd).toString('ascii'));
      const bodyStart = headerEnd + 4;
      if (headers.length === undefined) {
        // No usable length: we cannot know where the body ends, so skip to the next header.
        this.buffer = this.buffer.subarray(bodyStart);
        this.resync(headers.error ?? 'Missing Content-Length header', false);
        continue;
      }
      const { length } = headers;
      if (this.buffer.length < bodyStart + length) return;
      const body = this.buffer.subarray(bodyStart, bodyStart + length);
      this.buffer = this.buffer.subarray(bodyStart + length);
      // A bad header line or charset with a known length: the body is skipped whole.
      const fault = headers.error ?? headers.charsetError;
      if (fault) {
        this.onProtocolError({ code: ParseError, message: fault, id: recoverId(body.toString('latin1')) });
        continue;
      }
      this.deliver(body.toString('utf8'));
    }
  }

  /** Drop bytes up to the next `Content-Length` header at a line start, so one bad frame does not poison the stream. */
  private resync(message: string, fromStart = true): void {
    const at = this.buffer.indexOf('Content-Length', fromStart ? 1 : 0, 'ascii');
    this.buffer = at >= 0 ? this.buffer.subarray(at) : Buffer.alloc(0);
    this.onProtocolError({ code: ParseError, message, id: null });
  }

  private deliver(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      this.onProtocolError({ code: ParseError, message: `Parse error: ${(e as Error).message}`, id: recoverId(text) });
      return;
    }
    const problem = checkMessage(value);
    if (problem) {
      const id = value && typeof value === 'object' && !Array.isArray(value) ? idOf((value as { id?: unknown }).id) : null;
      this.onProtocolError({ code: InvalidRequest, message: `Invalid request: ${problem}`, id });
      return;
    }
    this.callback?.(value as Message);
  }
}

interface Headers {
  length?: number;
  /** A malformed header line, or a length we cannot use. */
  error?: string;
  charsetError?: string;
}

function parseHeaders(text: string): Headers {
  const h: Headers = {};
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) {
      h.error ??= `Malformed header line: ${JSON.stringify(line.slice(0, 80))}`;
      continue;
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d+$/.test(value)) return { error: `Content-Length must be a number, got ${JSON.stringify(value)}` };
      const n = Number(value);
      if (n > MAX_MESSAGE_BYTES) return { error: `Content-Length ${n} exceeds the ${MAX_MESSAGE_BYTES}-byte limit` };
      h.length = n;
    } else if (name === 'content-type') {
      const charset = /charset\s*=\s*"?([^;"\s]+)/i.exec(value)?.[1];
      if (charset && !/^utf-?8$/i.test(charset)) h.charsetError = `Unsupported charset ${JSON.stringify(charset)} in Content-Type: only utf-8 is supported`;
    }
  }
  if (h.length === undefined) h.error ??= 'Missing Content-Length header';
  return h;
}

function idOf(v: unknown): string | number | null {
  return typeof v === 'string' || typeof v === 'number' ? v : null;
}

/** Best effort: the id of a message we could not parse, so the error can be matched to it. */
function recoverId(text: string): string | number | null {
  const m = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/.exec(text);
  if (!m) return null;
  try {
    return JSON.parse(m[1]) as string | number;
  } catch {
    return null;
  }
}

/** JSON-RPC 2.0 §4–5 shape checks; returns what is wrong, or undefined. */
function checkMessage(v: unknown): string | undefined {
  if (Array.isArray(v)) return 'batches are not supported by this protocol';
  if (!v || typeof v !== 'object') return 'a message must be a JSON object';
  const m = v as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('id' in m && m.id !== null && typeof m.id !== 'string' && typeof m.id !== 'number') return '"id" must be a string, number or null';
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method === '') return '"method" must be a non-empty string';
    if ('params' in m && m.params !== null && typeof m.params !== 'object') return '"params" must be an object or array';
    return undefined;
  }
  if (!('id' in m)) return 'a message needs a "method" (request or notification) or an "id" (response)';
  if (!('result' in m) && !('error' in m)) return 'a response needs "result" or "error"';
  return undefined;
}

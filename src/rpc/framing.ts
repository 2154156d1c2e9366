/**
 * LSP base-protocol framing (specs/lsp-3.0.md "Base Protocol"): `Content-Length` headers,
 * an optional `Content-Type` whose charset must be utf-8, then a JSON-RPC 2.0 body.
 *
 * vscode-jsonrpc's own reader ignores the charset and only logs malformed bodies; this
 * reader instead reports every framing, parse and shape fault through `onProtocolError`
 * so the connection can answer −32700 / −32600 as JSON-RPC 2.0 requires, and keeps reading.
 */
import type { Readable } from 'node:stream';
import { jsonDepthExceeds } from '../util/json-depth.js';
import { AbstractMessageReader, type DataCallback, type Disposable, type Message } from 'vscode-jsonrpc';
import { InvalidParams, InvalidRequest, ParseError } from './errors.js';

/** The codes this reader answers with (from rpc/errors.ts), for its callers. */
export { InvalidParams, InvalidRequest, ParseError };

export interface ProtocolFault {
  code: typeof ParseError | typeof InvalidRequest | typeof InvalidParams;
  message: string;
  /** The request id when it could be recovered from the bad message, else null. */
  id: string | number | null;
}

const CRLF2 = Buffer.from('\r\n\r\n', 'ascii');
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** A header section longer than this is junk: skip to the next `Content-Length`. */
const MAX_HEADER_BYTES = 8192;
/** Bytes kept from skipped junk, so a `Content-Length` split across two reads is still found. */
const KEEP = 'content-length'.length - 1;

/** What the reader waits for: the end of a header section, or the rest of a body of known length. */
type State = { kind: 'header' } | { kind: 'body'; length: number; fault: string | undefined; chunks: Buffer[]; received: number };

/**
 * Linear in the bytes received: while a header is awaited only its (small, capped) bytes are
 * joined and the terminator is looked for in the new bytes only; a body's chunks are kept in a
 * list and copied once, when the last byte arrives. (The reader it replaces joined the whole
 * buffer and searched it from the start on every read: a 40 MB message took seconds.)
 */
export class FramedReader extends AbstractMessageReader {
  /** Bytes not yet framed while a header is awaited. */
  private head: Buffer = Buffer.alloc(0);
  /** Where the search for `\r\n\r\n` goes on in `head`. */
  private searched = 0;
  private state: State = { kind: 'header' };
  private callback: DataCallback | undefined;
  /** Junk already answered: the rest of the same run of junk is skipped without another error. */
  private inJunk = false;
  /** Bytes copied to join reads (for tests: it must stay proportional to the bytes received). */
  copiedBytes = 0;

  constructor(
    private readonly input: Readable,
    private readonly onProtocolError: (fault: ProtocolFault) => void,
    private readonly opts: ReaderOptions = {},
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
    let next: Buffer | undefined = chunk;
    while (next && next.length) next = this.state.kind === 'body' ? this.takeBody(this.state, next) : this.takeHeader(next);
  }

  /** Adds bytes to a body; returns what follows it once it is complete. */
  private takeBody(st: Extract<State, { kind: 'body' }>, chunk: Buffer): Buffer | undefined {
    st.chunks.push(chunk);
    st.received += chunk.length;
    if (st.received < st.length) return undefined;
    const all = st.chunks.length === 1 ? st.chunks[0] : this.join(st.chunks, st.received);
    this.state = { kind: 'header' };
    this.finishBody(all.subarray(0, st.length), st.fault);
    return all.subarray(st.length);
  }

  /** Adds bytes while a header is awaited; returns the bytes after it once it is parsed. */
  private takeHeader(chunk: Buffer): Buffer | undefined {
    this.head = this.head.length === 0 ? chunk : this.join([this.head, chunk], this.head.length + chunk.length);
    for (;;) {
      const headerEnd = this.head.indexOf(CRLF2, this.searched);
      if (headerEnd < 0) {
        // Only the last 3 bytes can start a terminator completed by the next read.
        this.searched = Math.max(0, this.head.length - 3);
        if (this.head.length > MAX_HEADER_BYTES) this.skipJunk('Header section too long or not terminated by \\r\\n\\r\\n');
        return undefined;
      }
      const rest = this.head.subarray(headerEnd + 4);
      const section = this.head.subarray(0, headerEnd).toString('latin1');
      this.head = Buffer.alloc(0);
      this.searched = 0;
      const start = headerStart(section);
      if (start < 0) {
        // No usable length: we cannot know where the body ends, so skip to the next header.
        this.fault('Missing Content-Length header');
        this.head = rest;
        this.head = this.dropToContentLength(0);
        this.inJunk = true;
        continue;
      }
      const junk = section.slice(0, start);
      // Stray line breaks between frames are harmless; anything else is answered once.
      if (/[^\r\n \t]/.test(junk) && !this.inJunk) this.fault(`Skipped ${junk.length} bytes of junk before a Content-Length header`);
      this.inJunk = false;
      const headers = parseHeaders(section.slice(start));
      if (headers.length === undefined) {
        this.fault(headers.error ?? 'Missing Content-Length header');
        this.head = rest;
        this.head = this.dropToContentLength(0);
        this.inJunk = true;
        continue;
      }
      // A bad header line or charset with a known length: the body is skipped whole.
      this.state = { kind: 'body', length: headers.length, fault: headers.error ?? headers.charsetError, chunks: [], received: 0 };
      return rest.length ? rest : headers.length === 0 ? this.takeBody(this.state, rest) : undefined;
    }
  }

  private finishBody(body: Buffer, fault: string | undefined): void {
    if (fault) this.onProtocolError({ code: ParseError, message: fault, id: recoverId(body.toString('latin1')) });
    else this.deliver(body.toString('utf8'));
  }

  /** Junk with no header end in sight: keep from the next `Content-Length` (or the last bytes, which may begin one). */
  private skipJunk(message: string): void {
    this.head = this.dropToContentLength(1);
    this.searched = 0;
    if (!this.inJunk) this.fault(message);
    this.inJunk = true;
  }

  /** `head` from the first `Content-Length` (any case) at or after `from`, else only its last few bytes. */
  private dropToContentLength(from: number): Buffer {
    const at = this.head.toString('latin1').toLowerCase().indexOf('content-length', from);
    if (at >= 0) return this.head.subarray(at);
    return this.head.subarray(Math.max(0, this.head.length - KEEP));
  }

  private fault(message: string): void {
    this.onProtocolError({ code: ParseError, message, id: null });
  }

  private join(parts: Buffer[], total: number): Buffer {
    this.copiedBytes += total;
    return Buffer.concat(parts, total);
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
    const m = value as Record<string, unknown>;
    const max = this.opts.maxDepth;
    // Checked iteratively before any handler or schema walks the value recursively (and overflows the stack).
    if (max !== undefined && jsonDepthExceeds('method' in m ? m.params : (m.result ?? m.error), max)) {
      const what = 'method' in m ? 'params' : 'result';
      const message = `${what} nested deeper than ${max} levels`;
      if (!('method' in m)) {
        // A response: the request it answers fails with the reason instead of waiting for ever.
        this.callback?.({ jsonrpc: '2.0', id: idOf(m.id), error: { code: InvalidParams, message } } as Message);
      } else if (m.id !== undefined && m.id !== null) {
        this.onProtocolError({ code: InvalidParams, message, id: idOf(m.id) });
      } else this.opts.onDropped?.(`dropped notification ${String(m.method).slice(0, 100)}: ${message}`);
      return;
    }
    this.callback?.(value as Message);
  }
}

/**
 * Where the header section of a frame begins in `section` (the bytes before `\r\n\r\n`),
 * or -1 when it has no `Content-Length` (any case, LSP header names are case-insensitive).
 * Bytes before it are junk (a stray CRLF, garbage written with the frame): the frame after
 * them is still read. Header lines right before `Content-Length` (Content-Type) belong to it.
 */
function headerStart(section: string): number {
  // The name with its colon: junk that merely mentions the words is not taken for the header.
  const at = section.search(/content-length[ \t]*:/i);
  if (at <= 0) return at;
  if (section.charCodeAt(at - 1) !== 10 || section.charCodeAt(at - 2) !== 13) return at;
  let start = at;
  for (;;) {
    const prevEnd = start - 2;
    if (prevEnd <= 0) return start;
    const prevStart = section.lastIndexOf('\r\n', prevEnd - 1) + 2;
    const lineStart = prevStart < 2 ? 0 : prevStart;
    if (!HEADER_LINE.test(section.slice(lineStart, prevEnd))) return start;
    start = lineStart;
    if (start === 0) return 0;
  }
}
const HEADER_LINE = /^[A-Za-z][A-Za-z0-9-]*:[^\r\n]*$/;

export interface ReaderOptions {
  /** Deepest nesting accepted in params (requests get −32602, notifications are dropped) and results. */
  maxDepth?: number;
  /** Told of each notification dropped for its depth. */
  onDropped?: (why: string) => void;
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

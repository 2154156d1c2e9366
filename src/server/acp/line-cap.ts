/**
 * A cap on the length of each line the ACP client sends (issue 28, point 15). The SDK's
 * `ndJsonStream` frames the messages, and a line over its limit errors its whole input stream:
 * the connection, and every session on it, would end. This splitter sits in front of it: lines up
 * to the cap pass through whole; a longer one is dropped as it streams in (only its first few
 * kilobytes are kept, to find its id), and answered with a JSON-RPC error of its own:
 *
 *   {"jsonrpc":"2.0","id":<its id, or null>,"error":{"code":-32600,"message":"…","data":{"maxBytes":…,"bytes":…}}}
 *
 * An over-long answer of the client to one of the agent's own requests (`result` or `error`, no
 * `method`) is not answered: that error takes the answer's place on the way in, so the request
 * fails at once (the client's request ids are its own; one of them may be the same number).
 *
 * The id is the message's top-level `id` when it appears in those first kilobytes (clients write
 * `jsonrpc`, `id`, `method` before `params`), else null, as JSON-RPC answers a request whose id
 * cannot be read. Memory stays bounded: one line up to the cap, plus the chunk being read.
 */
import { logger } from '../../util/log.js';

const log = logger('acp');

/** The longest line taken, in bytes: the SDK's own default limit (32 MiB). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;
/** How much of an over-long line is kept to find its id. */
const ID_PREFIX_BYTES = 4096;
const NEWLINE = 0x0a;

export interface CappedLines {
  /** What the SDK writes to: the client's output, shared with this splitter's error answers. */
  output: WritableStream<Uint8Array>;
  /** The client's input, over-long lines taken out. */
  input: ReadableStream<Uint8Array>;
  /** The limit to give the SDK: above any line this splitter lets through. */
  sdkMaxBytes: number;
}

export function cappedLines(output: WritableStream<Uint8Array>, input: ReadableStream<Uint8Array>, maxBytes = MAX_LINE_BYTES): CappedLines {
  // One writer for the SDK's messages and ours, so each goes out whole and in order.
  const writer = output.getWriter();
  let queue: Promise<void> = Promise.resolve();
  const write = (bytes: Uint8Array): Promise<void> => {
    const w = queue.then(() => writer.write(bytes));
    queue = w.catch(() => undefined);
    return w;
  };
  const shared = new WritableStream<Uint8Array>({
    write: (chunk) => write(chunk),
    close: () => queue.then(() => writer.close()),
    abort: (reason: unknown) => writer.abort(reason),
  });

  let parts: Uint8Array[] = [];
  let length = 0;
  /** Set while an over-long line is being dropped: its first bytes and how many came. */
  let dropping: { prefix: Uint8Array; bytes: number } | undefined;

  const refuse = (d: { prefix: Uint8Array; bytes: number }, controller: TransformStreamDefaultController<Uint8Array>): void => {
    const { id, kind } = leadingShape(new TextDecoder().decode(d.prefix));
    const error = { code: -32600, message: `Invalid request: the message is ${d.bytes} bytes, over the limit of ${maxBytes} bytes for one line; it was dropped`, data: { maxBytes, bytes: d.bytes } };
    if (kind === 'answer' && id !== null) {
      // The client's answer to one of our requests (a file read through its buffer): our request
      // fails now, with this error in place of the answer. Sent back instead, it would answer
      // the client's own request of that id (both sides number theirs from 0).
      log.warn(`dropped the client's ${d.bytes}-byte answer to request ${JSON.stringify(id)} (the limit is ${maxBytes}); that request fails`);
      controller.enqueue(
        new TextEncoder().encode(
          `${JSON.stringify({ jsonrpc: '2.0', id, error: { ...error, message: `The client's answer is ${d.bytes} bytes, over the limit of ${maxBytes} bytes for one line; it was dropped` } })}\n`,
        ),
      );
      return;
    }
    log.warn(`dropped a message of ${d.bytes} bytes from the client (the limit is ${maxBytes}); answered with an error${id === null ? '' : ` for id ${JSON.stringify(id)}`}`);
    void write(new TextEncoder().encode(`${JSON.stringify({ jsonrpc: '2.0', id, error })}\n`)).catch(() => undefined);
  };

  const splitter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      let start = 0;
      while (start < chunk.length) {
        const nl = chunk.indexOf(NEWLINE, start);
        const end = nl === -1 ? chunk.length : nl;
        const piece = chunk.subarray(start, end);
        if (dropping) dropping.bytes += piece.length;
        else if (length + piece.length > maxBytes) {
          dropping = { prefix: prefixOf([...parts, piece]), bytes: length + piece.length };
          parts = [];
          length = 0;
        } else if (piece.length) {
          parts.push(piece);
          length += piece.length;
        }
        if (nl === -1) break;
        if (dropping) {
          refuse(dropping, controller);
          dropping = undefined;
        } else {
          controller.enqueue(joined([...parts, chunk.subarray(nl, nl + 1)]));
          parts = [];
          length = 0;
        }
        start = nl + 1;
      }
    },
    flush(controller) {
      if (dropping) refuse(dropping, controller);
      else if (length) controller.enqueue(joined(parts));
    },
  });
  return { output: shared, input: input.pipeThrough(splitter), sdkMaxBytes: maxBytes + 1 };
}

function joined(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  return Buffer.concat(parts);
}

function prefixOf(parts: Uint8Array[]): Uint8Array {
  const out: Uint8Array[] = [];
  let n = 0;
  for (const p of parts) {
    if (n >= ID_PREFIX_BYTES) break;
    const take = p.subarray(0, ID_PREFIX_BYTES - n);
    out.push(Uint8Array.from(take));
    n += take.length;
  }
  return Buffer.concat(out);
}

/** What the first bytes of a message say it is: its top-level `id`, and whether it is a request (`method`) or an answer (`result` or `error`). */
export interface LeadingShape {
  id: string | number | null;
  kind: 'request' | 'answer' | 'unknown';
}

/** The top-level `id` of a JSON object whose text starts with `text` (see leadingShape). */
export function leadingId(text: string): string | number | null {
  return leadingShape(text).id;
}

/**
 * The top-level `id` and kind of a JSON object whose text starts with `text`, from the members
 * that are there before the text ends (an id that is a number or a string; anything else is
 * null). Other members' values are skipped unparsed.
 */
export function leadingShape(text: string): LeadingShape {
  let i = 0;
  let id: string | number | null = null;
  let kind: LeadingShape['kind'] = 'unknown';
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const skipString = (): string | undefined => {
    const from = ++i;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '\\') i += 2;
      else if (c === '"') return text.slice(from, i++);
      else i++;
    }
    return undefined;
  };
  const skipValue = (): boolean => {
    let depth = 0;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        if (skipString() === undefined) return false;
        if (depth === 0) return true;
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) return true;
        depth--;
        if (depth === 0) {
          i++;
          return true;
        }
      } else if (c === ',' && depth === 0) return true;
      i++;
    }
    return false;
  };
  const done = () => ({ id, kind });
  ws();
  if (text[i] !== '{') return done();
  i++;
  for (;;) {
    ws();
    if (text[i] !== '"') return done();
    const raw = skipString();
    if (raw === undefined) return done();
    ws();
    if (text[i] !== ':') return done();
    i++;
    ws();
    if (raw === 'method') kind = 'request';
    else if ((raw === 'result' || raw === 'error') && kind === 'unknown') kind = 'answer';
    if (raw === 'id') {
      const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|"(?:[^"\\]|\\.)*")\s*[,}]/.exec(text.slice(i, i + 1100));
      if (!m) return done();
      const v: unknown = JSON.parse(m[1]!);
      if (typeof v !== 'number' && typeof v !== 'string') return done();
      id = v;
      i += m[1]!.length;
    } else if (!skipValue()) return done();
    ws();
    if (text[i] !== ',') return done();
    i++;
  }
}

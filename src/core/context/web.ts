/**
 * Fetch a web page as text for a `web` context: http(s) only, redirects followed, a timeout
 * and the caller's signal honoured, HTML reduced to text, plain text passed through, anything
 * binary refused. Failures throw an Error with a short message the caller shows as-is.
 */
import { errorMessage } from '../../util/log.js';
import { underDeadline } from '../../util/deadline.js';

export interface FetchTextOptions {
  signal: AbortSignal;
  maxChars: number;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const TEXT_TYPES = /^(text\/|application\/(json|xml|javascript|ecmascript|x-javascript|ld\+json|x-yaml|yaml|toml|x-sh)\b|application\/[\w.+-]+\+(json|xml)\b)/;
const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/;

function allowedUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`invalid URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported URL scheme ${url.protocol}`);
  return url;
}

export async function fetchWebText(rawUrl: string, opts: FetchTextOptions): Promise<string> {
  const url = allowedUrl(rawUrl);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // One deadline over the answer, its body and its conversion to text.
  return underDeadline(timeoutMs, [opts.signal], (signal, d) => fetchText(url, opts, signal, () => d.expired, timeoutMs));
}

async function fetchText(url: URL, opts: FetchTextOptions, signal: AbortSignal, expired: () => boolean, timeoutMs: number): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, {
      signal,
      redirect: 'follow',
      headers: { 'user-agent': 'patchbay', accept: 'text/html,text/plain;q=0.9,*/*;q=0.5' },
    });
  } catch (e) {
    throw fetchError(e, opts.signal, expired(), timeoutMs);
  }
  try {
    if (!res.ok) throw new Error(`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
    if (res.url) allowedUrl(res.url);
    const type = (res.headers.get('content-type') ?? '').toLowerCase().trim();
    const isHtml = HTML_TYPES.test(type);
    if (type && !isHtml && !TEXT_TYPES.test(type)) throw new Error(`not a text page (${type.split(';')[0]})`);

    // HTML carries markup around its text; read enough of it to fill maxChars after stripping.
    const maxBytes = Math.min(Math.max(opts.maxChars * (isHtml || !type ? 8 : 4), 1 << 20), 32 << 20);
    const { bytes, truncated } = await readCapped(res, maxBytes);
    if (!type && looksBinary(bytes)) throw new Error('not a text page (binary content)');
    const raw = decode(bytes, type);
    const text = isHtml || (!type && /^\s*<(!doctype html|html)/i.test(raw)) ? await htmlToText(raw) : raw;
    return cap(text, opts.maxChars, truncated);
  } catch (e) {
    if (signal.aborted) throw fetchError(e, opts.signal, expired(), timeoutMs);
    throw e;
  } finally {
    if (!res.bodyUsed) await res.body?.cancel().catch(() => undefined);
  }
}

function fetchError(e: unknown, caller: AbortSignal, timedOut: boolean, timeoutMs: number): Error {
  if (caller.aborted) return new Error('cancelled');
  if (timedOut) return new Error(`timed out after ${timeoutMs < 1000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`}`);
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : undefined;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  return new Error(cause ? `fetch failed: ${code ?? cause.message}` : errorMessage(e));
}

async function readCapped(res: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  if (res.body) {
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size >= maxBytes) {
        truncated = true;
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { bytes: truncated ? bytes.subarray(0, maxBytes) : bytes, truncated };
}

function looksBinary(bytes: Uint8Array): boolean {
  const n = Math.min(bytes.length, 4096);
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true;
  return false;
}

function decode(bytes: Uint8Array, type: string): string {
  const charset = /charset="?([\w-]+)/.exec(type)?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

/** html-to-text (and its parser) load on first use: they are large and off the start-up path. */
async function htmlToText(html: string): Promise<string> {
  const { convert } = await import('html-to-text');
  return convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'a', options: { ignoreHref: true } },
    ],
  }).trim();
}

function cap(text: string, maxChars: number, bodyTruncated: boolean): string {
  if (text.length > maxChars) {
    return `${text.slice(0, maxChars)}\n[truncated: showing the first ${maxChars} of ${text.length}${bodyTruncated ? '+' : ''} characters]`;
  }
  if (bodyTruncated) return `${text}\n[truncated: the page was too large to read whole]`;
  return text;
}

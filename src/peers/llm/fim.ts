/**
 * Fill-in-the-middle over the two APIs that have an endpoint for it, one JSON answer each (an
 * inline completion is short; streaming it would only add work):
 * - OpenAI-compatible `POST {url}/completions` with `prompt` and `suffix`
 *   (https://platform.openai.com/docs/api-reference/completions/create; vLLM, llama.cpp, Mistral's
 *   Codestral, DeepSeek serve the same shape): the text is `choices[0].text`;
 * - Ollama `POST {url}/api/generate` with `suffix`
 *   (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-completion): `response`.
 */
import { abortError, httpError, isAbortError, scrub, toLlmError } from './errors.js';
import type { AdapterOptions } from './stream-util.js';
import { type FimRequest, LlmError } from '../../shapes/llm.js';
import { mergePayload } from '../../util/merge-payload.js';
import { maskedUrl } from '../../util/url.js';

/** A completion answer is a few lines; a body past this is a misbehaving server, not an answer. */
const MAX_BODY_BYTES = 1024 * 1024;

export async function openAiFim(opts: AdapterOptions, req: FimRequest): Promise<string> {
  const body = { model: req.model, prompt: req.prompt, suffix: req.suffix, max_tokens: req.maxOutputTokens, stream: false };
  const json = await postJson(opts, `${trimSlash(opts.url)}/completions`, mergePayload(body, req.payload), req.signal);
  const text = (json as { choices?: Array<{ text?: unknown }> }).choices?.[0]?.text;
  if (typeof text !== 'string') throw unreadable(opts, json);
  return text;
}

export async function ollamaFim(opts: AdapterOptions, req: FimRequest): Promise<string> {
  const body = { model: req.model, prompt: req.prompt, suffix: req.suffix, stream: false, options: { num_predict: req.maxOutputTokens } };
  const json = await postJson(opts, `${trimSlash(opts.url)}/api/generate`, mergePayload(body, req.payload), req.signal);
  const r = json as { response?: unknown; error?: unknown };
  if (typeof r.error === 'string') throw new LlmError(clean(`${provider(opts)}: ${r.error}`, opts), undefined, false);
  if (typeof r.response !== 'string') throw unreadable(opts, json);
  return r.response;
}

async function postJson(opts: AdapterOptions, address: string, body: unknown, signal: AbortSignal): Promise<unknown> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const { url, basic } = withoutUserInfo(address, opts);
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  else if (basic) headers.authorization = `Basic ${basic}`;
  let text: string;
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(url, { method: 'POST', headers, body: JSON.stringify(body), signal });
    text = await readCapped(res, provider(opts));
  } catch (e) {
    if (signal.aborted || isAbortError(e)) throw abortError(signal.reason);
    const err = toLlmError(e, provider(opts), opts.key, opts.url);
    // Not a stream: toLlmError's last resort names one.
    const message = clean(err.message.replace(`${provider(opts)} stream error`, `${provider(opts)} request failed`), opts);
    throw new LlmError(message, err instanceof LlmError ? err.status : undefined, err instanceof LlmError && err.retryable);
  }
  if (!res.ok) throw httpError(provider(opts), res.status, res.headers, text, opts.key);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new LlmError(clean(`${provider(opts)}: the answer is not JSON: ${text.slice(0, 200)}`, opts), res.status, false);
  }
}

/**
 * `https://user:pw@host/…` as fetch takes it: fetch refuses a URL with credentials (and quotes it
 * whole in its error), so they go in an `Authorization: Basic` header instead. With a key as
 * well the two would fight over that header: refused, naming the URL without its user info.
 */
function withoutUserInfo(address: string, opts: AdapterOptions): { url: string; basic?: string } {
  let u: URL;
  try {
    u = new URL(address);
  } catch {
    throw new LlmError(`${provider(opts)}: the provider URL ${maskedUrl(address)} is not a valid URL`, undefined, false);
  }
  if (!u.username && !u.password) return { url: address };
  if (opts.key) throw new LlmError(`${provider(opts)}: the provider URL ${maskedUrl(opts.url)} carries a user name and password and the provider has a key too: keep only one`, undefined, false);
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  return { url: u.toString(), basic };
}

/** Every message of this file: no key, no URL user info or query values, no known secret. */
function clean(message: string, opts: AdapterOptions): string {
  return scrub(message, opts.key);
}

/** The body as text, refused past MAX_BODY_BYTES (read piece by piece: no length header is trusted). */
async function readCapped(res: Response, name: string): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      size += r.value.byteLength;
      if (size > MAX_BODY_BYTES) throw new LlmError(`${name}: the answer is larger than ${MAX_BODY_BYTES} bytes`, res.status, false);
      parts.push(r.value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return Buffer.concat(parts).toString('utf8');
}

function unreadable(opts: AdapterOptions, json: unknown): LlmError {
  return new LlmError(clean(`${provider(opts)}: unexpected fill-in-the-middle answer: ${JSON.stringify(json).slice(0, 200)}`, opts), undefined, false);
}

function provider(opts: AdapterOptions): string {
  return opts.provider ?? 'llm';
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/**
 * Ollama's native chat API (`POST /api/chat`, `stream: true`: one JSON object per line).
 * https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
 *
 * Plain `fetch`, no SDK. Ollama sends whole tool calls (not argument deltas), so each call
 * becomes Start / one Delta with the full JSON / End.
 */
import { abortError, classified, httpError, isAbortError, toLlmError } from './errors.js';
import { lineTooLong, MAX_LINE_CHARS } from './line-cap.js';
import { type AdapterOptions, currentAuth, parseArgs, ReasoningTracker, ThinkTagSplitter } from './stream-util.js';
import { type FimRequest, type FinishReason, type LlmClient, type LlmEvent, LlmError, type LlmMessage, type LlmRequest } from '../../shapes/llm.js';
import { fitImages } from './image-limits.js';
import { toolImagesText, withToolImagesAfter, type ToolImages } from './images.js';
import { mergePayload } from '../../util/merge-payload.js';
import { ollamaFim } from './fim.js';

interface OllamaToolCall {
  id?: string;
  function: { index?: number; name: string; arguments: Record<string, unknown> | string };
}

interface OllamaChunk {
  message?: { role?: string; content?: string; thinking?: string; tool_calls?: OllamaToolCall[] };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: string;
}

interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  thinking?: string;
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
  /** Raw base64 images, for multimodal models. */
  images?: string[];
}

export class OllamaClient implements LlmClient {
  readonly api = 'ollama' as const;
  private readonly provider: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: AdapterOptions) {
    this.provider = opts.provider ?? 'ollama';
    this.fetch = opts.fetch ?? fetch;
  }

  async *stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    const res = await this.post(req);
    const reasoning = new ReasoningTracker();
    const splitter = new ThinkTagSplitter(reasoning);
    let calls = 0;
    let last: OllamaChunk | undefined;
    const out: LlmEvent[] = [];

    for await (const line of this.lines(res, req.signal)) {
      let chunk: OllamaChunk;
      try {
        chunk = JSON.parse(line) as OllamaChunk;
      } catch {
        throw new LlmError(`${this.provider}: unreadable stream line: ${line.slice(0, 200)}`, undefined, false);
      }
      if (chunk.error) throw classified(new LlmError(`${this.provider} stream error: ${chunk.error}`, undefined, false));
      const msg = chunk.message;
      if (msg?.thinking) reasoning.delta(msg.thinking, out);
      if (msg?.content) splitter.feed(msg.content, out);
      for (const tc of msg?.tool_calls ?? []) {
        splitter.flush(out);
        reasoning.end(out);
        const id = tc.id || `call_${calls}_${Date.now().toString(36)}`;
        const name = tc.function.name;
        const raw = tc.function.arguments;
        const args = typeof raw === 'string' ? parseArgs(raw) : raw && typeof raw === 'object' ? raw : {};
        calls++;
        out.push({ type: 'toolCallStart', id, name });
        out.push({ type: 'toolCallDelta', id, argsDelta: JSON.stringify(args) });
        out.push({ type: 'toolCallEnd', id, name, args });
      }
      if (chunk.done) last = chunk;
      if (out.length) yield* out.splice(0);
      if (chunk.done) break;
    }
    if (req.signal.aborted) throw abortError(req.signal.reason);
    if (!last) throw new LlmError(`${this.provider}: the stream ended before the response was complete`, undefined, true);

    splitter.flush(out);
    reasoning.end(out);
    out.push({ type: 'usage', inputTokens: last.prompt_eval_count ?? 0, outputTokens: last.eval_count ?? 0 });
    let reason: FinishReason = 'other';
    if (calls > 0) reason = 'tool_calls';
    else if (last.done_reason === 'stop' || last.done_reason === undefined) reason = 'stop';
    else if (last.done_reason === 'length') reason = 'length';
    out.push({ type: 'finish', reason });
    yield* out;
  }

  /** Only called for models configured with `fim` (./fim.ts). */
  fillInMiddle(req: FimRequest): Promise<string> {
    return ollamaFim({ ...this.opts, key: currentAuth(this.opts).key, auth: undefined, provider: this.provider }, req);
  }

  private async post(req: LlmRequest): Promise<Response> {
    const messages: OllamaMessage[] = [];
    if (req.system) messages.push({ role: 'system', content: req.system });
    messages.push(...withToolImagesAfter(fitImages(req.messages, { api: 'Ollama', measure: 'bytes' }), (m) => [toOllamaMessage(m)], imagesMessage));
    const body: Record<string, unknown> = { model: req.model, messages, stream: true };
    if (req.tools.length) {
      body.tools = req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    }
    if (req.reasoning) body.think = true;
    if (req.maxOutputTokens) body.options = { num_predict: req.maxOutputTokens };
    const sent = mergePayload(body, req.payload);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const { key } = currentAuth(this.opts);
    // Ollama itself takes no key; a proxy in front of it may.
    if (key) headers.authorization = `Bearer ${key}`;
    let res: Response;
    try {
      res = await this.fetch(`${trimSlash(this.opts.url)}/api/chat`, { method: 'POST', headers, body: JSON.stringify(sent), signal: req.signal });
    } catch (e) {
      if (req.signal.aborted || isAbortError(e)) throw abortError(req.signal.reason);
      throw toLlmError(e, this.provider, key, this.opts.url);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw httpError(this.provider, res.status, res.headers, text, key);
    }
    if (!res.body) throw new LlmError(`${this.provider}: empty response body`, res.status, true);
    return res;
  }

  /** Newline-delimited JSON lines of the body; a stream cut by abort ends quietly. */
  private async *lines(res: Response, signal: AbortSignal): AsyncGenerator<string> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        let r: Awaited<ReturnType<typeof reader.read>>;
        try {
          r = await reader.read();
        } catch (e) {
          if (signal.aborted || isAbortError(e)) return;
          throw toLlmError(e, this.provider, currentAuth(this.opts).key, this.opts.url);
        }
        if (r.done) break;
        const text = decoder.decode(r.value, { stream: true });
        // A read with no newline is only appended (linear time); the whole line is capped (line-cap.ts).
        const hasNewline = text.indexOf('\n') >= 0;
        buf += text;
        if (!hasNewline) {
          if (buf.length > MAX_LINE_CHARS) throw lineTooLong(this.provider);
          continue;
        }
        let start = 0;
        let nl: number;
        while ((nl = buf.indexOf('\n', start)) >= 0) {
          const line = buf.slice(start, nl).trim();
          start = nl + 1;
          if (line.length > MAX_LINE_CHARS) throw lineTooLong(this.provider);
          if (line) yield line;
        }
        buf = buf.slice(start);
        if (buf.length > MAX_LINE_CHARS) throw lineTooLong(this.provider);
      }
      buf += decoder.decode();
      if (buf.trim()) yield buf.trim();
    } finally {
      // Stop the body if the consumer left early.
      reader.cancel().catch(() => {});
    }
  }
}

function toOllamaMessage(m: LlmMessage): OllamaMessage {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: m.content, ...(m.images?.length ? { images: m.images.map((i) => i.base64) } : {}) };
    case 'tool':
      return { role: 'tool', content: m.content, tool_name: m.name };
    case 'assistant': {
      const msg: OllamaMessage = { role: 'assistant', content: '' };
      const thinking: string[] = [];
      const calls: OllamaToolCall[] = [];
      for (const p of m.content) {
        if (p.type === 'text') msg.content += p.text;
        else if (p.type === 'reasoning') thinking.push(p.text);
        else calls.push({ function: { name: p.name, arguments: p.args } });
      }
      if (thinking.length) msg.thinking = thinking.join('\n\n');
      if (calls.length) msg.tool_calls = calls;
      return msg;
    }
  }
}

/** Tool messages carry no images for Ollama's templates: they follow as a user message. */
function imagesMessage(from: ToolImages[]): OllamaMessage {
  return { role: 'user', content: toolImagesText(from), images: from.flatMap((t) => t.images.map((i) => i.base64)) };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Names of the models an Ollama server has pulled (`GET /api/tags`). */
export async function listOllamaModels(url: string, signal?: AbortSignal, fetchImpl: typeof fetch = fetch): Promise<string[]> {
  const res = await fetchImpl(`${trimSlash(url)}/api/tags`, { signal });
  if (!res.ok) {
    const text = await res.text().catch(() => '');
    throw httpError('ollama', res.status, res.headers, text);
  }
  const body = (await res.json()) as { models?: Array<{ name?: unknown; model?: unknown }> };
  return (body.models ?? []).flatMap((m) => {
    const name = typeof m.name === 'string' ? m.name : typeof m.model === 'string' ? m.model : undefined;
    return name ? [name] : [];
  });
}

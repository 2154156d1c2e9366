/**
 * OpenAI Responses API (`POST /responses`, streamed as named SSE events).
 * https://platform.openai.com/docs/api-reference/responses-streaming
 *
 * patchbay keeps its own history, so requests are stateless (`store: false`). Reasoning
 * then only survives to the next turn as the item's `encrypted_content`, which we ask for
 * and replay together with the item id and its summary.
 */
import OpenAI from 'openai';
import { openStream, parseData, relaySse, type SseEvent } from './sse.js';
import { type AdapterOptions, currentAuth, parseArgs, ReasoningTracker } from './stream-util.js';
import { type FinishReason, type LlmClient, type LlmEvent, LlmError, type LlmImage, type LlmMessage, type LlmRequest } from '../../shapes/llm.js';
import { fitImages, OPENAI_IMAGE_LIMITS } from './image-limits.js';
import { dataUrl, toolImagesText, withToolImagesAfter, type ToolImages } from './images.js';
import { mergePayload } from '../../util/merge-payload.js';
import { isOpenAiUrl, promptCacheFields } from './openai-cache.js';

type InputItem = OpenAI.Responses.ResponseInputItem;
type Params = OpenAI.Responses.ResponseCreateParamsStreaming;
type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/** Error codes of `error` / `response.failed` events worth retrying. */
const retryableCodes = new Set(['server_error', 'rate_limit_exceeded', 'overloaded', 'internal_error']);

export class OpenAiResponsesClient implements LlmClient {
  readonly api = 'openai-responses' as const;
  private readonly provider: string;
  /** The SDK client of the current key, rebuilt when it changes (a refreshed login). */
  private sdk?: { key?: string; client: OpenAI };

  constructor(private readonly opts: AdapterOptions) {
    this.provider = opts.provider ?? 'openai';
  }

  private client(): { key?: string; client: OpenAI } {
    const { key } = currentAuth(this.opts);
    if (!this.sdk || this.sdk.key !== key) {
      this.sdk = { key, client: new OpenAI({ apiKey: key ?? 'no-key', baseURL: this.opts.url, maxRetries: 0, ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}) }) };
    }
    return this.sdk;
  }

  async *stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    const { key, client } = this.client();
    const body = await openStream(() => client.responses.create(mergePayload(this.body(req), req.payload), { signal: req.signal }).asResponse(), this.provider, key, this.opts.url);

    const reasoning = new ReasoningTracker();
    /** Function-call items by item id: call_id, name, streamed args. */
    const calls = new Map<string, { callId: string; name: string; args: string; ended: boolean }>();
    let toolCalls = 0;

    const handle = (sse: SseEvent, out: LlmEvent[]): boolean => {
      const ev = parseData<StreamEvent>(sse, this.provider);
      switch (ev.type) {
        case 'response.output_item.added': {
          const item = ev.item;
          if (item.type === 'reasoning') reasoning.start(out, item.id);
          else if (item.type === 'function_call') {
            reasoning.end(out);
            const key = item.id ?? item.call_id;
            calls.set(key, { callId: item.call_id, name: item.name, args: '', ended: false });
            out.push({ type: 'toolCallStart', id: item.call_id, name: item.name });
          }
          break;
        }
        case 'response.reasoning_summary_part.added':
          // Summaries come in parts; keep them apart as paragraphs.
          if (ev.summary_index > 0) reasoning.delta('\n\n', out, ev.item_id);
          break;
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta':
          reasoning.delta(ev.delta, out, ev.item_id);
          break;
        case 'response.output_text.delta':
        case 'response.refusal.delta':
          reasoning.end(out);
          if (ev.delta) out.push({ type: 'text', text: ev.delta });
          break;
        case 'response.function_call_arguments.delta': {
          const call = calls.get(ev.item_id);
          if (call && ev.delta) {
            call.args += ev.delta;
            out.push({ type: 'toolCallDelta', id: call.callId, argsDelta: ev.delta });
          }
          break;
        }
        case 'response.output_item.done': {
          const item = ev.item;
          if (item.type === 'reasoning') {
            if (!reasoning.isOpen) reasoning.start(out, item.id);
            reasoning.end(out, { itemId: item.id, encrypted: item.encrypted_content ?? undefined });
          } else if (item.type === 'function_call') {
            const call = calls.get(item.id ?? item.call_id);
            if (!call) out.push({ type: 'toolCallStart', id: item.call_id, name: item.name });
            if (call?.ended) break;
            if (call) call.ended = true;
            toolCalls++;
            out.push({ type: 'toolCallEnd', id: item.call_id, name: item.name, args: parseArgs(item.arguments || call?.args) });
          }
          break;
        }
        case 'response.completed':
        case 'response.incomplete': {
          reasoning.end(out);
          const r = ev.response;
          if (r.usage) {
            const cached = r.usage.input_tokens_details?.cached_tokens;
            out.push({ type: 'usage', inputTokens: r.usage.input_tokens, outputTokens: r.usage.output_tokens, ...(cached ? { cacheReadTokens: cached } : {}) });
          }
          let reason: FinishReason = toolCalls > 0 ? 'tool_calls' : 'stop';
          const incomplete = r.incomplete_details?.reason;
          if (ev.type === 'response.incomplete') reason = incomplete === 'max_output_tokens' ? 'length' : incomplete === 'content_filter' ? 'refusal' : 'other';
          out.push({ type: 'finish', reason });
          return true;
        }
        case 'response.failed': {
          const err = ev.response.error;
          throw new LlmError(`${this.provider} response failed${err ? ` (${err.code}): ${err.message}` : ''}`, undefined, err ? retryableCodes.has(err.code) : true);
        }
        case 'error':
          throw new LlmError(`${this.provider} stream error${ev.code ? ` (${ev.code})` : ''}: ${ev.message}`, undefined, ev.code ? retryableCodes.has(ev.code) : false);
        default:
          break;
      }
      return false;
    };
    yield* relaySse(body, { provider: this.provider, key, url: this.opts.url, signal: req.signal }, handle);
  }

  private body(req: LlmRequest): Params {
    const params: Params = {
      model: req.model,
      input: withToolImagesAfter(fitImages(req.messages, OPENAI_IMAGE_LIMITS), toInputItems, imagesItem),
      stream: true,
      store: false,
      // The Responses API is OpenAI's (or a close copy of it): the key goes whatever the host.
      ...promptCacheFields({ ...req, cacheRetention: req.cacheRetention ?? 'short' }, isOpenAiUrl(this.opts.url)),
    };
    if (req.system) params.instructions = req.system;
    if (req.tools.length) {
      // strict mode would demand every property be required; our schemas are not written for it.
      params.tools = req.tools.map((t) => ({ type: 'function', name: t.name, description: t.description, parameters: t.parameters, strict: false }));
    }
    if (req.maxOutputTokens) params.max_output_tokens = req.maxOutputTokens;
    if (req.reasoning) {
      params.reasoning = { summary: 'auto' };
      params.include = ['reasoning.encrypted_content'];
    }
    return params;
  }
}

function toInputItems(m: LlmMessage): InputItem[] {
  switch (m.role) {
    case 'user':
      if (!m.images?.length) return [{ type: 'message', role: 'user', content: m.content }];
      return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: m.content }, ...m.images.map(imagePart)] }];
    case 'tool':
      return [{ type: 'function_call_output', call_id: m.toolCallId, output: m.content }];
    case 'assistant': {
      const items: InputItem[] = [];
      for (const p of m.content) {
        if (p.type === 'text') {
          if (p.text) items.push({ type: 'message', role: 'assistant', content: p.text });
        } else if (p.type === 'toolCall') {
          items.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: JSON.stringify(p.args) });
        } else if (p.itemId && p.encrypted) {
          // Without the encrypted blob a stateless request cannot resolve the item: skip it.
          items.push({
            type: 'reasoning',
            id: p.itemId,
            encrypted_content: p.encrypted,
            summary: p.text ? [{ type: 'summary_text', text: p.text }] : [],
          });
        }
      }
      return items;
    }
  }
}

function imagePart(img: LlmImage): OpenAI.Responses.ResponseInputImage {
  return { type: 'input_image', image_url: dataUrl(img), detail: 'auto' };
}

/** A `function_call_output` takes only text here: a tool's images follow as a user message (as ECA sends them). */
function imagesItem(from: ToolImages[]): InputItem {
  return { type: 'message', role: 'user', content: [{ type: 'input_text', text: toolImagesText(from) }, ...from.flatMap((t) => t.images.map(imagePart))] };
}

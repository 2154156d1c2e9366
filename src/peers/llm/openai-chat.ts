/**
 * OpenAI Chat Completions (`POST /chat/completions`, streamed) — also the wire format of
 * most "OpenAI-compatible" servers (vLLM, llama.cpp, LM Studio, OpenRouter, DeepSeek…).
 * https://platform.openai.com/docs/api-reference/chat-streaming
 *
 * Reasoning arrives three ways depending on the server: `<think>` tags inside `content`,
 * a `reasoning_content` delta field (DeepSeek, vLLM), or a `reasoning` field (OpenRouter,
 * Ollama's compat layer). All become reasoning events.
 */
import OpenAI from 'openai';
import { type AdapterOptions, currentAuth, finishFromOpenAi, parseArgs, ReasoningTracker, ThinkTagSplitter } from './stream-util.js';
import { openStream, parseData, relaySse, type SseEvent } from './sse.js';
import { type FimRequest, type LlmClient, type LlmEvent, LlmError, type LlmImage, type LlmMessage, type LlmRequest } from '../../shapes/llm.js';
import { fitImages, OPENAI_IMAGE_LIMITS } from './image-limits.js';
import { dataUrl, toolImagesText, withToolImagesAfter, type ToolImages } from './images.js';
import { mergePayload } from '../../util/merge-payload.js';
import { openAiFim } from './fim.js';
import { promptCacheFields } from './openai-cache.js';

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsStreaming;

/** Delta fields compatible servers add beyond OpenAI's schema. */
interface CompatDelta {
  reasoning_content?: string | null;
  reasoning?: string | null;
}

export class OpenAiChatClient implements LlmClient {
  readonly api = 'openai-chat' as const;
  private readonly provider: string;
  /** The SDK client of the current key, rebuilt when it changes (a refreshed login). */
  private sdk?: { key?: string; client: OpenAI };

  constructor(private readonly opts: AdapterOptions) {
    this.provider = opts.provider ?? 'openai-chat';
  }

  private client(): { key?: string; client: OpenAI } {
    const { key } = currentAuth(this.opts);
    if (!this.sdk || this.sdk.key !== key) {
      // Local servers take no key, but the SDK insists on one.
      this.sdk = { key, client: new OpenAI({ apiKey: key ?? 'no-key', baseURL: this.opts.url, maxRetries: 0, ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}) }) };
    }
    return this.sdk;
  }

  async *stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    const { key, client } = this.client();
    // The SDK builds and sends the request and turns HTTP errors into typed errors; the body
    // is read by our batch SSE reader (see sse.ts for why).
    const body = await openStream(() => client.chat.completions.create(mergePayload(this.body(req), req.payload), { signal: req.signal }).asResponse(), this.provider, key, this.opts.url);

    const reasoning = new ReasoningTracker();
    const splitter = new ThinkTagSplitter(reasoning);
    const calls = new Map<number, { id: string; name: string; args: string; started: boolean }>();
    let finish: string | null | undefined;
    let usage: LlmEvent | undefined;

    const handle = (ev: SseEvent, out: LlmEvent[]): boolean => {
      if (ev.data === '[DONE]') return true;
      const chunk = parseData<OpenAI.Chat.ChatCompletionChunk & { error?: { message?: string } }>(ev, this.provider);
      // An error mid-stream is the server failing, not the request being wrong: worth a retry.
      if (chunk.error) throw new LlmError(`${this.provider}: ${chunk.error.message ?? JSON.stringify(chunk.error)}`, undefined, true);
      if (chunk.usage) {
        usage = {
          type: 'usage',
          inputTokens: chunk.usage.prompt_tokens ?? 0,
          outputTokens: chunk.usage.completion_tokens ?? 0,
          ...(chunk.usage.prompt_tokens_details?.cached_tokens ? { cacheReadTokens: chunk.usage.prompt_tokens_details.cached_tokens } : {}),
        };
      }
      const choice = chunk.choices?.[0];
      if (!choice) return false;
      const delta = (choice.delta ?? {}) as OpenAI.Chat.ChatCompletionChunk.Choice.Delta & CompatDelta;
      const thought = delta.reasoning_content ?? delta.reasoning;
      if (thought) reasoning.delta(thought, out);
      if (delta.content) splitter.feed(delta.content, out);
      for (const tc of delta.tool_calls ?? []) {
        let call = calls.get(tc.index);
        if (!call) {
          call = { id: tc.id || `call_${tc.index}_${Date.now().toString(36)}`, name: '', args: '', started: false };
          calls.set(tc.index, call);
        }
        if (tc.function?.name) call.name += tc.function.name;
        if (!call.started && call.name) {
          splitter.flush(out);
          reasoning.end(out);
          call.started = true;
          out.push({ type: 'toolCallStart', id: call.id, name: call.name });
        }
        const piece = tc.function?.arguments;
        if (piece) {
          call.args += piece;
          if (call.started) out.push({ type: 'toolCallDelta', id: call.id, argsDelta: piece });
        }
      }
      if (choice.finish_reason) finish = choice.finish_reason;
      return false;
    };
    yield* relaySse(body, { provider: this.provider, key, url: this.opts.url, signal: req.signal, complete: () => !!finish }, handle);

    const out: LlmEvent[] = [];
    splitter.flush(out);
    reasoning.end(out);
    for (const call of calls.values()) {
      if (!call.started) {
        // A server that never sent a name; still surface the call so it can be answered.
        out.push({ type: 'toolCallStart', id: call.id, name: call.name });
        if (call.args) out.push({ type: 'toolCallDelta', id: call.id, argsDelta: call.args });
      }
      out.push({ type: 'toolCallEnd', id: call.id, name: call.name, args: parseArgs(call.args) });
    }
    if (usage) out.push(usage);
    // Some compatible servers say `stop` even when they called tools.
    out.push({ type: 'finish', reason: calls.size > 0 && finish === 'stop' ? 'tool_calls' : finishFromOpenAi(finish) });
    yield* out;
  }

  /** Only called for models configured with `fim` (./fim.ts). */
  fillInMiddle(req: FimRequest): Promise<string> {
    return openAiFim({ ...this.opts, key: currentAuth(this.opts).key, auth: undefined, provider: this.provider }, req);
  }

  private body(req: LlmRequest): ChatParams {
    const messages: ChatMessage[] = [];
    if (req.system) messages.push({ role: 'system', content: req.system });
    messages.push(...withToolImagesAfter(fitImages(req.messages, OPENAI_IMAGE_LIMITS), toChatMessages, imagesMessage));
    const isOpenAi = /(^|\.)openai\.com$/.test(hostOf(this.opts.url));
    const params: ChatParams = {
      model: req.model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
      ...promptCacheFields(req, isOpenAi),
    };
    if (req.tools.length) {
      params.tools = req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }));
    }
    if (req.maxOutputTokens) {
      // OpenAI deprecated `max_tokens` (reasoning models reject it); compatible servers mostly only know it.
      if (isOpenAi) params.max_completion_tokens = req.maxOutputTokens;
      else params.max_tokens = req.maxOutputTokens;
    }
    if (req.reasoning && isOpenAi) params.reasoning_effort = 'medium';
    return params;
  }
}

function toChatMessages(m: LlmMessage): ChatMessage[] {
  switch (m.role) {
    case 'user':
      // Plain text unless images ride along: then text and image_url parts (vision input).
      if (!m.images?.length) return [{ role: 'user', content: m.content }];
      return [{ role: 'user', content: [{ type: 'text', text: m.content }, ...m.images.map(imagePart)] }];
    case 'tool':
      return [{ role: 'tool', tool_call_id: m.toolCallId, content: m.content }];
    case 'assistant': {
      const text = m.content
        .filter((p) => p.type === 'text')
        .map((p) => p.text)
        .join('');
      const toolCalls = m.content.flatMap((p) => (p.type === 'toolCall' ? [{ id: p.id, type: 'function' as const, function: { name: p.name, arguments: JSON.stringify(p.args) } }] : []));
      // Reasoning is not sent back: chat-completions servers neither need nor accept it.
      const msg: OpenAI.Chat.ChatCompletionAssistantMessageParam = { role: 'assistant', content: text || null };
      if (toolCalls.length) msg.tool_calls = toolCalls;
      else if (!text) msg.content = '';
      return [msg];
    }
  }
}

function imagePart(img: LlmImage): OpenAI.Chat.ChatCompletionContentPartImage {
  return { type: 'image_url', image_url: { url: dataUrl(img) } };
}

/** Chat-completions tool messages take only text: a tool's images follow in a user message. */
function imagesMessage(from: ToolImages[]): ChatMessage {
  return { role: 'user', content: [{ type: 'text', text: toolImagesText(from) }, ...from.flatMap((t) => t.images.map(imagePart))] };
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

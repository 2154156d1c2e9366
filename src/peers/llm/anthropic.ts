/**
 * Anthropic Messages API (`POST /v1/messages`, streamed).
 * https://docs.anthropic.com/en/api/messages-streaming
 * https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking
 *
 * Thinking blocks carry a `signature` that must go back verbatim, in order, with the
 * assistant turn that produced them (or the next request is rejected), so reasoning
 * events end with the signature and history replays it.
 */
import Anthropic from '@anthropic-ai/sdk';
import { openStream, parseData, relaySse, type SseEvent } from './sse.js';
import { type AdapterOptions, currentAuth, parseArgs } from './stream-util.js';
import { fitImages, type ImageLimits } from './image-limits.js';
import { cacheMarker, placeBreakpoints, systemBlocks } from './anthropic-cache.js';
import { type FinishReason, type LlmClient, type LlmEvent, LlmError, type LlmImage, type LlmMessage, type LlmRequest } from '../../shapes/llm.js';
import { isRecord } from '../../util/guards.js';
import { mergePayload } from '../../util/merge-payload.js';

type Params = Anthropic.MessageCreateParamsStreaming;
type Block = Anthropic.ContentBlockParam;

const DEFAULT_MAX_TOKENS = 8192;
/** The beta Anthropic's API requires for OAuth access tokens. */
const OAUTH_BETA = 'oauth-2025-04-20';
/** Anthropic's minimum thinking budget. */
const MIN_BUDGET = 1024;

type OpenBlock =
  | { kind: 'text' }
  | { kind: 'thinking'; id: string; signature: string }
  | { kind: 'redacted'; id: string; data: string }
  | { kind: 'tool'; id: string; name: string; json: string; initial: unknown }
  | { kind: 'other' };

export class AnthropicClient implements LlmClient {
  readonly api = 'anthropic' as const;
  private readonly provider: string;
  /** The SDK client of the current credential, rebuilt when it changes (a refreshed login). */
  private sdk?: { key?: string; bearer: boolean; client: Anthropic };

  constructor(private readonly opts: AdapterOptions) {
    this.provider = opts.provider ?? 'anthropic';
  }

  private client(): { key?: string; client: Anthropic } {
    const { key, bearer = false } = currentAuth(this.opts);
    if (!this.sdk || this.sdk.key !== key || this.sdk.bearer !== bearer) {
      // An OAuth access token is a bearer token (never `x-api-key`) and needs Anthropic's OAuth beta,
      // as ECA's llm_providers/anthropic.clj sends it.
      const client = new Anthropic({
        apiKey: bearer ? null : (key ?? 'no-key'),
        authToken: bearer ? (key ?? null) : null,
        ...(bearer ? { defaultHeaders: { 'anthropic-beta': OAUTH_BETA } } : {}),
        baseURL: this.opts.url,
        maxRetries: 0,
        ...(this.opts.fetch ? { fetch: this.opts.fetch } : {}),
      });
      this.sdk = { key, bearer, client };
    }
    return this.sdk;
  }

  async *stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    const { key, client } = this.client();
    const body = await openStream(() => client.messages.create(mergePayload(this.body(req), req.payload), { signal: req.signal }).asResponse(), this.provider, key, this.opts.url);

    const blocks = new Map<number, OpenBlock>();
    let input = 0;
    let cacheRead = 0;
    let cacheWrite = 0;
    let output = 0;
    let stop: string | null | undefined;
    let toolCalls = 0;

    const handle = (sse: SseEvent, out: LlmEvent[]): boolean => {
      const ev = parseData<Anthropic.RawMessageStreamEvent | { type: 'error'; error?: { type?: string; message?: string } } | { type: 'ping' }>(sse, this.provider);
      switch (ev.type) {
        case 'message_start': {
          const u = ev.message.usage;
          input = u.input_tokens ?? 0;
          cacheRead = u.cache_read_input_tokens ?? 0;
          cacheWrite = u.cache_creation_input_tokens ?? 0;
          output = u.output_tokens ?? 0;
          break;
        }
        case 'content_block_start': {
          const b = ev.content_block;
          if (b.type === 'text') {
            blocks.set(ev.index, { kind: 'text' });
            if (b.text) out.push({ type: 'text', text: b.text });
          } else if (b.type === 'thinking') {
            const id = `thinking-${ev.index}`;
            blocks.set(ev.index, { kind: 'thinking', id, signature: b.signature ?? '' });
            out.push({ type: 'reasoningStart', id });
            if (b.thinking) out.push({ type: 'reasoningDelta', id, text: b.thinking });
          } else if (b.type === 'redacted_thinking') {
            const id = `thinking-${ev.index}`;
            blocks.set(ev.index, { kind: 'redacted', id, data: b.data });
            out.push({ type: 'reasoningStart', id });
          } else if (b.type === 'tool_use') {
            blocks.set(ev.index, { kind: 'tool', id: b.id, name: b.name, json: '', initial: b.input });
            out.push({ type: 'toolCallStart', id: b.id, name: b.name });
          } else {
            // Server tools (web search, code execution…) are not requested by patchbay.
            blocks.set(ev.index, { kind: 'other' });
          }
          break;
        }
        case 'content_block_delta': {
          const b = blocks.get(ev.index);
          const d = ev.delta;
          if (d.type === 'text_delta') {
            if (d.text) out.push({ type: 'text', text: d.text });
          } else if (d.type === 'thinking_delta' && b?.kind === 'thinking') {
            if (d.thinking) out.push({ type: 'reasoningDelta', id: b.id, text: d.thinking });
          } else if (d.type === 'signature_delta' && b?.kind === 'thinking') {
            b.signature += d.signature;
          } else if (d.type === 'input_json_delta' && b?.kind === 'tool') {
            if (d.partial_json) {
              b.json += d.partial_json;
              out.push({ type: 'toolCallDelta', id: b.id, argsDelta: d.partial_json });
            }
          }
          break;
        }
        case 'content_block_stop': {
          const b = blocks.get(ev.index);
          blocks.delete(ev.index);
          if (b?.kind === 'thinking') out.push({ type: 'reasoningEnd', id: b.id, ...(b.signature ? { signature: b.signature } : {}) });
          else if (b?.kind === 'redacted') out.push({ type: 'reasoningEnd', id: b.id, redacted: b.data });
          else if (b?.kind === 'tool') {
            toolCalls++;
            const args = b.json ? parseArgs(b.json) : isRecord(b.initial) ? b.initial : {};
            out.push({ type: 'toolCallEnd', id: b.id, name: b.name, args });
          }
          break;
        }
        case 'message_delta': {
          if (ev.delta.stop_reason) stop = ev.delta.stop_reason;
          const u = ev.usage;
          // Counts in message_delta are cumulative.
          if (u.output_tokens != null) output = u.output_tokens;
          if (u.input_tokens != null) input = u.input_tokens;
          if (u.cache_read_input_tokens != null) cacheRead = u.cache_read_input_tokens;
          if (u.cache_creation_input_tokens != null) cacheWrite = u.cache_creation_input_tokens;
          break;
        }
        case 'message_stop':
          return true;
        case 'error': {
          // An error event inside the stream, e.g. overloaded_error.
          const err = (ev as { error?: { type?: string; message?: string } }).error;
          const type = err?.type ?? 'error';
          throw new LlmError(`${this.provider} stream error (${type}): ${err?.message ?? 'unknown'}`, type === 'overloaded_error' ? 529 : undefined, /overloaded|rate_limit|api_error/.test(type));
        }
      }
      return false;
    };
    yield* relaySse(body, { provider: this.provider, key, url: this.opts.url, signal: req.signal }, handle);

    const out: LlmEvent[] = [];

    // Anthropic's input_tokens exclude cache reads and writes; ours include them.
    out.push({
      type: 'usage',
      inputTokens: input + cacheRead + cacheWrite,
      outputTokens: output,
      ...(cacheRead ? { cacheReadTokens: cacheRead } : {}),
      ...(cacheWrite ? { cacheWriteTokens: cacheWrite } : {}),
    });
    out.push({ type: 'finish', reason: finishReason(stop, toolCalls) });
    yield* out;
  }

  private body(req: LlmRequest): Params {
    let maxTokens = req.maxOutputTokens ?? DEFAULT_MAX_TOKENS;
    const params: Params = { model: req.model, max_tokens: maxTokens, messages: toMessages(fitImages(req.messages, IMAGE_LIMITS)), stream: true };
    const marker = cacheMarker(req.cacheRetention, this.opts.url);
    if (req.system) params.system = marker ? systemBlocks(req.system, req.systemStableLength, marker) : req.system;
    if (req.tools.length) {
      params.tools = req.tools.map((t) => ({
        name: t.name,
        description: t.description,
        input_schema: { type: 'object', ...t.parameters } as Anthropic.Tool.InputSchema,
      }));
    }
    placeBreakpoints(params, marker, isRecord(req.payload) && !!req.payload.cache_control);
    if (req.reasoning) {
      // Half the output budget for thinking, within Anthropic's limits (≥1024, < max_tokens).
      const budget = Math.max(MIN_BUDGET, Math.min(32_000, Math.floor(maxTokens / 2)));
      if (maxTokens <= budget) maxTokens = budget + MIN_BUDGET;
      params.max_tokens = maxTokens;
      params.thinking = { type: 'enabled', budget_tokens: budget };
    }
    return params;
  }
}

function finishReason(stop: string | null | undefined, toolCalls: number): FinishReason {
  switch (stop) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'tool_use':
      return 'tool_calls';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'refusal';
    default:
      return toolCalls > 0 ? 'tool_calls' : 'other';
  }
}

function imageBlock(img: LlmImage): Anthropic.ImageBlockParam {
  // The API names the media types it takes; another one is its to refuse, with its own message.
  return { type: 'image', source: { type: 'base64', media_type: img.mediaType as Anthropic.Base64ImageSource['media_type'], data: img.base64 } };
}

/**
 * The Messages API refuses an image whose base64 is over 5 MB and a request over 32 MB in all
 * (docs.claude.com "Vision": general limits; up to 100 images a request): 24 MB of images leaves
 * the conversation's text room.
 */
const IMAGE_LIMITS: ImageLimits = { api: 'Anthropic', measure: 'base64', perImage: 5 * 1024 * 1024, perRequest: 24 * 1024 * 1024, count: 100 };

/**
 * Anthropic wants strictly alternating user/assistant turns, tool results as
 * `tool_result` blocks at the start of the next user turn, and no empty text blocks.
 */
export function toMessages(messages: LlmMessage[]): Anthropic.MessageParam[] {
  const result: Array<{ role: 'user' | 'assistant'; content: Block[] }> = [];
  const push = (role: 'user' | 'assistant', blocks: Block[], toolResult = false): void => {
    if (!blocks.length) return;
    const last = result[result.length - 1];
    if (last && last.role === role) {
      if (toolResult) {
        // tool_result blocks must precede any text in a user turn.
        const firstNonResult = last.content.findIndex((b) => b.type !== 'tool_result');
        if (firstNonResult >= 0) last.content.splice(firstNonResult, 0, ...blocks);
        else last.content.push(...blocks);
      } else last.content.push(...blocks);
    } else result.push({ role, content: [...blocks] });
  };
  for (const m of messages) {
    if (m.role === 'user') push('user', [...(m.content ? [{ type: 'text' as const, text: m.content }] : []), ...(m.images ?? []).map(imageBlock)]);
    else if (m.role === 'tool') {
      // A tool_result takes text and image blocks together (as ECA anthropic.clj sends them).
      const text = m.content || '(no output)';
      const content = m.images?.length ? [{ type: 'text' as const, text }, ...m.images.map(imageBlock)] : text;
      push('user', [{ type: 'tool_result', tool_use_id: m.toolCallId, content, ...(m.error ? { is_error: true } : {}) }], true);
    } else {
      const blocks: Block[] = [];
      for (const p of m.content) {
        if (p.type === 'text') {
          if (p.text) blocks.push({ type: 'text', text: p.text });
        } else if (p.type === 'toolCall') {
          blocks.push({ type: 'tool_use', id: p.id, name: p.name, input: p.args });
        } else if (p.redacted) {
          blocks.push({ type: 'redacted_thinking', data: p.redacted });
        } else if (p.signature) {
          blocks.push({ type: 'thinking', thinking: p.text, signature: p.signature });
        }
        // Reasoning without a signature (another provider's) cannot be replayed to Anthropic.
      }
      push('assistant', blocks);
    }
  }
  return result;
}

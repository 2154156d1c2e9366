/**
 * The one LLM interface the agent loop uses. Each wire API (openai-chat,
 * openai-responses, anthropic, ollama) is an adapter that turns an LlmRequest
 * into its wire format and its stream back into LlmEvents.
 */
import { z } from 'zod';

export type LlmApi = 'openai-chat' | 'openai-responses' | 'anthropic' | 'ollama' | 'local';

/**
 * How long the provider should keep the prompt cache (ECA's provider key `cacheRetention`):
 * `short` (the default, Anthropic's 5 minutes), `long` (Anthropic's 1 hour), `none` (no
 * cache breakpoints, no OpenAI prompt-cache key).
 */
export type CacheRetention = 'none' | 'short' | 'long';

/**
 * One part of an assistant message. A schema, because parts are stored with the chat
 * (core/chat/stored-message.ts) and read back through it.
 */
export const assistantPartSchema = z.discriminatedUnion('type', [
  /** Text. `id` is the id the front end was given for it (ACP's `messageId`); parts stored before it existed have none. */
  z.object({ type: z.literal('text'), text: z.string(), id: z.string().optional() }),
  /**
   * Reasoning. `signature` is Anthropic's thinking signature (must be replayed verbatim
   * next turn); `redacted` is Anthropic's redacted_thinking data; `encrypted` / `itemId`
   * are OpenAI responses reasoning items replayed next turn. `id` is the id the editor was given
   * for the block (ECA keeps it with the reason message, so a flag or fork can name it); parts
   * stored before it existed have none.
   */
  z.object({
    type: z.literal('reasoning'),
    text: z.string(),
    id: z.string().optional(),
    signature: z.string().optional(),
    redacted: z.string().optional(),
    itemId: z.string().optional(),
    encrypted: z.string().optional(),
  }),
  z.object({ type: z.literal('toolCall'), id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()) }),
]);
export type AssistantPart = z.infer<typeof assistantPartSchema>;

/** An image for the model: raw base64 bytes (no `data:` prefix) and their media type. A schema: stored with user messages. */
export const llmImageSchema = z.object({ mediaType: z.string(), base64: z.string() });
export type LlmImage = z.infer<typeof llmImageSchema>;

/**
 * One message of the conversation. `images` ride with a user message (attached by the user) or a
 * tool result (an MCP tool's image content); core leaves them out for a model without image input.
 */
export type LlmMessage =
  | { role: 'user'; content: string; images?: LlmImage[] }
  | { role: 'assistant'; content: AssistantPart[] }
  | { role: 'tool'; toolCallId: string; name: string; content: string; error: boolean; images?: LlmImage[] };

export interface LlmToolSpec {
  /** Name as the LLM sees it, e.g. `patchbay__read_file`. */
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  /** The provider's own model id (the config's `modelName`, else the model key). */
  model: string;
  system: string;
  /**
   * Length of the prefix of `system` that is the same for every request of the chat (the rest
   * changes): adapters put a cache breakpoint there. Unset: all of it is stable.
   */
  systemStableLength?: number;
  messages: LlmMessage[];
  tools: LlmToolSpec[];
  maxOutputTokens?: number;
  /** Ask for reasoning when the model supports it (Anthropic thinking budget, OpenAI effort). */
  reasoning?: boolean;
  signal: AbortSignal;
  /**
   * The chat asking: a local model keeps one context (KV cache) per chat, and OpenAI's
   * `prompt_cache_key` is derived from it.
   */
  chatId?: string;
  /** The model's prompt-cache setting (unset: `short`). */
  cacheRetention?: CacheRetention;
  /**
   * Fields merged over the wire body the adapter builds (objects key by key): the model's
   * `extraPayload` with the selected variant's payload over it (`shapes/variants.ts`).
   */
  payload?: Record<string, unknown>;
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'refusal' | 'other';

export type LlmEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoningStart'; id: string }
  | { type: 'reasoningDelta'; id: string; text: string }
  | { type: 'reasoningEnd'; id: string; signature?: string; redacted?: string; itemId?: string; encrypted?: string }
  | { type: 'toolCallStart'; id: string; name: string }
  | { type: 'toolCallDelta'; id: string; argsDelta: string }
  | { type: 'toolCallEnd'; id: string; name: string; args: Record<string, unknown> }
  /**
   * Once per turn, before `finish`. `inputTokens` counts every input token, cache reads and writes
   * included. `contextWindow`: the context the request really had, when the client knows it (a
   * local model's, sized per chat), over the model's `limit.context`.
   */
  | { type: 'usage'; inputTokens: number; outputTokens: number; cacheReadTokens?: number; cacheWriteTokens?: number; contextWindow?: number }
  /** Why the model stopped: `length` at the output token limit, `refusal` for a refusal or a content filter. */
  | { type: 'finish'; reason: FinishReason }
  /** Work before the answer the user should see (a local model downloading or loading). */
  | { type: 'progress'; text: string };

/**
 * What kind of failure a provider error is, when the chat can act on it: `contextOverflow` means
 * the request did not fit the model's context window (core prunes and compacts, then retries).
 */
export type LlmErrorKind = 'contextOverflow';

/** A provider error. `retryable` for 429 / 5xx / overloaded; `retryAfterMs` from headers when given. */
export class LlmError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    readonly kind?: LlmErrorKind,
  ) {
    super(message);
    this.name = 'LlmError';
  }
}

/**
 * A fill-in-the-middle request: the text before and after the cursor, for a model trained to fill
 * the gap (OpenAI-compatible `/completions` with `suffix`, Ollama `/api/generate` with `suffix`).
 */
export interface FimRequest {
  model: string;
  prompt: string;
  suffix: string;
  maxOutputTokens: number;
  signal: AbortSignal;
  payload?: Record<string, unknown>;
}

export interface LlmClient {
  readonly api: LlmApi;
  /** Streams one model turn. Throws LlmError; ends early (without throwing) only via `finish`. */
  stream(req: LlmRequest): AsyncIterable<LlmEvent>;
  /** The text that fills the gap; only APIs that have a FIM endpoint implement it. Throws LlmError. */
  fillInMiddle?(req: FimRequest): Promise<string>;
  /** The chat ended: drop what is held for it (a local model's context). */
  release?(chatId: string): void;
  /** The server is stopping: free what the client holds (a loaded local model). */
  dispose?(): Promise<void>;
}

/** Price in USD per million tokens. */
export interface ModelCost {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** One model the user can pick: `"<provider>/<model>"`. */
export interface ModelEntry {
  /** Full id shown to editors, `"<provider>/<model>"`. */
  id: string;
  provider: string;
  api: LlmApi;
  /** The id sent on the wire. */
  modelName: string;
  url: string;
  /** Never logged. */
  key?: string;
  limit?: { context: number; output: number };
  cost?: ModelCost;
  /** The model reads images (ECA's `imageInput`); without it, images are left out and the user is told. */
  imageInput?: boolean;
  /** Named request payloads (ECA's variants, e.g. reasoning effort): built-in ones with the config's over them. */
  variants?: Record<string, Record<string, unknown>>;
  /** Fields added to every request of this model (ECA's `extraPayload`). */
  extraPayload?: Record<string, unknown>;
  /** The model fills in the middle (config `fim`): inline completion uses the API's FIM endpoint. */
  fim?: boolean;
  /** Prompt caching (the model's `cacheRetention`, else its provider's); unset: `short`. */
  cacheRetention?: CacheRetention;
  /** Local models (`providers.local.models.<name>`): where the GGUF file comes from and how to run it. */
  local?: {
    /** `hf:<user>/<repo>/<file.gguf>`, an https URL, or a file path. */
    model: string;
    contextSize?: number;
    /** Layers to offload to the GPU: a number, or "auto" / "max". */
    gpuLayers?: number | 'auto' | 'max';
    /** Expected sha256 of the file (else the server's checksum header is used). */
    sha256?: string;
  };
}

/**
 * The built-in local model: GGUF files run in-process by node-llama-cpp (an optional
 * dependency; its prebuilt CPU binary loads in a fraction of a second, GPU builds are used
 * when the machine has one). Same `LlmClient` interface as the cloud adapters, so the agent
 * loop, approvals and every peer work unchanged.
 *
 * - Lazy and once per process: the library loads on the first request; one model is loaded
 *   at a time (asking for another waits for running generations, then swaps).
 * - A chat gets its own context (KV cache, so the next turn only evaluates what is new); at
 *   most MAX_CONTEXTS are kept, the least recently used idle one is disposed first, and a
 *   chat's context is disposed when the chat ends (`release`).
 * - Tool calls use the library's function calling for the model's chat template: the
 *   functions are declared (their JSON Schema narrowed to the subset its grammar supports),
 *   generation stops at the model's calls, and they come back as toolCall events. Results go
 *   back in as the `result` of the function-call items of the history.
 */
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, GbnfJsonSchema, Llama, LlamaChat, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { importModule } from '../../util/import-module.js';
import { errorMessage, logger } from '../../util/log.js';
import { abortError } from './errors.js';
import { ensureModel, resolveModelUri, type DownloadProgress } from './local-models.js';
import { LlmError, type LlmClient, type LlmEvent, type LlmMessage, type LlmRequest, type LlmToolSpec } from './types.js';

const log = logger('llm');

type NodeLlamaCpp = typeof import('node-llama-cpp');

/** `providers.local.models.<name>` in the config. */
export interface LocalModelSpec {
  /** `hf:<user>/<repo>/<file.gguf>`, an https URL, or a file path. */
  model: string;
  contextSize?: number;
  /** Layers to offload to the GPU: a number, or "auto" / "max". */
  gpuLayers?: number | 'auto' | 'max';
  /** Expected sha256 of the file (else the server's checksum header is used). */
  sha256?: string;
}

const MAX_CONTEXTS = 2;
const DEFAULT_CONTEXT_SIZE = 8192;

interface ChatSlot {
  chatId: string;
  context: LlamaContext;
  chat: LlamaChat;
  busy: boolean;
  usedAt: number;
}

/** The library, the loaded model and the chats' contexts: one per process. */
export class LocalRuntime {
  private lib: Promise<NodeLlamaCpp> | undefined;
  private llama: Promise<Llama> | undefined;
  private loaded: { path: string; gpuLayers: LocalModelSpec['gpuLayers']; model: Promise<LlamaModel> } | undefined;
  private readonly slots = new Map<string, ChatSlot>();
  private running = 0;
  private idleWaiters: Array<() => void> = [];

  library(): Promise<NodeLlamaCpp> {
    this.lib ??= (importModule('node-llama-cpp') as Promise<NodeLlamaCpp>).catch((e: unknown) => {
      this.lib = undefined;
      throw new LlmError(`The local model needs node-llama-cpp, which did not load (${errorMessage(e)}). Install it with: npm install node-llama-cpp`, undefined, false);
    });
    return this.lib;
  }

  private async getLlama(): Promise<Llama> {
    this.llama ??= this.library().then((lib) =>
      lib.getLlama({ build: 'never', gpu: 'auto', logLevel: lib.LlamaLogLevel.error, logger: (level, text) => log.debug(`llama.cpp ${level}: ${text.trim()}`) }),
    );
    this.llama.catch(() => (this.llama = undefined));
    return this.llama;
  }

  /** True when `path` is the model in memory now. */
  isLoaded(path: string): boolean {
    return this.loaded?.path === path;
  }

  /** The model at `path`, loading it (and unloading another) when needed. */
  async model(path: string, spec: LocalModelSpec, onProgress?: (fraction: number) => void): Promise<LlamaModel> {
    if (this.loaded && this.loaded.path === path) return this.loaded.model;
    if (this.loaded) await this.unload();
    const llama = await this.getLlama();
    const model = llama.loadModel({ modelPath: path, gpuLayers: spec.gpuLayers ?? 'auto', onLoadProgress: onProgress });
    this.loaded = { path, gpuLayers: spec.gpuLayers, model };
    model.catch(() => {
      if (this.loaded?.model === model) this.loaded = undefined;
    });
    return model;
  }

  /** A chat's context and LlamaChat; marks it busy until `done(slot)`. */
  async acquire(chatId: string, model: LlamaModel, contextSize: number): Promise<ChatSlot> {
    let slot = this.slots.get(chatId);
    if (slot?.busy) throw new LlmError(`chat ${chatId} already has a local generation running`, undefined, false);
    if (!slot) {
      await this.evictIdle(MAX_CONTEXTS - 1);
      const lib = await this.library();
      const context = await model.createContext({ contextSize: { max: Math.min(contextSize, model.trainContextSize) }, threads: threadsFor(model) });
      slot = { chatId, context, chat: new lib.LlamaChat({ contextSequence: context.getSequence() }), busy: false, usedAt: 0 };
      this.slots.set(chatId, slot);
    }
    slot.busy = true;
    slot.usedAt = Date.now();
    this.running++;
    return slot;
  }

  done(slot: ChatSlot): void {
    slot.busy = false;
    this.running--;
    if (this.running === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Disposes a chat's context (the chat ended or was cleared). */
  async release(chatId: string): Promise<void> {
    const slot = this.slots.get(chatId);
    if (!slot || slot.busy) return;
    this.slots.delete(chatId);
    await disposeSlot(slot);
  }

  /** Contexts held now (for tests and `doctor`). */
  contexts(): string[] {
    return [...this.slots.keys()];
  }

  private async evictIdle(keep: number): Promise<void> {
    const idle = [...this.slots.values()].filter((s) => !s.busy).sort((a, b) => a.usedAt - b.usedAt);
    while (this.slots.size > keep && idle.length) {
      const slot = idle.shift()!;
      this.slots.delete(slot.chatId);
      await disposeSlot(slot);
    }
  }

  /** Waits for running generations, then frees every context and the model. */
  async unload(): Promise<void> {
    while (this.running > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    await this.evictIdle(0);
    const loaded = this.loaded;
    this.loaded = undefined;
    if (loaded) await (await loaded.model.catch(() => undefined))?.dispose();
  }

  async dispose(): Promise<void> {
    await this.unload();
    const llama = this.llama;
    this.llama = undefined;
    if (llama) await (await llama.catch(() => undefined))?.dispose();
  }
}

/**
 * A tiny model's matrices are too small to split: threads would spend the time waiting on
 * each other (40 tokens: 0.04 s on one thread, 0.7 s on two on a 2-core machine). Larger
 * models get the library's own choice.
 */
function threadsFor(model: LlamaModel): number | undefined {
  return model.size < 64 * 1024 * 1024 ? 1 : undefined;
}

async function disposeSlot(slot: ChatSlot): Promise<void> {
  try {
    slot.chat.dispose();
    await slot.context.dispose();
  } catch (e) {
    log.debug(`disposing a local context: ${errorMessage(e)}`);
  }
}

/** The process's one runtime. */
export const localRuntime = new LocalRuntime();

export interface LocalClientOptions {
  spec: LocalModelSpec;
  /** PATCHBAY_HOME: downloads are cached under `<home>/models`. */
  home: string;
  runtime?: LocalRuntime;
}

export class LocalClient implements LlmClient {
  readonly api = 'local' as const;
  private readonly runtime: LocalRuntime;

  constructor(private readonly opts: LocalClientOptions) {
    this.runtime = opts.runtime ?? localRuntime;
  }

  release(chatId: string): void {
    void this.runtime.release(chatId);
  }

  dispose(): Promise<void> {
    return this.runtime.dispose();
  }

  stream(req: LlmRequest): AsyncIterable<LlmEvent> {
    const queue = new EventQueue();
    this.generate(req, (ev) => queue.push(ev)).then(
      () => queue.end(),
      (e: unknown) => queue.fail(e),
    );
    return queue;
  }

  private async generate(req: LlmRequest, emit: (ev: LlmEvent) => void): Promise<void> {
    const { spec, home } = this.opts;
    const { signal } = req;
    const name = resolveModelUri(spec.model, home).name;
    let lastShown = 0;
    const onDownload = (p: DownloadProgress) => {
      const now = Date.now();
      if (now - lastShown < 250 && p.received !== p.total) return;
      lastShown = now;
      emit({ type: 'progress', text: downloadText(name, p) });
    };
    let path: string;
    try {
      path = await ensureModel({ uri: spec.model, sha256: spec.sha256 }, home, { signal, onProgress: onDownload });
    } catch (e) {
      if (signal.aborted) throw abortError();
      throw new LlmError(`Could not get the local model ${spec.model}: ${errorMessage(e)}`, undefined, false);
    }
    signal.throwIfAborted();
    if (!this.runtime.isLoaded(path)) emit({ type: 'progress', text: `Loading local model ${name}…` });
    let model: LlamaModel;
    try {
      model = await this.runtime.model(path, spec);
    } catch (e) {
      throw e instanceof LlmError ? e : new LlmError(`Could not load the local model ${path}: ${errorMessage(e)}`, undefined, false);
    }
    signal.throwIfAborted();
    const slot = await this.runtime.acquire(req.chatId ?? 'default', model, spec.contextSize ?? DEFAULT_CONTEXT_SIZE);
    try {
      const meter = slot.chat.sequence.tokenMeter;
      const before = { input: meter.usedInputTokens, output: meter.usedOutputTokens };
      const functions = toFunctions(req.tools);
      const res = await slot.chat.generateResponse(toHistory(req.system, req.messages), {
        ...(functions ? { functions } : {}),
        onTextChunk: (text) => text && emit({ type: 'text', text }),
        signal,
        stopOnAbortSignal: true,
        // At most half the context: the rest holds the conversation.
        maxTokens: Math.min(req.maxOutputTokens ?? Infinity, Math.floor(slot.context.contextSize / 2)),
      });
      if (signal.aborted) throw abortError();
      let n = 0;
      for (const call of res.functionCalls ?? []) {
        const id = `local_${Date.now().toString(36)}_${n++}`;
        const args = call.params && typeof call.params === 'object' ? (call.params as Record<string, unknown>) : {};
        emit({ type: 'toolCallStart', id, name: call.functionName });
        emit({ type: 'toolCallDelta', id, argsDelta: JSON.stringify(args) });
        emit({ type: 'toolCallEnd', id, name: call.functionName, args });
      }
      emit({
        type: 'usage',
        inputTokens: meter.usedInputTokens - before.input,
        outputTokens: meter.usedOutputTokens - before.output,
      });
      const stop = res.metadata.stopReason;
      emit({ type: 'finish', reason: n > 0 ? 'tool_calls' : stop === 'maxTokens' ? 'length' : 'stop' });
    } finally {
      this.runtime.done(slot);
    }
  }
}

function downloadText(name: string, p: DownloadProgress): string {
  const mb = (b: number) => `${(b / 1e6).toFixed(b < 1e7 ? 1 : 0)} MB`;
  if (!p.total) return `Downloading ${name}: ${mb(p.received)}`;
  return `Downloading ${name}: ${Math.floor((100 * p.received) / p.total)}% (${mb(p.received)} of ${mb(p.total)})`;
}

/** Our messages as node-llama-cpp's chat history; a tool result joins its call as `result`. */
export function toHistory(system: string, messages: LlmMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = system ? [{ type: 'system', text: system }] : [];
  const calls = new Map<string, ChatModelFunctionCall>();
  for (const m of messages) {
    if (m.role === 'user') {
      history.push({ type: 'user', text: m.content });
    } else if (m.role === 'assistant') {
      const response: Array<string | ChatModelFunctionCall> = [];
      for (const p of m.content) {
        if (p.type === 'text' && p.text) response.push(p.text);
        else if (p.type === 'toolCall') {
          const call: ChatModelFunctionCall = { type: 'functionCall', name: p.name, params: p.args, result: '' };
          calls.set(p.id, call);
          response.push(call);
        }
      }
      history.push({ type: 'model', response });
    } else {
      const call = calls.get(m.toolCallId);
      if (call) call.result = m.error ? `Error: ${m.content}` : m.content;
      else history.push({ type: 'user', text: `Result of ${m.name}:\n${m.content}` });
    }
  }
  // The history must end with something the model answers: a user message or a function result.
  return history;
}

export function toFunctions(tools: LlmToolSpec[]): ChatModelFunctions | undefined {
  if (!tools.length) return undefined;
  const out: Record<string, { description: string; params: GbnfJsonSchema }> = {};
  for (const t of tools) out[t.name] = { description: t.description, params: toGbnfSchema(t.parameters) };
  return out;
}

const ANY: GbnfJsonSchema = { type: ['string', 'number', 'boolean', 'null'] };
const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * A tool's JSON Schema narrowed to what the library's grammar can enforce: objects,
 * arrays, scalars, enums, consts and oneOf/anyOf; anything else becomes "any scalar".
 */
export function toGbnfSchema(schema: unknown): GbnfJsonSchema {
  if (!schema || typeof schema !== 'object') return ANY;
  const s = schema as Record<string, unknown>;
  const description = typeof s.description === 'string' ? { description: s.description } : {};
  if (Array.isArray(s.enum)) {
    const values = s.enum.filter((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v)) as Array<string | number | boolean | null>;
    if (values.length) return { enum: values, ...description };
  }
  if ('const' in s && (s.const === null || ['string', 'number', 'boolean'].includes(typeof s.const))) {
    return { const: s.const as string | number | boolean | null, ...description };
  }
  const alternatives = (Array.isArray(s.oneOf) ? s.oneOf : Array.isArray(s.anyOf) ? s.anyOf : undefined) as unknown[] | undefined;
  if (alternatives?.length) return { oneOf: alternatives.map(toGbnfSchema), ...description };
  const type = Array.isArray(s.type) ? s.type.filter((t) => SCALARS.has(t as string)) : s.type;
  if (type === 'object' || (type === undefined && s.properties && typeof s.properties === 'object')) {
    const props = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Record<string, unknown>;
    const properties: Record<string, GbnfJsonSchema> = {};
    for (const [k, v] of Object.entries(props)) properties[k] = toGbnfSchema(v);
    const required = Array.isArray(s.required) ? s.required.filter((k): k is string => typeof k === 'string' && k in properties) : [];
    return { type: 'object', properties, required, ...description } as GbnfJsonSchema;
  }
  if (type === 'array') return { type: 'array', items: s.items ? toGbnfSchema(s.items) : ANY, ...description } as GbnfJsonSchema;
  if (typeof type === 'string' && SCALARS.has(type)) return { type: type as 'string', ...description };
  if (Array.isArray(type) && type.length) return { type: type as Array<'string'>, ...description };
  return { ...ANY, ...description };
}

/** Events pushed by callbacks, pulled by `for await`. */
class EventQueue implements AsyncIterable<LlmEvent> {
  private readonly items: LlmEvent[] = [];
  private wake: (() => void) | undefined;
  private ended = false;
  private error: unknown;

  push(ev: LlmEvent): void {
    this.items.push(ev);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  fail(e: unknown): void {
    this.error = e ?? new Error('local generation failed');
    this.end();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LlmEvent> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
        continue;
      }
      if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await new Promise<void>((r) => (this.wake = r));
      this.wake = undefined;
    }
  }
}

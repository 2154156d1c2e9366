/**
 * The built-in local model: GGUF files run in-process by node-llama-cpp (an optional
 * dependency; its prebuilt CPU binary loads in a fraction of a second, GPU builds are used
 * when the machine has one). Same `LlmClient` interface as the cloud adapters, so the agent
 * loop, approvals and every peer work unchanged.
 *
 * - Lazy and once per process: the library loads on the first request; one model is loaded
 *   at a time (asking for another waits for running generations, then swaps).
 * - A chat gets its own context (KV cache, so the next turn only evaluates what is new); at
 *   most MAX_CONTEXTS exist (a request waits for one; the least recently used idle one is
 *   disposed first), a chat's context is disposed when the chat ends (`release`), and a
 *   request without a chat (a title) gets a context of its own for its one turn.
 * - A context's size: the config's `contextSize` when it names one; else it starts at the
 *   model's `limit.context` (8192) and is made big enough for the prompt (as the chat template
 *   renders it, tool definitions included) and a reply, up to MAX_AUTO_CONTEXT_SIZE and what
 *   the model was trained for; a later, longer prompt of the chat gets a bigger context. The
 *   size it got goes out with the usage (the context gauge). A prompt that cannot fit is a
 *   context overflow, not a failure inside the library.
 * - Tool calls use the library's function calling for the model's chat template: the
 *   functions are declared (their JSON Schema narrowed to the subset its grammar supports,
 *   optional parameters as "value or null"), the parameters stream as toolCallDelta while the
 *   model writes them, and generation stops at the model's calls. Results go back in as the
 *   `result` of the function-call items of the history.
 */
import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, ChatWrapper, GbnfJsonSchema, Llama, LlamaChat, LlamaContext, LlamaModel } from 'node-llama-cpp';
import { importModule } from '../../util/import-module.js';
import { errorMessage, logger } from '../../util/log.js';
import { underDeadline } from '../../util/deadline.js';
import { abortError } from './errors.js';
import { installAdvice, missingLibraryMessage, packageRoot } from './local-library.js';
import { describeDownload, ensureModel, resolveModelUri } from './local-models.js';
import { connectionFailure } from './net-errors.js';
import { offlineHint } from './offline-hint.js';
import { LlmError, type LlmClient, type LlmEvent, type LlmMessage, type LlmRequest, type LlmToolSpec, type ModelEntry } from '../../shapes/llm.js';

const log = logger('llm');

type NodeLlamaCpp = typeof import('node-llama-cpp');

/** `providers.local.models.<name>` in the config (documented on ModelEntry.local). */
export type LocalModelSpec = NonNullable<ModelEntry['local']>;

/** What else works when the local model cannot run. */
const OTHER_MODELS = 'Or use another model: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or OLLAMA_API_URL for a running Ollama.';

const MAX_CONTEXTS = 2;
/** A progress note after this long without any event (the stall guard gives up after 120 s). */
const HEARTBEAT_MS = 15_000;
/** The context a chat starts with when neither `contextSize` nor the model's `limit.context` says. */
const DEFAULT_CONTEXT_SIZE = 8192;
/** A context that grows to fit its prompt grows at most to this (or the model's trained context). */
export const MAX_AUTO_CONTEXT_SIZE = 32_768;
/** Tokens kept free for the reply when a context is sized, unless the request asks for fewer. */
const REPLY_TOKENS = 2048;
/** A prompt that leaves less than this free in its context is refused (there is no room to answer). */
const MIN_REPLY_TOKENS = 256;

/**
 * The context size to ask node-llama-cpp for (it may give less when memory is short, never less than
 * `min`). A `fixed` size (the config's `contextSize`) is used as it is, up to what the model was
 * trained for. Otherwise the context starts at `start` and grows, in steps of 1024 tokens, to hold
 * the prompt and the reply budget (`needed`), up to MAX_AUTO_CONTEXT_SIZE and the trained context.
 */
export function contextSizeFor(o: { fixed?: number; start: number; needed: number; train: number }): { min: number; max: number } {
  const train = o.train > 0 ? o.train : Infinity;
  if (o.fixed !== undefined) {
    const max = Math.min(o.fixed, train);
    return { min: Math.min(o.needed, max), max };
  }
  const cap = Math.min(MAX_AUTO_CONTEXT_SIZE, train);
  const max = Math.min(cap, Math.max(o.start, Math.ceil(o.needed / 1024) * 1024));
  return { min: Math.min(o.needed, max), max };
}

/** What one request must fit into its context: its prompt (rendered by the model's chat template) and a reply. */
interface PromptFit {
  history: ChatHistoryItem[];
  functions: ChatModelFunctions | undefined;
  replyTokens: number;
  /** `contextSize` from the config: the context is this size and never grows. */
  fixed?: number;
  /** Where a context that grows to fit starts. */
  start: number;
}

interface ChatSlot {
  /** The chat's id; requests without one get a temporary slot, disposed when done. */
  key: string;
  temporary: boolean;
  context: LlamaContext;
  chat: LlamaChat;
  busy: boolean;
  usedAt: number;
  /** The chat ended while this slot was busy: dispose it when the generation is done. */
  released: boolean;
  /** The tokens of the prompt it was acquired for (the chat template's rendering of it). */
  promptTokens: number;
}

interface AcquireRequest {
  path: string;
  spec: LocalModelSpec;
  chatId?: string;
  signal: AbortSignal;
  onLoad?: (fraction: number) => void;
  /** The request's prompt, which the chat's context must hold. */
  fit: PromptFit;
}

/** How long shutdown waits for running generations before freeing the model anyway. */
const UNLOAD_WAIT_MS = 3_000;

/**
 * The library, the loaded model and the chats' contexts: one per process. Every change of
 * that state (loading, swapping the model, making or taking a context) happens inside one
 * queue, so two requests never load twice, a model is never freed under a running
 * generation, and no more than MAX_CONTEXTS contexts ever exist (a request waits for one).
 */
export class LocalRuntime {
  private lib: Promise<NodeLlamaCpp> | undefined;
  private llama: Promise<Llama> | undefined;
  private loaded: { path: string; model: LlamaModel; wrapper?: ChatWrapper } | undefined;
  /**
   * The load under way. It belongs to no request: an inline completion superseded on the next
   * keystroke (or its 30 s timeout) only stops waiting, and the next request waits for the same
   * load; aborting it would restart a multi-second load on every keystroke and never finish.
   */
  private loading: { path: string; model: Promise<LlamaModel>; watchers: Set<(fraction: number) => void> } | undefined;
  private readonly slots = new Map<string, ChatSlot>();
  /** Generations holding the loaded model, from `acquire` to `done`. */
  private users = 0;
  private waiters: Array<() => void> = [];
  private queue: Promise<unknown> = Promise.resolve();
  private temporaries = 0;

  library(): Promise<NodeLlamaCpp> {
    this.lib ??= (importModule('node-llama-cpp') as Promise<NodeLlamaCpp>).catch((e: unknown) => {
      this.lib = undefined;
      // Not installed (an install with --omit=optional, or its optional install failed): say how
      // to add it where patchbay can import it. Installed but broken: say what broke.
      const missing = (e as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND' ? missingLibraryMessage() : undefined;
      if (missing) throw new LlmError(`${missing}\n${OTHER_MODELS}`, undefined, false);
      throw new LlmError(`The local model needs node-llama-cpp, which did not load (${errorMessage(e)}). Reinstall it: ${installAdvice(packageRoot())}`, undefined, false);
    });
    return this.lib;
  }

  private getLlama(): Promise<Llama> {
    this.llama ??= this.library().then((lib) =>
      lib.getLlama({ build: 'never', gpu: 'auto', logLevel: lib.LlamaLogLevel.error, logger: (level, text) => log.debug(`llama.cpp ${level}: ${text.trim()}`) }),
    );
    this.llama.catch(() => (this.llama = undefined));
    return this.llama;
  }

  /**
   * The model at `path` (loaded, or swapped in once the generations on another model are
   * done) and the chat's context, marked busy until `done(slot)`. Waits while the chat's own
   * context is busy or every context is. `onLoad` is told before a load and as it progresses.
   */
  acquire(req: AcquireRequest): Promise<ChatSlot> {
    const run = this.queue.then(() => this.acquireNow(req));
    this.queue = run.catch(() => {});
    return run;
  }

  private async acquireNow(req: AcquireRequest): Promise<ChatSlot> {
    const { signal } = req;
    for (;;) {
      if (signal.aborted) throw abortError(signal.reason);
      if (this.loaded?.path !== req.path) {
        if (this.users > 0) {
          await this.nextDone(signal);
          continue;
        }
        if (this.loading && this.loading.path !== req.path) {
          // Another model is loading for a request that gave up: let it land, then swap.
          await untilAborted(
            this.loading.model.catch(() => {}),
            signal,
          );
          continue;
        }
        req.onLoad?.(0);
        if (!this.loading) {
          await this.unloadNow();
          const watchers = new Set<(fraction: number) => void>();
          this.loading = { path: req.path, model: this.load(req, watchers), watchers };
        }
        // Progress goes to the requests waiting now, not to one that gave up.
        const { model, watchers } = this.loading;
        if (req.onLoad) watchers.add(req.onLoad);
        try {
          await untilAborted(model, signal);
        } finally {
          if (req.onLoad) watchers.delete(req.onLoad);
        }
        req.onLoad?.(1);
        continue;
      }
      const model = this.loaded.model;
      const existing = req.chatId === undefined ? undefined : this.slots.get(req.chatId);
      if (existing?.busy) {
        await this.nextDone(signal);
        continue;
      }
      const lib = await this.library();
      const promptTokens = this.promptTokens(lib, req.fit);
      const size = contextSizeFor({ fixed: req.fit.fixed, start: req.fit.start, needed: promptTokens + req.fit.replyTokens, train: model.trainContextSize });
      let slot = existing;
      // The chat's context is too small for this prompt and may grow: a bigger one replaces it
      // (its cache is lost; the prompt is read again).
      if (slot && req.fit.fixed === undefined && slot.context.contextSize < size.min) {
        this.slots.delete(slot.key);
        await disposeSlot(slot);
        slot = undefined;
      }
      if (!slot) {
        await this.evictIdle(MAX_CONTEXTS - 1);
        if (this.slots.size >= MAX_CONTEXTS) {
          await this.nextDone(signal); // every context is busy
          continue;
        }
        const context = await model.createContext({ contextSize: size, threads: threadsFor(model), createSignal: signal });
        log.debug(`local context for ${req.chatId ?? 'a request'}: ${context.contextSize} tokens (asked ${size.min}–${size.max}; prompt ${promptTokens})`);
        const key = req.chatId ?? `~temporary-${++this.temporaries}`;
        slot = { key, temporary: req.chatId === undefined, context, chat: new lib.LlamaChat({ contextSequence: context.getSequence() }), busy: false, usedAt: 0, released: false, promptTokens };
        this.slots.set(key, slot);
      }
      slot.promptTokens = promptTokens;
      slot.busy = true;
      slot.usedAt = Date.now();
      this.users++;
      return slot;
    }
  }

  /** The prompt's tokens as the loaded model's chat template renders it, tool definitions included. */
  private promptTokens(lib: NodeLlamaCpp, fit: PromptFit): number {
    const loaded = this.loaded!;
    try {
      loaded.wrapper ??= lib.resolveChatWrapper(loaded.model);
      const { contextText } = loaded.wrapper.generateContextState({ chatHistory: fit.history, ...(fit.functions ? { availableFunctions: fit.functions } : {}) });
      return contextText.tokenize(loaded.model.tokenizer).length;
    } catch (e) {
      // A template that cannot render this history: the plain text, which the template only frames.
      log.debug(`counting the prompt's tokens with the chat template: ${errorMessage(e)}`);
      return loaded.model.tokenize(JSON.stringify(fit.history) + JSON.stringify(fit.functions ?? {})).length;
    }
  }

  /** Loads the model with no request's signal; on success it is the loaded one (unless shutdown came first). */
  private load(req: { path: string; spec: LocalModelSpec }, watchers: Set<(fraction: number) => void>): Promise<LlamaModel> {
    const onLoadProgress = (f: number): void => watchers.forEach((w) => w(f));
    const model = this.getLlama().then((llama) => llama.loadModel({ modelPath: req.path, gpuLayers: req.spec.gpuLayers ?? 'auto', onLoadProgress }));
    model.then(
      (m) => {
        if (this.loading?.model !== model) return void m.dispose().catch(() => {});
        this.loading = undefined;
        this.loaded = { path: req.path, model: m };
      },
      () => {
        if (this.loading?.model === model) this.loading = undefined;
      },
    );
    return model;
  }

  done(slot: ChatSlot): void {
    slot.busy = false;
    this.users--;
    if (slot.temporary || slot.released) {
      this.slots.delete(slot.key);
      void disposeSlot(slot);
    }
    for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves at the next `done`; rejects when `signal` aborts first. */
  private nextDone(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(abortError(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  /** Frees a chat's context (the chat ended): now, or when its generation is done. */
  async release(chatId: string): Promise<void> {
    const slot = this.slots.get(chatId);
    if (!slot) return;
    if (slot.busy) {
      slot.released = true;
      return;
    }
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
      this.slots.delete(slot.key);
      await disposeSlot(slot);
    }
  }

  /** Frees every idle context and the model (only called with no generation running). */
  private async unloadNow(): Promise<void> {
    await this.evictIdle(0);
    const loaded = this.loaded;
    this.loaded = undefined;
    await loaded?.model.dispose();
  }

  /** Shutdown: waits (boundedly) for running generations, then frees everything. */
  async dispose(): Promise<void> {
    // A load under way is let finish and then freed (a load cannot be cut short without its signal).
    const loading = this.loading;
    this.loading = undefined;
    if (loading) await loading.model.catch(() => {}); // load() frees it: it is no longer `loading`
    await underDeadline(UNLOAD_WAIT_MS, [], async (signal) => {
      while (this.users > 0 && !signal.aborted) await this.nextDone(signal).catch(() => {});
    });
    await Promise.race([this.queue, new Promise((r) => setTimeout(r, UNLOAD_WAIT_MS).unref())]);
    for (const slot of this.slots.values()) slot.busy = false;
    await this.unloadNow().catch((e: unknown) => log.debug(`freeing the local model: ${errorMessage(e)}`));
    const llama = this.llama;
    this.llama = undefined;
    if (llama) await (await llama.catch(() => undefined))?.dispose();
  }
}

/** `p`, or an AbortError as soon as `signal` aborts (`p` itself goes on). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
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
  /** The model's name in the config (`qwen2.5-coder-1.5b`), for `patchbay models pull <name>` in errors. */
  name?: string;
  /** PATCHBAY_HOME: downloads are cached under `<home>/models`. */
  home: string;
  /** The size a chat's context starts at when `spec.contextSize` does not fix it (the model's `limit.context`). */
  startContextSize?: number;
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

  private async generate(req: LlmRequest, emitEvent: (ev: LlmEvent) => void): Promise<void> {
    const { spec, home } = this.opts;
    const { signal } = req;
    const name = resolveModelUri(spec.model, home).name;
    // Long silent stretches (reading a long prompt on a CPU) would look like a stalled stream:
    // say what is happening when nothing else was said for a while.
    let lastEmit = Date.now();
    const emit = (ev: LlmEvent) => {
      lastEmit = Date.now();
      emitEvent(ev);
    };
    const heartbeat = setInterval(() => {
      if (Date.now() - lastEmit >= HEARTBEAT_MS) emit({ type: 'progress', text: `The local model ${name} is working…` });
    }, HEARTBEAT_MS / 3);
    heartbeat.unref();
    try {
      let lastShown = 0;
      const throttled = (text: string, final: boolean) => {
        const now = Date.now();
        if (now - lastShown < 250 && !final) return;
        lastShown = now;
        emit({ type: 'progress', text });
      };
      /** Whether a download or a load was shown: the last progress then says the model is at work. */
      let shown = false;
      // The library first: without it a download (about a gigabyte for the default model) is wasted.
      await this.runtime.library();
      let path: string;
      try {
        path = await ensureModel({ uri: spec.model, sha256: spec.sha256 }, home, {
          signal,
          onProgress: (p) => ((shown = true), throttled(describeDownload(name, p), p.received === p.total)),
        });
      } catch (e) {
        if (signal.aborted) throw abortError(signal.reason);
        const failed = `Could not get the local model ${spec.model.replace(/\?.*$/, '?…')}: ${errorMessage(e)}`;
        // Unreachable (offline, DNS, refused): say what else works, not only what broke.
        const hint = connectionFailure(e) ? `\n${offlineHint({ model: this.opts.name, home })}` : '';
        throw new LlmError(failed + hint, undefined, false);
      }
      const fit: PromptFit = {
        history: toHistory(req.system, req.messages),
        functions: toFunctions(req.tools),
        replyTokens: Math.max(MIN_REPLY_TOKENS, Math.min(req.maxOutputTokens ?? REPLY_TOKENS, REPLY_TOKENS)),
        ...(spec.contextSize !== undefined ? { fixed: spec.contextSize } : {}),
        start: this.opts.startContextSize ?? DEFAULT_CONTEXT_SIZE,
      };
      let slot: ChatSlot;
      try {
        slot = await this.runtime.acquire({
          path,
          spec,
          chatId: req.chatId,
          signal,
          fit,
          onLoad: (f) => ((shown = true), throttled(`Loading local model ${name}…${f > 0 ? ` ${Math.floor(f * 100)}%` : ''}`, f === 0 || f === 1)),
        });
      } catch (e) {
        if (signal.aborted) throw abortError(signal.reason);
        throw e instanceof LlmError ? e : new LlmError(`Could not load the local model ${path}: ${errorMessage(e)}`, undefined, false);
      }
      // Loaded: reading the prompt comes next, which on a CPU can take a while; "Loading… 100%"
      // must not stay up meanwhile.
      if (shown) emit({ type: 'progress', text: 'Thinking…' });
      try {
        const overflow = this.overflow(slot, spec);
        if (overflow) throw overflow;
        await this.respond(slot, req, fit, emit);
      } finally {
        this.runtime.done(slot);
      }
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * A prompt longer than the context it got cannot be answered (node-llama-cpp would fail with
   * "the default context shift strategy did not return a history that fits"): a context overflow,
   * which the chat answers by pruning and compacting, with what the user can change.
   */
  private overflow(slot: ChatSlot, spec: LocalModelSpec): LlmError | undefined {
    const size = slot.context.contextSize;
    if (slot.promptTokens + MIN_REPLY_TOKENS <= size) return undefined;
    const train = slot.context.model.trainContextSize;
    const key = `providers.local.models.${this.opts.name ?? '<name>'}.contextSize`;
    const change =
      spec.contextSize !== undefined
        ? `raise ${key} (this model was trained for ${train} tokens)`
        : train > size
          ? `set ${key} to give it more (this model was trained for ${train} tokens; memory allowing)`
          : `that is all this model was trained for`;
    return new LlmError(
      `The prompt is ${slot.promptTokens} tokens (system prompt, tool definitions and messages): with a reply it does not fit the local model's context of ${size} tokens; ${change}.`,
      undefined,
      false,
      undefined,
      'contextOverflow',
    );
  }

  /** One model turn on a held context: text and tool calls as they are generated, then usage. */
  private async respond(slot: ChatSlot, req: LlmRequest, fit: PromptFit, emit: (ev: LlmEvent) => void): Promise<void> {
    const { signal } = req;
    const meter = slot.chat.sequence.tokenMeter;
    const evaluatedBefore = meter.usedInputTokens;
    const outputBefore = meter.usedOutputTokens;
    const functions = fit.functions;
    // Tool calls stream as they are written: the call opens with its first params chunk.
    const ids: string[] = [];
    const idOf = (index: number, name: string) => {
      if (!ids[index]) {
        ids[index] = `local_${Date.now().toString(36)}_${index}`;
        emit({ type: 'toolCallStart', id: ids[index], name });
      }
      return ids[index];
    };
    let res;
    try {
      res = await slot.chat.generateResponse(fit.history, {
        ...(functions ? { functions } : {}),
        onTextChunk: (text) => text && emit({ type: 'text', text }),
        onFunctionCallParamsChunk: (c) => {
          const id = idOf(c.callIndex, c.functionName);
          if (c.paramsChunk) emit({ type: 'toolCallDelta', id, argsDelta: c.paramsChunk });
        },
        signal,
        stopOnAbortSignal: true,
        // At most half the context: the rest holds the conversation.
        maxTokens: Math.min(req.maxOutputTokens ?? Infinity, Math.floor(slot.context.contextSize / 2)),
      });
    } catch (e) {
      if (signal.aborted) throw abortError(signal.reason);
      throw new LlmError(`The local model failed: ${errorMessage(e)}`, undefined, false);
    }
    if (signal.aborted) throw abortError(signal.reason);
    const calls = res.functionCalls ?? [];
    calls.forEach((call, i) => {
      const id = idOf(i, call.functionName);
      emit({ type: 'toolCallEnd', id, name: call.functionName, args: fromFunctionParams(call.params) });
    });
    // Every token of the prompt counts as input; those the context already held are cache reads.
    const outputTokens = meter.usedOutputTokens - outputBefore;
    const inputTokens = Math.max(0, slot.chat.sequence.contextTokens.length - outputTokens);
    const evaluated = meter.usedInputTokens - evaluatedBefore;
    // The size this chat's context really got: the gauge shows the prompt against it.
    emit({ type: 'usage', inputTokens, outputTokens, cacheReadTokens: Math.max(0, inputTokens - evaluated), contextWindow: slot.context.contextSize });
    const stop = res.metadata.stopReason;
    emit({ type: 'finish', reason: calls.length ? 'tool_calls' : stop === 'maxTokens' ? 'length' : 'stop' });
  }
}

/** Optional parameters the model left out come back as null (see toGbnfSchema): drop them. */
function fromFunctionParams(params: unknown): Record<string, unknown> {
  if (!params || typeof params !== 'object' || Array.isArray(params)) return {};
  return Object.fromEntries(Object.entries(params as Record<string, unknown>).filter(([, v]) => v !== null));
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
    const required = new Set(Array.isArray(s.required) ? s.required : []);
    // The grammar makes every listed property required: an optional one may be null instead
    // (fromFunctionParams drops the nulls again).
    const properties: Record<string, GbnfJsonSchema> = {};
    for (const [k, v] of Object.entries(props)) properties[k] = required.has(k) ? toGbnfSchema(v) : { oneOf: [toGbnfSchema(v), { type: 'null' }] };
    // A free-form object (no properties listed) may hold anything.
    const free = !Object.keys(properties).length && s.additionalProperties !== false;
    return { type: 'object', properties, ...(free ? { additionalProperties: true } : {}), ...description } as GbnfJsonSchema;
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

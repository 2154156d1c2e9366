/**
 * The models a user can pick: the config's `providers.<id>` entries (ECA's shape) merged
 * over patchbay's built-in providers (openai, anthropic, ollama), plus the models an
 * Ollama server reports. Also: default-model choice, client construction, cost.
 */
import type { ProviderConfig } from './config.js';
import { effectiveVariants } from './variants.js';
import { errorMessage, logger } from '../../util/log.js';
import { underDeadline } from '../../util/deadline.js';
import type { LlmApi, LlmClient, ModelCost, ModelEntry } from '../../shapes/llm.js';
import type { AdapterAuth } from './stream-util.js';

const log = logger('llm');

/** How long model discovery may hold up startup. */
const DISCOVERY_TIMEOUT_MS = 1500;

type ModelConfig = NonNullable<ProviderConfig['models']>[string];

/**
 * Qwen2.5-Coder 1.5B Instruct, Q4_K_M (about 1.1 GB): trained for code, follows Qwen's
 * tool-calling template (which node-llama-cpp speaks), and answers at a usable speed on a
 * laptop CPU. See docs/models.md for why this one.
 */
export const DEFAULT_LOCAL_MODEL = 'qwen2.5-coder-1.5b';
export const DEFAULT_LOCAL_URI = 'hf:Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf';
/** A local model's window when neither `contextSize` nor `limit.context` names one, and its reply limit. */
const DEFAULT_LOCAL_CONTEXT = 8192;
const DEFAULT_LOCAL_OUTPUT = 2048;

interface BuiltinProvider {
  api: LlmApi;
  url: string;
  keyEnv?: string;
  urlEnv?: string;
  /** Listed first = preferred default within the provider. */
  models: Record<string, ModelConfig>;
  /** Built-ins that need a key are only offered once one is available. */
  needsKey: boolean;
}

/** Prices in USD per million tokens; limits in tokens. */
const BUILTINS: Record<string, BuiltinProvider> = {
  anthropic: {
    api: 'anthropic',
    url: 'https://api.anthropic.com',
    keyEnv: 'ANTHROPIC_API_KEY',
    urlEnv: 'ANTHROPIC_API_URL',
    needsKey: true,
    models: {
      'claude-sonnet-4-6': { limit: { context: 1_000_000, output: 64_000 }, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
      'claude-sonnet-4-5': { limit: { context: 200_000, output: 64_000 }, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } },
      'claude-opus-4-5': { limit: { context: 200_000, output: 64_000 }, cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
      'claude-haiku-4-5': { limit: { context: 200_000, output: 64_000 }, cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 } },
    },
  },
  openai: {
    api: 'openai-responses',
    url: 'https://api.openai.com/v1',
    keyEnv: 'OPENAI_API_KEY',
    urlEnv: 'OPENAI_API_URL',
    needsKey: true,
    models: {
      'gpt-5': { limit: { context: 400_000, output: 128_000 }, cost: { input: 1.25, output: 10, cacheRead: 0.125 } },
      'gpt-5-mini': { limit: { context: 400_000, output: 128_000 }, cost: { input: 0.25, output: 2, cacheRead: 0.025 } },
      'gpt-4.1': { limit: { context: 1_047_576, output: 32_768 }, cost: { input: 2, output: 8, cacheRead: 0.5 } },
    },
  },
  ollama: {
    api: 'ollama',
    url: 'http://localhost:11434',
    urlEnv: 'OLLAMA_API_URL',
    needsKey: false,
    models: {},
  },
  // Runs in-process (node-llama-cpp); the default only when nothing else is usable. The model
  // file is fetched on first use; PATCHBAY_LOCAL_MODEL (a URI or a path) replaces it, as
  // `local/<file name without .gguf>`.
  local: {
    api: 'local',
    url: 'local',
    needsKey: false,
    models: {
      // No contextSize: the context starts at limit.context and grows to fit the prompt (local.ts).
      [DEFAULT_LOCAL_MODEL]: { model: DEFAULT_LOCAL_URI, limit: { context: DEFAULT_LOCAL_CONTEXT, output: DEFAULT_LOCAL_OUTPUT } },
    },
  },
};

function defaultApi(id: string): LlmApi {
  if (id === 'anthropic') return 'anthropic';
  if (id === 'ollama') return 'ollama';
  if (id === 'openai') return 'openai-responses';
  return 'openai-chat';
}

export interface ResolveOptions {
  signal?: AbortSignal;
  /** For tests; defaults to the global fetch. */
  fetch?: typeof fetch;
  /**
   * Keys (API keys or OAuth access tokens) from editor logins, by provider. As in ECA
   * (`llm-util/provider-api-key`), a `key` in the config wins over a login, and a login over the
   * environment.
   */
  loginKeys?: Readonly<Record<string, string>>;
}

/** The providers patchbay knows without any config. */
export const BUILTIN_PROVIDER_IDS: readonly string[] = Object.keys(BUILTINS);

/** A provider's key and where it was found (never logged, never sent to an editor). */
export interface FoundKey {
  source: 'config' | 'login' | 'env';
  key: string;
  envVar?: string;
}

/**
 * A provider's key in ECA's order (`llm-util/provider-api-key`): the config's `key`; then, for a
 * built-in provider, its standard variable (OPENAI_API_KEY…: ECA's default config has
 * `key: "${env:OPENAI_API_KEY}"`, so it counts as config there) unless `keyEnv` replaces it; then a
 * login from the editor; then `keyEnv` (ECA's legacy, after login); then the standard variable as
 * the last fallback.
 */
export function findKey(id: string, user: ProviderConfig | undefined, env: NodeJS.ProcessEnv, loginKeys?: Readonly<Record<string, string>>): FoundKey | undefined {
  const standard = BUILTINS[id]?.keyEnv;
  const fromEnv = (name: string | undefined): FoundKey | undefined => {
    const v = name ? nonEmpty(env[name]) : undefined;
    return v && name ? { source: 'env', key: v, envVar: name } : undefined;
  };
  const config = nonEmpty(user?.key);
  const login = nonEmpty(loginKeys?.[id]);
  return (
    (config ? { source: 'config' as const, key: config } : undefined) ??
    (user?.keyEnv ? undefined : fromEnv(standard)) ??
    (login ? { source: 'login' as const, key: login } : undefined) ??
    fromEnv(user?.keyEnv) ??
    fromEnv(standard)
  );
}

/** The key that would win over a login for this provider, if any (for ECA's `key-auth-override-warning`). */
export function keyOverridingLogin(id: string, user: ProviderConfig | undefined, env: NodeJS.ProcessEnv): FoundKey | undefined {
  const found = findKey(id, user, env, { [id]: 'a login' });
  return found?.source === 'login' ? undefined : found;
}

export async function resolveModels(config: { providers?: Record<string, ProviderConfig> }, env: NodeJS.ProcessEnv, opts: ResolveOptions = {}): Promise<ModelEntry[]> {
  const ids = [...Object.keys(BUILTINS), ...Object.keys(config.providers ?? {}).filter((id) => !(id in BUILTINS))];
  const perProvider = await Promise.all(ids.map((id) => providerModels(id, config.providers?.[id], env, opts)));
  return perProvider.flat();
}

async function providerModels(id: string, user: ProviderConfig | undefined, env: NodeJS.ProcessEnv, opts: ResolveOptions): Promise<ModelEntry[]> {
  // A user's own "local" provider with a url (LM Studio, llama.cpp's server…) is theirs, not the built-in one.
  const theirs = id === 'local' && user && (user.url !== undefined || (user.api !== undefined && user.api !== 'local'));
  const builtin = theirs ? undefined : BUILTINS[id];
  const api = user?.api ?? builtin?.api ?? defaultApi(id);
  const url = user?.url ?? (builtin ? ((builtin.urlEnv ? nonEmpty(env[builtin.urlEnv]) : undefined) ?? builtin.url) : api === 'local' ? 'local' : undefined);
  if (!url) {
    log.warn(`provider "${id}" has no url; its models are skipped`);
    return [];
  }
  const key = findKey(id, user, env, opts.loginKeys)?.key;
  if (builtin?.needsKey && !key) {
    if (user) log.warn(`provider "${id}" has no API key (set ${user.keyEnv ?? builtin.keyEnv}); its models are skipped`);
    else log.debug(`provider "${id}": no ${builtin.keyEnv}; skipped`);
    return [];
  }

  const override = builtin?.api === 'local' ? nonEmpty(env.PATCHBAY_LOCAL_MODEL) : undefined;
  // PATCHBAY_LOCAL_MODEL=off: no built-in local model (models the config names still count).
  const models: Record<string, ModelConfig> = override === 'off' ? {} : { ...(builtin?.models ?? {}) };
  if (override && override !== 'off') {
    // The model is the user's file now: named after it, with the default's settings.
    const base = models[DEFAULT_LOCAL_MODEL];
    delete models[DEFAULT_LOCAL_MODEL];
    models[localModelName(override)] = { ...base, model: override };
  }
  if (api === 'ollama' && !user?.models) {
    for (const name of await discoverOllama(id, url, opts)) models[name] ??= {};
  }
  // A built-in model the config names is offered even when PATCHBAY_LOCAL_MODEL replaced it.
  for (const [name, m] of Object.entries(user?.models ?? {})) models[name] = { ...(models[name] ?? builtin?.models[name]), ...m };

  return Object.entries(models).flatMap(([name, m]) => {
    const entry: ModelEntry = { id: `${id}/${name}`, provider: id, api, modelName: m.modelName ?? name, url };
    if (key) entry.key = key;
    if (m.limit) entry.limit = m.limit;
    if (m.cost) entry.cost = m.cost;
    // The in-process runner takes text only, whatever the config says.
    if (api !== 'local' && (m.imageInput ?? knownVision(api, m.modelName ?? name))) entry.imageInput = true;
    // Built-in variants match the name the user knows the model by (its key), as ECA's do.
    const variants = effectiveVariants(id, api, name, m.variants);
    if (variants) entry.variants = variants;
    if (m.extraPayload && Object.keys(m.extraPayload).length) entry.extraPayload = m.extraPayload;
    if (m.fim && (api === 'openai-chat' || api === 'ollama')) entry.fim = true;
    const cacheRetention = m.cacheRetention ?? user?.cacheRetention;
    if (cacheRetention) entry.cacheRetention = cacheRetention;
    if (api === 'local') {
      if (!m.model) {
        log.warn(`local model "${id}/${name}" has no "model" (an hf: URI, https URL or file path); skipped`);
        return [];
      }
      entry.local = { model: m.model, contextSize: m.contextSize, gpuLayers: m.gpuLayers, sha256: m.sha256 };
      // The window the gauge, auto-compaction and the tool set go by: a `contextSize` fixes it;
      // else the context starts at `limit.context` and grows to fit the prompt (local.ts), and the
      // usage of each request reports the size it got.
      entry.limit = { context: m.contextSize ?? m.limit?.context ?? DEFAULT_LOCAL_CONTEXT, output: m.limit?.output ?? DEFAULT_LOCAL_OUTPUT };
    }
    return [entry];
  });
}

/**
 * Models patchbay knows read images when the config does not say: Anthropic's Claude 3 and later,
 * OpenAI's GPT-4o, GPT-4.1, GPT-5 and o-series. Anything else needs `imageInput: true`.
 */
function knownVision(api: LlmApi, modelName: string): boolean {
  if (api === 'anthropic') return /^claude-(3|sonnet|opus|haiku)/.test(modelName);
  if (api === 'openai-responses' || api === 'openai-chat') return /^(gpt-4o|gpt-4\.1|gpt-5|o[134])/.test(modelName);
  return false;
}

async function discoverOllama(id: string, url: string, opts: ResolveOptions): Promise<string[]> {
  try {
    const { listOllamaModels } = await import('./ollama.js');
    return await underDeadline(DISCOVERY_TIMEOUT_MS, [opts.signal], (signal) => listOllamaModels(url, signal, opts.fetch));
  } catch (e) {
    log.debug(`provider "${id}": no models from ${url}/api/tags (${errorMessage(e)})`);
    return [];
  }
}

/**
 * The name a model file goes by (`local/<name>`): the file name without `.gguf`, from a path,
 * an URL (query string dropped) or an `hf:` URI. `/models/x.gguf` → `x`.
 */
export function localModelName(uri: string): string {
  const t = uri.trim();
  const last = (/^[a-z]+:\/\//i.test(t) ? t.replace(/[?#].*$/, '') : t)
    .replace(/^(hf|huggingface):/i, '')
    .split(/[\\/]/)
    .filter(Boolean)
    .pop();
  const stem = (last ?? '').replace(/\.gguf$/i, '').replace(/[^\w.+-]+/g, '-');
  return stem && stem !== '.' && stem !== '..' ? stem : DEFAULT_LOCAL_MODEL;
}

function nonEmpty(s: string | undefined): string | undefined {
  return s && s.trim() ? s : undefined;
}

/**
 * The configured default when it is available (by full id, or by model name alone),
 * else the first Anthropic, then OpenAI, then Ollama model, else any other, else the local one.
 */
export function pickDefaultModel(models: ModelEntry[], configured?: string): ModelEntry | undefined {
  if (configured) {
    const hit = models.find((m) => m.id === configured) ?? models.find((m) => m.id.slice(m.provider.length + 1) === configured);
    if (hit) return hit;
    log.warn(`default model "${configured}" is not available`);
  }
  for (const p of ['anthropic', 'openai', 'ollama']) {
    const m = models.find((e) => e.provider === p);
    if (m) return m;
  }
  // The built-in local model only when nothing else is usable.
  return models.find((e) => e.api !== 'local') ?? models[0];
}

/** The adapter for a model. Loads the provider's SDK on first use (startup stays fast). */
/** `auth`: the provider's credential as of each request (a login refreshed meanwhile), over `entry.key`. */
export async function createClient(entry: ModelEntry, env: { home: string }, auth?: () => AdapterAuth): Promise<LlmClient> {
  const opts = { url: entry.url, key: entry.key, provider: entry.provider, ...(auth ? { auth } : {}) };
  switch (entry.api) {
    case 'local':
      if (!entry.local) throw new Error(`model ${entry.id} has no local model file configured`);
      return new (await import('./local.js')).LocalClient({ spec: entry.local, home: env.home, name: entry.id.slice(entry.provider.length + 1), startContextSize: entry.limit?.context });
    case 'openai-chat':
      return new (await import('./openai-chat.js')).OpenAiChatClient(opts);
    case 'openai-responses':
      return new (await import('./openai-responses.js')).OpenAiResponsesClient(opts);
    case 'anthropic':
      return new (await import('./anthropic.js')).AnthropicClient(opts);
    case 'ollama':
      return new (await import('./ollama.js')).OllamaClient(opts);
  }
}

export interface TokenUsage {
  /** All input tokens, cache reads and writes included. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

/** USD for one usage report, or undefined when the model has no price. */
export function computeCost(entry: Pick<ModelEntry, 'cost'>, usage: TokenUsage): number | undefined {
  const c: ModelCost | undefined = entry.cost;
  if (!c) return undefined;
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - read - write);
  const usd = fresh * c.input + read * (c.cacheRead ?? c.input) + write * (c.cacheWrite ?? c.input) + usage.outputTokens * c.output;
  return usd / 1_000_000;
}

/**
 * The LLM layer: one `LlmClient` interface over four wire APIs. Adapters are created
 * through `createClient`, which loads a provider's SDK only when it is first needed.
 */
export { LlmError } from '../../shapes/llm.js';
export type { AssistantPart, LlmApi, LlmClient, LlmEvent, LlmMessage, LlmRequest, LlmToolSpec, ModelCost, ModelEntry } from '../../shapes/llm.js';
export { streamWithRetry, backoffDelay } from './guard.js';
export type { RetryOptions } from './guard.js';
export { toLlmError, httpError, retryAfterMs, isRetryableStatus, abortError, isAbortError } from './errors.js';
export { resolveModels, pickDefaultModel, createClient, computeCost, BUILTIN_PROVIDER_IDS, findKey, keyOverridingLogin } from './models.js';
export type { FoundKey, ResolveOptions, TokenUsage } from './models.js';
export type { ProviderConfig, ProviderLoginConfig } from './config.js';
export type { AdapterOptions } from './stream-util.js';
export { parseArgs } from './stream-util.js';

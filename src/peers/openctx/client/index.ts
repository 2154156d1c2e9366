/** The OpenCtx client: patchbay calling OpenCtx providers for mentions, items and annotations. */
export { OpenCtxClient, type OpenCtxClientOptions, type ClientMention, type MentionBatch, type ProviderStatus, type ProviderMeta, type ProviderHealth } from './client.js';
export { openCtxConfigSchema, enabledProviders, DEFAULT_OPENCTX_TIMEOUT_MS, type OpenCtxConfig, type OpenCtxConfigInput, type ProviderSettings } from './config.js';
export { matchSelector, matchSelectors, matchMessageSelectors, pathCandidates, type SelectorResource } from './selectors.js';
export { renderItem, renderItems, renderAnnotations, itemBody, type ClientAnnotation } from './render.js';
export { ProviderError, locateProvider, resolvePackage, type ProviderLocation } from './transport.js';
export { fallbackName } from './names.js';
export type { Selector, MetaResult, Mention, Item, Annotation, Range, Position } from './schema.js';

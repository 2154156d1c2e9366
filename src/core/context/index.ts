/**
 * Contexts (ARCHITECTURE.md "The one idea"): what an editor can @-mention, how the server
 * finds it (`FileIndex`, `queryContexts`) and how it renders into the prompt (`renderContexts`).
 */
export { FileIndex } from './file-index.js';
export type { FileIndexEntry, FileIndexOptions } from './file-index.js';
export { queryContexts } from './query.js';
export type { QueryContextsOptions } from './query.js';
export { buildRepoMap, renderContexts } from './render.js';
export type { RenderOptions, RenderedContexts, RepoMapOptions } from './render.js';
export { listFiles, listFilesSync } from './listing.js';
export type { Listing, ListingMode, ListOptions } from './listing.js';
export { IMAGE_MAX_BYTES, imageMediaType, imageProblem, modelMediaType, splitImages } from './images.js';
export type { ImageOptions, SplitImages } from './images.js';
export { fetchWebText } from './web.js';
export type { FetchTextOptions } from './web.js';
export { renderTree } from './tree.js';
export type { RenderedTree, TreeSource } from './tree.js';

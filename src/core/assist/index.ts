/** Inline completion and rewrite: one-shot LLM features outside any chat. */
export { InlineCompleter, type InlineRequest } from './inline.js';
export { Rewriter, type RewriteEvent, type RewriteInput } from './rewrite.js';
export { AssistError, type AssistDeps } from './deps.js';

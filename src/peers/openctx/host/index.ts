/** The OpenCtx host: patchbay serves OpenCtx providers over token-protected loopback HTTP. */
export { OpenCtxHost, bearerMatches, isLoopbackHostHeader, DEFAULT_MAX_BODY_BYTES, type OpenCtxHostOptions } from './host.js';
export {
  OpenCtxError,
  ErrorCodes,
  invalidParams,
  describeZodError,
  type OpenCtxProviderImpl,
  type OpenCtxMethod,
  type ProviderSettings,
  type MetaResult,
  type Mention,
  type Item,
  type Annotation,
  type Range,
} from './protocol.js';
export { workspaceFiles, type WorkspaceFilesDeps } from './builtin/workspace-files.js';
export { diagnostics, severityName, type DiagnosticsDeps, type DiagnosticLike } from './builtin/diagnostics.js';
export { mcpResources, type McpResourcesDeps, type McpResourceLike } from './builtin/mcp-resources.js';
export { eventStreams, formatEvent, STREAM_URI_PREFIX, type EventStreamsDeps, type StreamEvent, type StreamFilter, type StreamSummary } from './builtin/event-streams.js';
export { moduleProvider } from './builtin/module-provider.js';

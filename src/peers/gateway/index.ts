/** The provider gateway peer: WebSocket tool providers as patchbay Tools and event-stream pushes. */
export { GatewayHostImpl, type GatewayHostOptions, type GatewayTimings } from './host.js';
export type { GatewayChats, GatewayConfig, GatewayHost } from './types.js';
export { tokenMatches, tokenFilePath } from './token.js';
export { isLoopbackHost } from './http-guard.js';
export { PROVIDER_ORIGIN } from './provider-tool.js';

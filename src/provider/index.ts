/**
 * `patchbay-ai/provider`: write a gateway provider in ten lines (specs/tap-provider-gateway.md, core profile).
 *
 *   import { createProvider } from 'patchbay-ai/provider';
 *   const p = createProvider({
 *     name: 'weather',
 *     tools: [{ name: 'forecast', description: 'Forecast for a city',
 *               parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
 *               handler: async ({ city }, { signal }) => `Sunny in ${city}` }],
 *   });
 *   await p.connect();
 *   p.push('surface', 'weather provider ready');
 */
export { createProvider, Provider } from './provider.js';
export { GatewayError, ProviderError, ToolError } from './errors.js';
export type { ProviderErrorCode } from './errors.js';
export { addressFilePath, DEFAULT_GATEWAY_URL, discoverGateway, discoverToken, discoverUrl, listGateways, runDirPath, servesWorkspace, tokenFilePath } from './discover.js';
export type { DiscoveredGateway, DiscoveredToken, DiscoverOptions, RunningGateway, TokenSource } from './discover.js';
export type { BackoffOptions } from './backoff.js';
export type {
  BoundInfo,
  JsonSchema,
  LifecycleState,
  ProviderEvents,
  ProviderEnv,
  ProviderOptions,
  ProviderState,
  ProviderTool,
  PushLevel,
  PushOptions,
  SessionInfo,
  SessionLifecycleMessage,
  SessionPicker,
  ToolCallContext,
  ToolHandler,
} from './types.js';

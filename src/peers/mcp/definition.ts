/** The mcp peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { definePeer } from '../../shapes/peer.js';
import { mcpConfig } from './settings.js';

export const mcpPeer = definePeer({
  name: 'mcp',
  config: mcpConfig,
  load: async () => (await import('./peer.js')).createMcpPeer,
});

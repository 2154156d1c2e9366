/** The gateway peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { definePeer } from '../../shapes/peer.js';
import { gatewayConfig } from './settings.js';

export const gatewayPeer = definePeer({
  name: 'gateway',
  config: gatewayConfig,
  load: async () => (await import('./peer.js')).createGatewayPeer,
});

/** The gateway peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { definePeer } from '../../shapes/peer.js';
import { gatewayConfig } from './settings.js';

export const gatewayPeer = definePeer({
  name: 'gateway',
  config: gatewayConfig,
  // Binding beyond loopback exposes your tools; turning it on when you turned it off.
  trustRule: ({ hold, get, layer, lower }) => {
    const host = get(layer, 'gateway', 'host');
    if (host !== undefined && host !== (get(lower, 'gateway', 'host') ?? '127.0.0.1')) hold(['gateway', 'host'], JSON.stringify(host));
    if (get(layer, 'gateway', 'enabled') === true && get(lower, 'gateway', 'enabled') === false) hold(['gateway', 'enabled'], 'true');
  },
  load: async () => (await import('./peer.js')).createGatewayPeer,
});

/** The openctx peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { definePeer } from '../../shapes/peer.js';
import { openctxConfig } from './settings.js';

export const openctxPeer = definePeer({
  name: 'openctx',
  config: openctxConfig,
  load: async () => (await import('./peer.js')).createOpenCtxPeer,
});

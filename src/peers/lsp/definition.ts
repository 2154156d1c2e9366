/** The lsp peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { definePeer } from '../../shapes/peer.js';
import { lspConfig } from './settings.js';

export const lspPeer = definePeer({
  name: 'lsp',
  config: lspConfig,
  load: async () => (await import('./peer.js')).createLspPeer,
});

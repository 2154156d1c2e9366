/** The openctx peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { definePeer } from '../../shapes/peer.js';
import { openctxConfig } from './settings.js';

export const openctxPeer = definePeer({
  name: 'openctx',
  config: openctxConfig,
  // Providers (JS modules run code; URLs receive content), the host's module providers (they run
  // in patchbay), and turning the host on.
  trustRule: ({ entries, hold, get, layer, lower }) => {
    for (const [uri] of entries('openctx', 'providers')) hold(['openctx', 'providers', uri], 'runs or sends content to it');
    for (const [name, path] of entries('openctx', 'host', 'providers')) hold(['openctx', 'host', 'providers', name], typeof path === 'string' ? `loads ${path}` : '');
    if (get(layer, 'openctx', 'host', 'enabled') === true && get(lower, 'openctx', 'host', 'enabled') === false) hold(['openctx', 'host', 'enabled'], 'true');
  },
  load: async () => (await import('./peer.js')).createOpenCtxPeer,
});

/** The language-server peer's settings and where its code is; listed in src/peers/index.ts. */
import { z } from 'zod';
import { definePeer } from '../../shapes/peer.js';

/** The top-level config keys this peer owns. */
export const lspConfig = {
  /** `languageServers.<name>`: {command, args?, extensions | languageIds, …}; each entry is validated on its own (config.ts). */
  languageServers: z.record(z.string(), z.unknown()).default({}),
};

export const lspPeer = definePeer({
  name: 'lsp',
  config: lspConfig,
  load: async () => (await import('./peer.js')).createLspPeer,
});

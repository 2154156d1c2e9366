/** The lsp peer as the runtime registers it: its settings (settings.ts) and its code, loaded when a workspace is built. Listed in src/peers/index.ts. */
import { z } from 'zod';
import { EntrySchema } from './config.js';

/** What changes the process a (built-in) language server runs as. */
const START_KEYS = ['args', 'env', 'initializationOptions'];
import { definePeer } from '../../shapes/peer.js';
import { lspConfig } from './settings.js';

export const lspPeer = definePeer({
  name: 'lsp',
  config: lspConfig,
  checkedConfig: { languageServers: z.record(z.string(), EntrySchema) },
  // Entries that set how a server starts (`command`, `args`, `env`, `initializationOptions`);
  // `disabled`, `extensions`, `languageIds` and `rootMarkers` still apply.
  trustRule: ({ entries, hold, describeServer, get, lower }) => {
    for (const [name, entry] of entries('languageServers')) {
      if (!entry || typeof entry !== 'object' || Array.isArray(entry)) continue;
      const e = entry as Record<string, unknown>;
      if ('command' in e) hold(['languageServers', name], describeServer(e));
      else if (START_KEYS.some((k) => k in e)) hold(['languageServers', name], `changes how it starts: ${START_KEYS.filter((k) => k in e).join(', ')}`);
      // `disabled: false` turns on a server you turned off: it would start a program you chose not to run.
      else if (e.disabled === false && get(lower, 'languageServers', name, 'disabled') === true) hold(['languageServers', name, 'disabled'], 'false');
    }
  },
  load: async () => (await import('./peer.js')).createLspPeer,
});

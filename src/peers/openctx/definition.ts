/** The OpenCtx peer's settings (specs/openctx-protocol-0.1.md) and where its code is; listed in src/peers/index.ts. */
import { z } from 'zod';
import { definePeer } from '../../shapes/peer.js';
import { openCtxConfigSchema } from './client/config.js';

/** The top-level config keys this peer owns. */
export const openctxConfig = {
  /** Providers patchbay uses, and the host that serves patchbay's own. */
  openctx: openCtxConfigSchema
    .extend({
      host: z
        .object({
          enabled: z.boolean().default(true),
          /** 0 picks a free port (the address is in PATCHBAY_HOME/openctx/address). */
          port: z.number().int().min(0).max(65535).default(0),
          /** A user's own JS module providers to serve too: name → module path. */
          providers: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), z.string()).default({}),
        })
        .default({ enabled: true, port: 0, providers: {} }),
    })
    .default({ providers: {}, autoInclude: [], timeoutMs: 5000, host: { enabled: true, port: 0, providers: {} } }),
};

export const openctxPeer = definePeer({
  name: 'openctx',
  config: openctxConfig,
  load: async () => (await import('./peer.js')).createOpenCtxPeer,
});

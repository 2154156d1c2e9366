/** The openctx peer's settings: the top-level config keys it owns, with their schemas. */
import { z } from 'zod';
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

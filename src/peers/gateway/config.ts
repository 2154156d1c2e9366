/**
 * The `gateway` config key (specs/tap-provider-gateway.md): tool providers over WebSocket. The
 * schema lives with the peer (config/schema.ts composes it) so `GatewayConfig` is derived, not copied.
 */
import { z } from 'zod';

export const gatewayConfigSchema = z
  .object({
    enabled: z.boolean().default(true),
    host: z.string().default('127.0.0.1'),
    /** Preferred port; when it is taken a free one is used (either way the address is in PATCHBAY_HOME/gateway/run/<pid>.json). 0 picks a free port. */
    port: z.number().int().min(0).max(65535).default(9400),
    /** `inject` into an idle chat starts a turn (else it waits for the next prompt). */
    injectStartsTurn: z.boolean().default(true),
    /** Authenticated connections; sockets still waiting to authenticate do not count. */
    maxConnections: z.number().int().positive().default(2000),
    /**
     * Sockets that have not authenticated yet; when full, the oldest of them is closed to make
     * room, so idle sockets can never lock a real provider out.
     */
    maxUnauthenticated: z.number().int().positive().default(256),
    /** Messages per second per connection before RATE_LIMITED. */
    rateLimitPerSecond: z.number().positive().default(200),
  })
  .default({ enabled: true, host: '127.0.0.1', port: 9400, injectStartsTurn: true, maxConnections: 2000, maxUnauthenticated: 256, rateLimitPerSecond: 200 });
export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

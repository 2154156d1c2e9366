/** The gateway peer's settings: the top-level config keys it owns, with their schemas. */
import { gatewayConfigSchema } from './config.js';

/** The top-level config keys this peer owns. */
export const gatewayConfig = { gateway: gatewayConfigSchema };

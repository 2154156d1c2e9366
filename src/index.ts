/**
 * patchbay as a library: the ECA server (to embed it over any stream pair) and the provider SDK
 * (also at `patchbay-ai/provider`; the package is `patchbay-ai`). The CLI is `bin/patchbay`.
 */
export { EcaServer, type ServerOptions } from './server/eca/server.js';
export { createProvider } from './provider/index.js';

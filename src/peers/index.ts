/**
 * Every peer of the workspace runtime, one line each. A new kind of peer is one new folder with a
 * `definition.ts` (its config keys and schemas, and where its code is) and one line here; the
 * config schema and the runtime both read this list. Only the definitions load at start-up.
 */
import { gatewayPeer } from './gateway/definition.js';
import { lspPeer } from './lsp/definition.js';
import { mcpPeer } from './mcp/definition.js';
import { openctxPeer } from './openctx/definition.js';

export const PEERS = [mcpPeer, lspPeer, openctxPeer, gatewayPeer] as const;

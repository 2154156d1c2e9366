/**
 * ECA's contexts ↔ the runtime's (shapes/context.ts). They differ in one name: what ECA calls an
 * `mcpResource` (any resource a peer offers: MCP resources, OpenCtx mentions) is a `resource` to
 * the runtime. Everything else has the same fields.
 */
import type { ChatContext, OfferedContext as EcaOffer } from '../../protocol/eca/context.js';
import type { Context, OfferedContext } from '../../shapes/context.js';

export function fromEcaContext(c: ChatContext): Context {
  return c.type === 'mcpResource' ? { ...c, type: 'resource' } : c;
}

export function toEcaOffer(c: OfferedContext): EcaOffer {
  return c.type === 'resource' ? { ...c, type: 'mcpResource' } : c;
}

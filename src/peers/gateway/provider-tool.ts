/** A provider's tool definition → patchbay's internal Tool (ARCHITECTURE.md "The one idea"). */
import type { JsonSchema, Tool, ToolContext, ToolResult } from '../../shapes/tool.js';
import type { ToolDef } from '../../protocol/gateway/index.js';

export const PROVIDER_ORIGIN = 'provider';

/** Sends `tool.call` on the provider's connection and settles per the terminal semantics. */
export type CallProvider = (tool: string, timeoutMs: number | undefined, args: Record<string, unknown>, ctx: ToolContext) => Promise<ToolResult>;

export function toTool(provider: string, def: ToolDef, call: CallProvider): Tool {
  return {
    name: def.name,
    server: provider,
    origin: PROVIDER_ORIGIN,
    description: def.description,
    inputSchema: def.parameters as JsonSchema,
    // Nothing is known about what a provider's tool does: it asks, and the plan agent does not see it.
    readOnly: false,
    mutates: true,
    call: (args, ctx) => call(def.name, def.timeout, args, ctx),
  };
}

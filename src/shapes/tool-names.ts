/**
 * The rules that keep LLM tool names unambiguous (issue 14, point 5). The model sees
 * `<server>__<tool>`; approval rules name tools the same way. So:
 *
 * - a server name (MCP server, gateway provider) never contains `__`: the full name then splits
 *   at its first `__` one way only (`a`+`b__c` and `a__b`+`c` cannot both exist);
 * - `patchbay` and its ECA alias `eca` (and names starting with them, like `eca-tools`) belong to
 *   the native tools: a rule naming them must never reach a peer's tool;
 * - the full name fits what every LLM API accepts (OpenAI's is the strictest).
 */

/** OpenAI's function-name rule; Anthropic and Ollama accept at least this. */
export const LLM_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
export const MAX_LLM_TOOL_NAME = 64;

/** `eca` or `patchbay`, whole or followed by a non-alphanumeric character (`eca-x`, `patchbay_y`). */
const RESERVED = /^(eca|patchbay)($|[^a-z0-9])/i;

/** Why `name` cannot name a tool server (MCP server, gateway provider), or undefined when it can. */
export function serverNameProblem(name: string): string | undefined {
  if (RESERVED.test(name)) return `"${name}" is reserved: names that are or start with "eca" or "patchbay" belong to patchbay's own tools`;
  if (name.includes('__')) return `"${name}" contains "__", which separates the server from the tool in the names the model sees`;
  if (!/^[A-Za-z0-9_-]+$/.test(name)) return `"${name}" may only contain letters, digits, "_" and "-"`;
  return undefined;
}

/** Why the model could not be offered a tool under `full` (`<server>__<tool>`), or undefined. */
export function llmNameProblem(full: string): string | undefined {
  if (LLM_TOOL_NAME.test(full)) return undefined;
  if (full.length > MAX_LLM_TOOL_NAME) return `"${full}" is ${full.length} characters; LLM APIs accept at most ${MAX_LLM_TOOL_NAME}`;
  return `"${full}" may only contain letters, digits, "_" and "-" (LLM APIs refuse anything else)`;
}

/** The name the LLM sees: `<server>__<tool>`. */
export function llmName(tool: { server: string; name: string }): string {
  return `${tool.server}__${tool.name}`;
}

/** The tools as LLM APIs (and tool-server listings) take them: LLM-facing name, description, parameters. */
export function toolSpecs(
  tools: Array<{ server: string; name: string; description: string; inputSchema: Record<string, unknown> }>,
): Array<{ name: string; description: string; parameters: Record<string, unknown> }> {
  return tools.map((t) => ({ name: llmName(t), description: t.description, parameters: t.inputSchema }));
}

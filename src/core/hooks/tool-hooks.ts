/**
 * preToolCall / postToolCall for one tool call (ECA docs/config/hooks.md "Tool hooks"; eca
 * chat/tool_calls.clj `decide-tool-call-action`, `run-post-tool-call-hooks!`). tool-call.ts asks
 * these and applies the answer to its state machine.
 */
import type { Tool, ToolResult } from '../../shapes/tool.js';
import type { HookChat, Hooks } from './hooks.js';
import { postToolVerdict, preToolVerdict, wrapContext, type HookStop } from './effects.js';

export interface ToolHooksEnv {
  hooks: Hooks;
  chat: HookChat;
}

/** What preToolCall decided; undefined when no hook listens. */
export interface PreToolOutcome {
  /** The arguments with the hooks' `updatedInput` merged in. */
  args?: Record<string, unknown>;
  /** The call is rejected: what the LLM reads. */
  deny?: string;
  /** Ask the user even if the config would not. */
  ask: boolean;
  stop?: HookStop;
}

/** Our native tools are the server `eca` in hook input, as in ECA's (scripts test `.server == "eca"`). */
const serverName = (tool: Tool) => (tool.server === 'patchbay' ? 'eca' : tool.server);
const matchOf = (tool: Tool, args: Record<string, unknown>) => ({ server: tool.server, tool: tool.name, args, native: tool.origin === 'native' });

export async function preToolCall(
  env: ToolHooksEnv | undefined,
  tool: Tool,
  id: string,
  args: Record<string, unknown>,
  approval: 'allow' | 'ask' | 'deny',
  signal: AbortSignal,
): Promise<PreToolOutcome | undefined> {
  if (!env?.hooks.has('preToolCall')) return undefined;
  const runs = await env.hooks.trigger('preToolCall', {
    chat: env.chat,
    // ask_user always waits for the user: hooks see "ask" for it (ECA tool_calls.clj `hook-approval`).
    data: { toolName: tool.name, server: serverName(tool), toolInput: args, toolCallId: id, approval: tool.origin === 'native' && tool.name === 'ask_user' && approval === 'allow' ? 'ask' : approval },
    match: matchOf(tool, args),
    toolCallId: id,
    signal,
  });
  const v = preToolVerdict(runs, args);
  // A stop is not the tool's fault: the LLM reads a neutral text, the reason is the user's only.
  const deny = v.stop ? 'Tool call stopped by hook' : v.rejected;
  return { ...(v.args ? { args: v.args } : {}), ...(deny !== undefined ? { deny } : {}), ask: v.ask, ...(v.stop ? { stop: v.stop } : {}) };
}

/** The result the LLM reads after postToolCall (replaced, with context appended), and a stop. */
export async function postToolCall(env: ToolHooksEnv | undefined, tool: Tool, id: string, args: Record<string, unknown>, result: ToolResult): Promise<{ result: ToolResult; stop?: HookStop }> {
  if (!env?.hooks.has('postToolCall')) return { result };
  const runs = await env.hooks.trigger('postToolCall', {
    chat: env.chat,
    data: {
      toolName: tool.name,
      server: serverName(tool),
      toolInput: args,
      toolCallId: id,
      toolResponse: result.outputs.flatMap((o) => (o.type === 'text' ? [o.text] : [])).join('\n'),
      error: result.error === true,
    },
    match: matchOf(tool, args),
    toolCallId: id,
    // No stop signal: a stop must not kill a hook that redacts the output before it is stored
    // (the next prompt would send it unredacted); the hook's timeout still bounds it.
  });
  const v = postToolVerdict(runs);
  let outputs = v.replaced !== undefined ? [{ type: 'text' as const, text: v.replaced }] : result.outputs;
  if (v.context.length) outputs = [...outputs, ...v.context.map((c) => ({ type: 'text' as const, text: wrapContext(c) }))];
  return { result: outputs === result.outputs ? result : { ...result, outputs }, ...(v.stop ? { stop: v.stop } : {}) };
}

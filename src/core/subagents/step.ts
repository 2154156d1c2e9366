/**
 * How a model step's tool calls run when subagents are among them: calls of a `parallel` tool
 * (spawn_agent) that follow each other run at the same time, at most the tool's limit at once;
 * every other call runs alone, in order. The model reads the results in the order of its calls
 * whatever order they finish in (messages.ts `toLlmMessages`).
 */
import type { Tool } from '../../shapes/tool.js';
import type { LiveChat } from '../chat/chat.js';

/** Tools a subagent never gets: no nesting, and the task list belongs to the parent (ECA protocol.md). */
const NOT_FOR_SUBAGENTS = new Set(['spawn_agent', 'task']);

export function subagentTools(chat: LiveChat, tools: Tool[]): Tool[] {
  if (chat.parentId === undefined) return tools;
  return tools.filter((t) => !(t.server === 'patchbay' && NOT_FOR_SUBAGENTS.has(t.name)));
}

export async function runToolCalls<C>(calls: C[], toolOf: (call: C) => Tool | undefined, run: (call: C) => Promise<void>): Promise<void> {
  for (let i = 0; i < calls.length;) {
    const limit = toolOf(calls[i])?.parallel?.limit();
    if (!limit) {
      await run(calls[i++]);
      continue;
    }
    let end = i;
    while (end < calls.length && toolOf(calls[end])?.parallel) end++;
    await pool(calls.slice(i, end), Math.max(1, limit), run);
    i = end;
  }
}

/** Runs `run` on every item, at most `limit` at once, started in order. */
async function pool<C>(items: C[], limit: number, run: (item: C) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

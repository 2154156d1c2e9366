/**
 * `spawn_agent` (ECA tools/agent.clj, description resources/prompts/tools/spawn_agent.md): the
 * model hands a task to a subagent, which runs as a child chat and returns its final answer as
 * this call's result. Its description lists the subagents there are now, so it is read per request.
 * Calls made in one model step run in parallel (`parallel`), up to `subagents.maxParallel`.
 */
import { z } from 'zod';
import { defineNativeTool } from '../../shapes/define-tool.js';
import { textResult, type Tool } from '../../shapes/tool.js';
import type { SubagentDef } from '../subagents/definitions.js';
import { ChildIds } from '../subagents/child-ids.js';
import { runSubagent, type ChildChats } from '../subagents/runner.js';

export const SPAWN_AGENT = 'spawn_agent';
/** ECA cuts the UI label to this many characters (agent.clj `activity-summary-max-length`). */
const ACTIVITY_MAX = 40;

export const spawnAgentSchema = z.object({
  agent: z.string().describe('Name of the agent to spawn'),
  task: z.string().describe('The detailed instructions for the agent'),
  activity: z.string().optional().describe('Concise label (3-4 words at most) shown in the UI while the agent runs, e.g. "exploring codebase", "reviewing changes".'),
  model: z.string().optional().describe('Optional model for the subagent. Only when the user explicitly named one; omit otherwise.'),
  variant: z.string().optional().describe('Optional model variant for the subagent. Only when the user explicitly named one; omit otherwise.'),
});

const BASE_DESCRIPTION = [
  'Hand a complex, multi-step task to a subagent that works in its own, separate context and returns only its final answer, keeping your own context small.',
  '',
  'Good for: exploring a codebase, researching a question across many files, editing or refactoring a well-defined part of the code, or any self-contained job whose details you do not need to keep.',
  'Not for: simple tasks, reading one file or a quick lookup: do those yourself.',
  'Subagents cannot spawn agents themselves and have only the tools their definition gives them. Several spawn_agent calls in one answer run at the same time.',
  '',
  'Arguments:',
  '- task: a complete, detailed prompt. Say whether it should change code or only research, how it should check its work, and exactly what it must report back.',
  '- activity: a 3-4 word label for the UI, e.g. "exploring codebase".',
  '- model, variant: never set them unless the user explicitly asked for a model or variant.',
].join('\n');

export interface SpawnAgentOptions {
  /** The subagents there are now. */
  defs(): SubagentDef[];
  chats: ChildChats & { isSubagent(chatId: string): boolean; modelOf(chatId: string): string | undefined };
  maxParallel(): number;
}

export function spawnAgentTool(opts: SpawnAgentOptions): Tool {
  const find = (name: string | undefined) => opts.defs().find((d) => d.name === name?.trim().toLowerCase());
  const childIds = new ChildIds((id) => opts.chats.hasChat(id));
  const tool = defineNativeTool({
    name: SPAWN_AGENT,
    // A subagent's work does not fit a small-context model's window (Tool.smallContext).
    smallContext: false,
    description: BASE_DESCRIPTION,
    schema: spawnAgentSchema,
    // It changes nothing itself: the child's own calls are judged (and asked about) one by one.
    readOnly: true,
    mutates: false,
    pathArgs: [],
    summary: (a) => (a.agent ? (activity(a.activity) ? `${a.agent}: ${activity(a.activity)}` : a.agent) : 'Spawning agent'),
    async run(args, ctx) {
      // Checked here too, not only by hiding the tool: a child's model may still name it.
      if (opts.chats.isSubagent(ctx.chatId)) return textResult('Agents cannot spawn other agents (nesting is not allowed).', true);
      const def = find(args.agent);
      if (!def) {
        const names = opts.defs().map((d) => d.name);
        return textResult(`Agent "${args.agent}" not found or not available. Available agents: ${names.length ? names.join(', ') : 'none'}.`, true);
      }
      const chatId = childIds.claim(ctx.chatId, ctx.toolCallId ?? `${Date.now()}`);
      return runSubagent(def, { task: args.task, activity: activity(args.activity), model: args.model, variant: args.variant, chatId }, ctx, opts.chats);
    },
  });
  // Read per request: the list of subagents changes with their files and the config.
  Object.defineProperty(tool, 'description', { get: () => spawnAgentDescription(opts.defs()), enumerable: true });
  return Object.assign(tool, {
    detailsBefore: (args: Record<string, unknown>, call: { chatId: string; toolCallId: string }) => {
      const def = find(typeof args.agent === 'string' ? args.agent : undefined);
      if (!def) return undefined;
      const model = typeof args.model === 'string' ? args.model : (def.model ?? opts.chats.modelOf(call.chatId) ?? '');
      return { type: 'subagent' as const, subagentChatId: childIds.peek(call.chatId, call.toolCallId), model, agentName: def.name, step: 1, ...(def.maxSteps ? { maxSteps: def.maxSteps } : {}) };
    },
    parallel: { limit: () => opts.maxParallel() },
  }) satisfies Tool;
}

/** The description with the subagents there are now (ECA agent.clj `build-description`). */
export function spawnAgentDescription(defs: SubagentDef[]): string {
  return `${BASE_DESCRIPTION}\n\nAvailable agents:\n${defs.map((d) => `- ${d.name}: ${d.description}`).join('\n')}`;
}

/** Trimmed, spaces folded, cut to ACTIVITY_MAX (ECA agent.clj `normalize-arguments`). */
function activity(raw: string | undefined): string | undefined {
  const a = raw?.trim().replace(/\s+/g, ' ');
  if (!a) return undefined;
  return a.length > ACTIVITY_MAX ? `${a.slice(0, ACTIVITY_MAX)}...` : a;
}

/**
 * Subagents: agents a chat's model can hand a task to (`patchbay__spawn_agent`), each run as a
 * child chat with its own prompt, model and tools (ECA docs/config/agents.md "Subagents"). The
 * primary agents stay `code` and `plan` (shapes/agent.ts); these are a separate list: the two
 * built-in ones below, then the agents defined in Markdown files and in the `agent` config key.
 */
import type { ApprovalConfig } from '../../config/schema.js';

export interface SubagentDef {
  /** The id the model names in `spawn_agent` (lowercase). */
  name: string;
  /** What it is for: the model reads it in the `spawn_agent` description to choose. */
  description: string;
  /** Its system prompt (a Markdown file's body). */
  systemPrompt: string;
  /** A model id (`provider/model`, or a bare name resolved against the parent's provider); else the parent's. */
  model?: string;
  variant?: string;
  /** Tool approvals of its own, laid over the config's `toolCall.approval` (deny still wins). */
  tools?: ApprovalConfig;
  /** Only read and search: tools that change things are not offered (as the `plan` agent). */
  readOnly?: boolean;
  /** The model steps it gets before it must stop and answer. */
  maxSteps?: number;
  /** Where it was defined, for doctor: `built-in`, a file path, `config "agent"`. */
  origin: string;
}

/**
 * ECA's built-in subagents, in our own words: `explorer` reads and searches only and answers fast;
 * `general` gets every tool its parent has (but spawn_agent: no nesting).
 */
export const BUILT_IN_SUBAGENTS: readonly SubagentDef[] = [
  {
    name: 'explorer',
    description:
      'Fast, read-only agent for exploring a codebase: finds files by name or pattern, searches the code for symbols and keywords, and answers questions about how the code is laid out. It cannot change anything.',
    systemPrompt: [
      'You are an explorer subagent: another agent gave you a question about this codebase and waits for your answer.',
      'Work fast and read only: list folders, search with grep, read the parts of files that matter. Never try to change files or run commands that change anything.',
      'Search broadly first, then narrow down; stop as soon as you can answer.',
      'Your last message is all the other agent receives: give the answer itself, with the file paths (and line numbers when useful) that back it, and nothing about how you searched.',
    ].join('\n'),
    readOnly: true,
    origin: 'built-in',
  },
  {
    name: 'general',
    description:
      'General-purpose agent for researching hard questions and carrying out multi-step tasks on its own, with the same tools as you. Several can run at once, each on its own part of a larger job.',
    systemPrompt: [
      'You are a general-purpose subagent: another agent handed you one task and waits for your result.',
      'Do the whole task yourself with the tools you have, checking your work as you go; do not ask the other agent questions, decide sensibly and say what you decided.',
      'Your last message is all the other agent receives: report what you did or found, precisely and briefly, with the paths you touched.',
    ].join('\n'),
    origin: 'built-in',
  },
];

/** Later definitions replace earlier ones of the same name (a project file overrides a user file and a built-in). */
export function mergeDefs(...lists: SubagentDef[][]): SubagentDef[] {
  const byName = new Map<string, SubagentDef>();
  for (const list of lists) for (const d of list) byName.set(d.name, d);
  return [...byName.values()];
}

/**
 * The approval rules a subagent's calls are judged by: the config's, with the agent's own added.
 * Deny beats ask beats allow whatever their origin, so an agent cannot lift a deny of the user's.
 */
export function subagentApproval(base: ApprovalConfig, def: SubagentDef | undefined): ApprovalConfig {
  const own = def?.tools;
  if (!own) return base;
  return {
    byDefault: own.byDefault ?? base.byDefault,
    allow: { ...base.allow, ...own.allow },
    ask: { ...base.ask, ...own.ask },
    deny: { ...base.deny, ...own.deny },
  };
}

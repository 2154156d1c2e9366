/**
 * The system prompt: who the agent is, what it may do in this agent mode, where it works, then the
 * sections other sources add (prompt-sections.ts).
 *
 * It comes in two parts: a stable prefix (the same for every request of a chat, so a provider's
 * prompt cache and a local model's KV cache can re-use it) and a dynamic rest. Order:
 * 1. patchbay's own instructions and the agent mode;
 * 2. the config's `systemPrompt`;
 * 3. the stable sections, by their `order`;
 * 4. the workspace folders and the tool names;
 * — end of the stable prefix —
 * 5. the dynamic sections, by their `order`.
 */
import type { Agent } from '../../shapes/agent.js';
import type { Tool } from '../../shapes/tool.js';
import type { PromptSection } from './prompt-sections.js';

export interface SystemPrompt {
  text: string;
  /** Length of the prefix of `text` that stays the same from one request of the chat to the next. */
  stableLength: number;
}

export function systemPrompt(opts: { agent: Agent; roots: string[]; tools: Tool[]; extra?: string; sections?: PromptSection[] }): SystemPrompt {
  const lines = [
    "You are patchbay, an expert coding assistant working inside the user's editor.",
    'Be concise. Prefer doing over describing: use the tools to read, search and change the code, then say briefly what you did.',
    'Before editing a file, read the part you will change. Keep edits minimal and consistent with the surrounding code.',
    'Paths may be absolute or relative to the first workspace folder.',
  ];
  if (opts.agent === 'plan') {
    lines.push('You are in PLAN mode: you may only read and search. Do not try to change files or run commands; produce a clear, step-by-step plan the user can approve.');
  }
  if (opts.extra) lines.push('', opts.extra);
  const sections = opts.sections ?? [];
  for (const s of sections) if (s.stable) lines.push('', s.text.trim());
  lines.push('', 'Workspace folders:', ...opts.roots.map((r) => `- ${r}`));
  if (opts.tools.length) lines.push('', `Tools available: ${opts.tools.map((t) => `${t.server}__${t.name}`).join(', ')}.`);
  const stable = lines.join('\n');
  const dynamic = sections.filter((s) => !s.stable).map((s) => s.text.trim());
  if (!dynamic.length) return { text: stable, stableLength: stable.length };
  return { text: `${stable}\n\n${dynamic.join('\n\n')}`, stableLength: stable.length };
}

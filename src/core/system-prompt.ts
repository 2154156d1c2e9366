/** The system prompt: who the agent is, what it may do in this agent mode, where it works. */
import type { Agent } from '../shapes/agent.js';
import type { Tool } from '../shapes/tool.js';

export function systemPrompt(opts: { agent: Agent; roots: string[]; tools: Tool[]; extra?: string; instructions?: string[] }): string {
  const lines = [
    "You are patchbay, an expert coding assistant working inside the user's editor.",
    'Be concise. Prefer doing over describing: use the tools to read, search and change the code, then say briefly what you did.',
    'Before editing a file, read the part you will change. Keep edits minimal and consistent with the surrounding code.',
    'Paths may be absolute or relative to the first workspace folder.',
  ];
  if (opts.agent === 'plan') {
    lines.push('You are in PLAN mode: you may only read and search. Do not try to change files or run commands; produce a clear, step-by-step plan the user can approve.');
  }
  lines.push('', 'Workspace folders:', ...opts.roots.map((r) => `- ${r}`));
  if (opts.tools.length) lines.push('', `Tools available: ${opts.tools.map((t) => `${t.server}__${t.name}`).join(', ')}.`);
  for (const i of opts.instructions ?? []) lines.push('', i);
  if (opts.extra) lines.push('', opts.extra);
  return lines.join('\n');
}

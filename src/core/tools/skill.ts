/**
 * `skill`: the model loads a skill's instructions by name (ECA's tools/skill.clj, description
 * resources/prompts/tools/skill.md). The result is the SKILL.md body with the skill's folder and
 * the other files in it, so the model can read or run its scripts and references with the usual
 * tools (which judge those paths as they judge any other).
 *
 * Read-only: it runs without asking by default, and `toolCall.approval` rules with
 * `argsMatchers: {"name": [...]}` allow, ask or deny it per skill, as in ECA.
 */
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { z } from 'zod';
import type { Tool } from '../../shapes/tool.js';
import { textResult } from '../../shapes/tool.js';
import { defineNativeTool } from '../../shapes/define-tool.js';
import type { Skill } from '../agent-files/skills.js';

const schema = z.object({
  name: z.string().describe('The skill identifier from available skills to load (e.g. review-pr)'),
});

const DESCRIPTION = `Load a skill to get detailed instructions for a specific task.
Skills provide specialized knowledge and step-by-step guidance.
Use this when a task matches an available skill's description.
After loading, resolve any file paths, scripts, or relative references mentioned in the skill content against the provided base directory.`;

/** How many of a skill's other files are listed (a skill with a vendored tree must not flood the context). */
const MAX_FILES = 100;
/** How many of its folders are read for that list: a vendored tree of empty folders must not stall the call. */
const MAX_DIRS = 200;

export function skillTool(skills: () => readonly Skill[]): Tool {
  return defineNativeTool({
    name: 'skill',
    description: DESCRIPTION,
    schema,
    readOnly: true,
    mutates: false,
    pathArgs: [],
    summary: (a) => (a.name ? `Loading skill '${a.name}'` : 'Loading skill'),
    async run({ name }, ctx) {
      const all = skills();
      const skill = all.find((s) => s.name === name);
      if (!skill) return textResult(`Skill '${name}' not found, available skills: ${all.map((s) => s.name).join(', ') || '(none)'}`, true);
      const files = await otherFiles(skill.dir, ctx.signal);
      const listing = files.names.length
        ? ['', '**Files in the skill folder** (relative to the base directory):', ...files.names.map((f) => `- ${f}`), ...(files.more ? [`- … and more (not all are listed)`] : [])]
        : files.more
          ? ['', '**Files in the skill folder**: too many folders to list']
          : [];
      return textResult([`**Skill**: ${skill.name}`, `**Base directory**: ${skill.dir}`, ...listing, '', skill.body].join('\n'));
    },
  });
}

/**
 * The skill folder's files but SKILL.md, relative, sorted; dot-entries skipped. Stops at the first
 * file past MAX_FILES or folder past MAX_DIRS (`more`), not walking the rest of the tree for nothing.
 */
async function otherFiles(dir: string, signal: AbortSignal): Promise<{ names: string[]; more: boolean }> {
  const names: string[] = [];
  let more = false;
  let dirs = 0;
  const walk = async (d: string, depth: number): Promise<void> => {
    if (more || signal.aborted || depth > 6) return;
    if (++dirs > MAX_DIRS) {
      more = true;
      return;
    }
    let entries;
    try {
      entries = await readdir(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (more) return;
      if (e.name.startsWith('.') || e.name === 'node_modules') continue;
      const p = join(d, e.name);
      if (e.isDirectory()) await walk(p, depth + 1);
      else if (d !== dir || e.name !== 'SKILL.md') {
        if (names.length >= MAX_FILES) {
          more = true;
          return;
        }
        names.push(relative(dir, p));
      }
    }
  };
  await walk(dir, 0);
  return { names, more };
}

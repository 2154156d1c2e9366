/**
 * Skills: folders with a `SKILL.md` (the agentskills format, https://agentskills.io/specification;
 * ECA's skills.clj). Only each skill's name and description go in the system prompt; the model
 * loads the body with the `patchbay__skill` tool (core/tools/skill.ts) when a task matches.
 *
 * A SKILL.md must start with YAML front-matter holding `name` (lowercase letters, digits and
 * single hyphens, at most 64 characters, the same as its folder's name) and `description` (at
 * most 1024 characters); `license`, `compatibility`, `metadata` and `allowed-tools` are optional.
 */
import { basename, dirname } from 'node:path';
import type { CommandArgument } from '../../shapes/command.js';
import { parseFrontMatter } from '../../config/frontmatter.js';
import { placeholders } from './prompt-args.js';
import type { PromptSection } from '../turn/prompt-sections.js';

export interface Skill {
  name: string;
  description: string;
  body: string;
  /** The skill's folder (where SKILL.md is): its scripts and references are relative to it. */
  dir: string;
  file: string;
  /** The placeholders of its body, for `/name args` (as a custom command's). */
  arguments: CommandArgument[];
  named: boolean;
  /** Its body mixes `$1` and `{{name}}`: it is never rendered with arguments (see parseSkill). */
  literal?: boolean;
}

export type ParsedSkill = { ok: true; skill: Skill } | { ok: false; error: string };

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function parseSkill(text: string, file: string): ParsedSkill {
  const fm = parseFrontMatter(text);
  if (!fm.present) return { ok: false, error: 'no front-matter (a SKILL.md starts with "---", then name and description)' };
  if (fm.error) return { ok: false, error: fm.error };
  const { name, description } = fm.data;
  if (typeof name !== 'string' || !name.trim()) return { ok: false, error: 'no "name" in the front-matter' };
  if (typeof description !== 'string' || !description.trim()) return { ok: false, error: 'no "description" in the front-matter' };
  if (name.length > 64 || !NAME.test(name)) return { ok: false, error: `the name "${name}" must be lowercase letters, digits and single hyphens, at most 64 characters` };
  const folder = basename(dirname(file));
  if (folder !== name) return { ok: false, error: `the name "${name}" does not match its folder "${folder}"` };
  if (description.length > 1024) return { ok: false, error: `the description is ${description.length} characters long (at most 1024)` };
  const body = fm.body.trim();
  const args = placeholders(body);
  const base = { name, description: description.trim(), body, dir: dirname(file), file };
  // ECA drops such a skill (extract-args-from-content throws). But a SKILL.md is documentation
  // first, and a CI skill quotes shell `$1` beside `${{ github.sha }}`: it stays for the model to
  // load, only `/name args` does not fill anything in.
  if (!args.ok) return { ok: true, skill: { ...base, arguments: [], named: false, literal: true } };
  return { ok: true, skill: { ...base, arguments: args.arguments, named: args.named } };
}

/** Attribute-safe text (ECA writes the catalog as XML-ish tags). */
function attr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\s+/g, ' ');
}

/**
 * The catalog in the system prompt, as ECA's prompt.clj writes it: names and descriptions only,
 * stable (it changes only when skill files do), so it stays in the cached prefix.
 */
export function skillsPromptSection(skills: readonly Pick<Skill, 'name' | 'description'>[], toolName: string): PromptSection | undefined {
  if (!skills.length) return undefined;
  const lines = [
    `<skills description="Available skills; load with ${toolName} when relevant.">`,
    ...skills.map((s) => `<skill name="${attr(s.name)}" description="${attr(s.description)}"/>`),
    '</skills>',
    `When a task matches a skill's description, load the skill with the ${toolName} tool (argument: its name) before doing the task, and follow it.`,
  ];
  return { id: 'skills', text: lines.join('\n'), stable: true, order: 60 };
}

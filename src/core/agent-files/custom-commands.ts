/**
 * Custom commands: Markdown files whose body becomes the prompt (ECA's commands.clj, docs/config/
 * commands.md). The command is the file's name without `.md`, lowercased; optional front-matter
 * gives a `description` (else the list shows the file's path, as ECA does) and `arguments`
 * (name, description, required) that describe the body's placeholders (./prompt-args.ts).
 */
import { basename } from 'node:path';
import type { CommandArgument, CommandOutcome } from '../../shapes/command.js';
import { parseFrontMatter } from '../../config/frontmatter.js';
import { mergeArguments, missingArguments, placeholders, renderPlaceholders } from './prompt-args.js';

export interface CustomCommand {
  name: string;
  description: string;
  body: string;
  file: string;
  arguments: CommandArgument[];
  named: boolean;
}

export type ParsedCommand = { ok: true; command: CustomCommand } | { ok: false; error: string };

export function commandName(file: string): string {
  return basename(file).replace(/\.md$/i, '').toLowerCase();
}

export function parseCustomCommand(text: string, file: string): ParsedCommand {
  const fm = parseFrontMatter(text);
  if (fm.error) return { ok: false, error: fm.error };
  const body = fm.body.trim();
  const found = placeholders(body);
  if (!found.ok) return { ok: false, error: found.error };
  const description = typeof fm.data.description === 'string' && fm.data.description.trim() ? fm.data.description.trim() : file;
  return {
    ok: true,
    command: { name: commandName(file), description, body, file, arguments: mergeArguments(found.arguments, fm.data.arguments, found.named), named: found.named },
  };
}

/**
 * What running `/name args` does: the rendered body is the prompt; a required argument left out
 * is said in the chat (no turn starts).
 */
export function runTemplate(name: string, body: string, declared: CommandArgument[], named: boolean, args: string[]): CommandOutcome {
  const missing = missingArguments(declared, args);
  if (missing.length) {
    const usage = `/${name} ${declared.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ')}`.trim();
    return { kind: 'show', text: `/${name} needs ${missing.length === 1 ? 'the argument' : 'the arguments'} ${missing.map((m) => `"${m}"`).join(', ')}. Usage: ${usage}` };
  }
  return { kind: 'prompt', userText: renderPlaceholders(body, args, named) };
}

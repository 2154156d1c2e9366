/**
 * The internal Command shape (`/name args`), fed by native commands and MCP prompts. A command
 * either shows text in the chat or turns into a prompt for the LLM.
 */
import { z } from 'zod';

export const commandArgumentSchema = z.object({ name: z.string(), description: z.string().optional(), required: z.boolean() });
export type CommandArgument = z.infer<typeof commandArgumentSchema>;

/** Where a command comes from: patchbay itself, an MCP server's prompt, a custom command file, or a skill. */
export type CommandKind = 'native' | 'mcp-prompt' | 'custom-prompt' | 'skill';

export type CommandOutcome =
  | { kind: 'show'; text: string }
  /** Sent to the LLM as a turn; `userText` is what the chat shows as the user's message. */
  | { kind: 'prompt'; userText: string; contextText?: string };

/** What every command gets; core's own commands get more (the chat and its dependencies). */
export interface CommandContext {
  chatId: string;
  signal: AbortSignal;
}

export interface Command<C extends CommandContext = CommandContext> {
  name: string;
  description: string;
  type: CommandKind;
  arguments: CommandArgument[];
  run(args: string[], ctx: C): Promise<CommandOutcome>;
}

/** How a command is listed to a front end (no `run`). */
export type CommandInfo = Pick<Command, 'name' | 'description' | 'type' | 'arguments'>;

/**
 * The internal Command shape (`/name args`), fed by native commands and MCP prompts.
 * A command either shows text in the chat or turns into a prompt for the LLM.
 */
import type { ChatCommand } from '../protocol/eca/chat.js';
import type { LiveChat } from './chat.js';
import type { ChatDeps } from './deps.js';

export type CommandOutcome =
  | { kind: 'show'; text: string }
  /** Sent to the LLM as a turn; `userText` is what the chat shows as the user's message. */
  | { kind: 'prompt'; userText: string; contextText?: string };

export interface CommandContext {
  chat: LiveChat;
  deps: ChatDeps;
  signal: AbortSignal;
}

export interface Command {
  name: string;
  description: string;
  type: ChatCommand['type'];
  arguments: ChatCommand['arguments'];
  run(args: string[], ctx: CommandContext): Promise<CommandOutcome>;
}

export class CommandRegistry {
  private readonly bySource = new Map<string, Command[]>();

  set(source: string, commands: Command[]): void {
    if (commands.length) this.bySource.set(source, commands);
    else this.bySource.delete(source);
  }

  all(): Command[] {
    return [...this.bySource.values()].flat();
  }

  find(name: string): Command | undefined {
    return this.all().find((c) => c.name === name);
  }

  /** `chat/queryCommands`: substring match on name, then description. */
  query(q: string): ChatCommand[] {
    const needle = q.trim().replace(/^\//, '').toLowerCase();
    const toWire = (c: Command): ChatCommand => ({ name: c.name, description: c.description, type: c.type, arguments: c.arguments });
    if (!needle) return this.all().map(toWire);
    const byName = this.all().filter((c) => c.name.toLowerCase().includes(needle));
    const byDesc = this.all().filter((c) => !byName.includes(c) && c.description.toLowerCase().includes(needle));
    return [...byName, ...byDesc].map(toWire);
  }
}

/** Splits `/name a "b c" d` into name and arguments (double quotes group). */
export function parseCommandLine(message: string): { name: string; args: string[] } | undefined {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(message.trim());
  if (!m) return undefined;
  const args: string[] = [];
  for (const t of m[2].matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) args.push(t[1] !== undefined ? t[1].replace(/\\(.)/g, '$1') : t[2]);
  return { name: m[1], args };
}

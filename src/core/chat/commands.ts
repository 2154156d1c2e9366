/**
 * Every /command of the runtime (shapes/command.ts), from every source: patchbay's own and MCP
 * prompts. Core's own commands also get the chat and its dependencies.
 */
import type { Command as BaseCommand, CommandContext as BaseContext, CommandInfo } from '../../shapes/command.js';
import type { CommandSink } from '../../shapes/registry.js';
import type { LiveChat } from './chat.js';
import type { ChatDeps } from '../deps.js';
import { errorMessage, logger } from '../../util/log.js';

const log = logger('commands');

export type { CommandOutcome } from '../../shapes/command.js';

export interface CommandContext extends BaseContext {
  chat: LiveChat;
  deps: ChatDeps;
}

export type Command = BaseCommand<CommandContext>;

export class CommandRegistry implements CommandSink {
  private readonly bySource = new Map<string, Command[]>();
  private readonly liveBySource = new Map<string, () => Command[]>();

  set(source: string, commands: Command[]): void {
    if (commands.length) this.bySource.set(source, commands);
    else this.bySource.delete(source);
  }

  /**
   * A source asked for its commands at each read (custom commands and skills: files that may
   * change at any time, read through an mtime cache). Listed after the `set` sources, in the order
   * given, so a native command keeps its name.
   */
  live(source: string, commands: () => Command[]): void {
    this.liveBySource.set(source, commands);
  }

  all(): Command[] {
    return [...this.bySource.values(), ...[...this.liveBySource].map(([source, f]) => this.ask(source, f))].flat();
  }

  /** A live source that fails (a folder it cannot read as it expected) loses its own commands only, never /doctor or the rest. */
  private ask(source: string, f: () => Command[]): Command[] {
    try {
      return f();
    } catch (e) {
      log.warn(`commands from ${source} could not be listed: ${errorMessage(e)}`);
      return [];
    }
  }

  find(name: string): Command | undefined {
    return this.all().find((c) => c.name === name);
  }

  /** `chat/queryCommands`: substring match on name, then description. */
  query(q: string): CommandInfo[] {
    const needle = q.trim().replace(/^\//, '').toLowerCase();
    const toWire = (c: Command): CommandInfo => ({ name: c.name, description: c.description, type: c.type, arguments: c.arguments });
    // Once: each live source checks its files when asked.
    const all = this.all();
    if (!needle) return all.map(toWire);
    const byName = all.filter((c) => c.name.toLowerCase().includes(needle));
    const byDesc = all.filter((c) => !byName.includes(c) && c.description.toLowerCase().includes(needle));
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

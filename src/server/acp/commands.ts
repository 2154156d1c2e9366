/**
 * patchbay's commands (native, custom prompts, skills, MCP prompts) as ACP's available commands.
 * A client sends a command as text starting with `/name`, which core runs as ECA's `/name` is run;
 * the hint lists the arguments, required ones bare and optional ones in brackets.
 */
import type { AvailableCommand } from '@agentclientprotocol/sdk';
import type { CommandInfo } from '../../shapes/command.js';

export function availableCommands(commands: CommandInfo[]): AvailableCommand[] {
  return commands.map((c) => {
    const hint = c.arguments.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
    return { name: c.name, description: c.description || c.name, ...(hint ? { input: { hint } } : {}) };
  });
}

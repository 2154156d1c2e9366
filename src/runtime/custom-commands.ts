/**
 * The workspace's custom commands (core/agent-files/custom-commands.ts): `.md` files from `.patchbay/commands`,
 * `.eca/commands`, the user's commands folders and the `commands` config key
 * (config/agent-files.ts), read anew at each use through an mtime cache (./md-file-cache.ts) and
 * listed as `/<name>` commands of ECA's type `custom-prompt`. Bad files are skipped and reported on
 * the runtime board. On a name clash the first in ECA's order wins: config entries, then the
 * user's folders, then the project's (agent-files-host.ts `byPrecedence`).
 */
import type { AgentFileSource } from '../config/agent-files.js';
import type { Command } from '../core/chat/commands.js';
import { parseCustomCommand, runTemplate, type CustomCommand, type ParsedCommand } from '../core/agent-files/custom-commands.js';
import { byPrecedence, scanFiles, type AgentFilesHost } from './agent-files-host.js';
import { displayPath, MdFileCache } from './md-file-cache.js';

interface State {
  key: string;
  commands: Command[];
  found: { command: CustomCommand; source: AgentFileSource }[];
  shadowed: string[];
  problems: string[];
}

export class CustomCommands {
  private readonly cache = new MdFileCache<ParsedCommand>(parseCustomCommand);
  private state: State = { key: '\0none', commands: [], found: [], shadowed: [], problems: [] };

  constructor(private readonly host: AgentFilesHost) {}

  install(): this {
    this.host.commands.live('custom', () => this.refresh().commands);
    this.host.board.setSummary('commands', () => this.doctorLines());
    // Asked at each prompt (core/chat/chats.ts): a file broken since is told at once.
    this.host.board.setProblems('commands', () => this.refresh().problems);
    return this;
  }

  private show(path: string): string {
    return displayPath(path, this.host.roots(), this.host.homeDir);
  }

  private refresh(): State {
    const scan = scanFiles(this.host, this.cache, 'commands', { match: (n) => n.toLowerCase().endsWith('.md') }, { folder: 'Custom commands', file: 'Custom command' });
    const { key, problems } = scan;
    if (key === this.state.key) return Object.assign(this.state, { problems });
    const byName = new Map<string, { command: CustomCommand; source: AgentFileSource }>();
    const shadowed: string[] = [];
    const ordered = byPrecedence(scan.files);
    for (const f of ordered) {
      if (!f.value.ok) continue;
      const c = f.value.command;
      const won = byName.get(c.name);
      if (won) shadowed.push(`/${c.name}: ${this.show(won.command.file)} (${won.source.scope}) wins over ${this.show(c.file)} (${f.source.scope})`);
      else byName.set(c.name, { command: c, source: f.source });
    }
    const found = [...byName.values()];
    this.state = { key, found, shadowed, problems, commands: found.map(({ command }) => toCommand(command)) };
    return this.state;
  }

  private doctorLines(): string[] {
    const { found, shadowed } = this.refresh();
    if (!found.length) return ['Custom commands: none'];
    return [
      `Custom commands (${found.length}): ${found.map(({ command, source }) => `/${command.name} (${source.scope}: ${this.show(command.file)})`).join(', ')}`,
      ...shadowed.map((s) => `Custom commands: ${s}`),
    ];
  }
}

function toCommand(c: CustomCommand): Command {
  return {
    name: c.name,
    description: c.description,
    type: 'custom-prompt',
    arguments: c.arguments,
    run: async (args) => runTemplate(c.name, c.body, c.arguments, c.named, args),
  };
}

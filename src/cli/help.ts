/**
 * Help texts of the `patchbay` subcommands, one table row each, so a new subcommand is one row
 * here plus its `case` in main.ts. `patchbay --help` is built from the table; `patchbay <sub>
 * --help` prints the row's own text. Keep each row's options in step with what the command's
 * flag parsing accepts (the e2e test cli-help.test.ts runs every one).
 */

export interface CommandHelp {
  name: string;
  /** Arguments after the name, for the overview (`["prompt"]`, `list|pull|rm`). */
  synopsis: string;
  summary: string;
  /** The full text `patchbay <name> --help` prints. */
  usage: string;
  /** Options listed under the command in the top-level help (the flags people reach for). */
  overviewOptions?: string[];
}

const CONFIG_FILE = '  --config-file <path>  Read this file instead of ~/.config/patchbay/config.json';

export const COMMANDS: CommandHelp[] = [
  {
    name: 'server',
    synopsis: '',
    summary: 'Speak the ECA protocol over stdio (editors spawn this)',
    usage: `Usage: patchbay server [options]

Speaks the ECA protocol (JSON-RPC with Content-Length framing) on stdin/stdout; editors start
it. stdout carries protocol messages only; logs go to stderr and $PATCHBAY_HOME/logs/server.log.

Options:
  --log-level <level>   error, warn, info (default) or debug
${CONFIG_FILE}
  -h, --help            Show this help
`,
    overviewOptions: ['--log-level error|warn|info|debug', '--config-file <path>'],
  },
  {
    name: 'acp',
    synopsis: '',
    summary: 'Speak ACP over stdio (Zed, JetBrains, Neovim, agent-shell)',
    usage: `Usage: patchbay acp [options]

Speaks ACP v1 (newline-delimited JSON-RPC) on stdin/stdout, as an agent for Zed, JetBrains IDEs,
Neovim (CodeCompanion, avante.nvim) and Emacs agent-shell; they start it. Sessions are patchbay
chats: a chat started over ECA can be loaded here by its id, and the other way round. stdout
carries protocol messages only; logs go to stderr and $PATCHBAY_HOME/logs/server.log.

Options:
  --log-level <level>   error, warn, info (default) or debug
${CONFIG_FILE}
  -h, --help            Show this help
`,
    overviewOptions: ['--log-level error|warn|info|debug', '--config-file <path>'],
  },
  {
    name: 'chat',
    synopsis: '["prompt"]',
    summary: 'Chat in the terminal (answers once when given a prompt)',
    usage: `Usage: patchbay chat [options] ["prompt" | -]

Starts its own patchbay server and chats with it. With a prompt, answers it and exits
(- reads the prompt from stdin); @path mentions add files and directories as context.
Without a prompt, an interactive chat: Tab completes @files and /commands, a pasted block is
one message, a line ending in \\ goes on to the next line, Ctrl-C stops the answer, /exit or
Ctrl-D quits; /help lists commands (/chats, /resume, /rewind and /fork among them). A
subagent's work is shown indented under its spawn_agent. On exit it prints the tokens used,
the cost when the model is priced, and the command that resumes the chat.

Options:
  -c, --continue        Go on in this folder's newest chat
  -r, --resume [id]     Go on in a chat by id; without one, pick from this folder's chats
                        (a terminal is needed; \`--resume -- word\` for a one-word prompt)
  --model <id>          Model to use (provider/model, or just the model's name)
  --agent code|plan     Agent (plan only reads and plans)
  -y, --yes             Approve every tool call without asking
  --json                One JSON object per line on stdout, one per event, ending with
                        {"type":"done","stopReason":…,"exitCode":…}; for scripts. One prompt
                        only: as words, or piped in on stdin
  --verbose             Show the server's log and patchbay's notes on its workings
                        (such as "prompt cache invalidated")
${CONFIG_FILE}
  --log-level <level>   Server log level: error, warn, info, debug
  -h, --help            Show this help

Exit codes: 0 done, 1 the turn failed, no model is configured, or no chat to continue (or
none picked), 2 bad usage (an unknown --resume id too), 3 a tool call needed approval and no
one could be asked (stdin is not a terminal, no --yes), 130 Ctrl-C.
`,
    overviewOptions: ['-c, --continue', '-r, --resume [id]', '--model <provider/model>', '--agent code|plan', '-y, --yes', '--json', '--verbose', '--config-file <path>', '--log-level <level>'],
  },
  {
    name: 'doctor',
    synopsis: '',
    summary: 'Show models, config, tool servers and storage',
    usage: `Usage: patchbay doctor [options]

Checks the current directory as a workspace: models, config sources and problems, MCP servers,
tools, storage. Exits 1 when no model is configured.

Options:
${CONFIG_FILE}
  -h, --help            Show this help
`,
    overviewOptions: ['--config-file <path>'],
  },
  {
    name: 'models',
    synopsis: 'list|pull|rm',
    summary: 'The built-in local models (downloaded GGUF files)',
    usage: `Usage:
  patchbay models list             Local models from the config, and the files cached
  patchbay models pull [model]     Download a local model (default: the default local model)
  patchbay models rm <model>       Delete a downloaded model file
A model is a configured name (qwen2.5-coder-1.5b or local/qwen2.5-coder-1.5b), an hf: URI or an https URL.

Options:
${CONFIG_FILE}
  -h, --help            Show this help
`,
    overviewOptions: ['--config-file <path>'],
  },
  {
    name: 'login',
    synopsis: '[provider]',
    summary: 'Log in to a model provider (API key, browser or device code)',
    usage: `Usage: patchbay login [provider] [--method browser|paste|device|api-key]
       patchbay login --logout <provider>

Logs in to a model provider and stores the login (an API key, or OAuth tokens) in the system
keychain or $PATCHBAY_HOME/secrets.json, for every patchbay on this machine: running servers
take it up when asked (ACP authenticate). Without a provider, lists them with their status and
asks which; without --method, asks which login the provider offers. An API key is read without
echo on a terminal, as a line from stdin otherwise. Browser logins open $BROWSER (or the system
browser) and print the URL; device logins print the URL and the code. Ctrl-C cancels.

Options:
  --method <m>          browser, paste, device or api-key (as the provider offers)
  --logout <provider>   Forget the provider's stored login
${CONFIG_FILE}
  -h, --help            Show this help

Exit codes: 0 logged in (or out), 1 the login failed, 2 bad usage, 130 Ctrl-C.
`,
    overviewOptions: ['--method browser|paste|device|api-key', '--logout <provider>'],
  },
  {
    name: 'trust',
    synopsis: '[--yes] [path]',
    summary: "Trust a folder's .patchbay/config.json (MCP servers, approvals…)",
    usage: `Usage: patchbay trust [--yes] [path]    Trust the folder (default: the current one)
       patchbay trust --revoke [path]   Forget that you trusted it
       patchbay trust --list            Show the folders you trusted

A folder's .patchbay/config.json may start MCP servers and language servers, auto-approve
tools, and point providers at other servers. Until you trust the folder, patchbay holds those
settings back, and does not run the typescript-language-server in its node_modules/.bin.
patchbay trust lists what the file enables, then asks "Trust this folder? [y/N]". Trust is for
the content it listed: after the file changes, patchbay asks again.

Options:
  -y, --yes             Trust without asking (required when not run on a terminal)
  --revoke              Forget the folder
  --list                Show the trusted folders
  -h, --help            Show this help
`,
    overviewOptions: ['-y, --yes', '--revoke', '--list'],
  },
  {
    name: 'tools',
    synopsis: "check <tool> '<json>'",
    summary: 'Judge a tool call as a chat here would: allow, ask, deny',
    usage: `Usage: patchbay tools check <tool> ['<json args>'] [options]

Judges one tool call outside any chat, against the current folder's workspace (its config, as
patchbay doctor reads it), by the rules a chat turn there follows: the toolCall.approval rules,
the agent, paths outside the workspace folders, protected paths (.git, .patchbay/config.json…),
trust mode and preToolCall hooks (which run, as they would for the call). Nothing is run.
<tool> is a native tool's name (shell_command, write_file) or <server>__<tool>; an MCP server's
tool is looked up once the servers have started. Prints the verdict and why.

Options:
  --trust               Judge it with trust mode on (what would ask runs; deny, outside and
                        protected paths still apply)
  --agent <name>        code (default), plan, or a subagent's name (its own rules apply)
  --json                One JSON object: {"tool","verdict","reason","outside","protected"?,"args"?}
${CONFIG_FILE}
  -h, --help            Show this help

Exit codes: 0 allow, 3 ask, 4 deny, 2 bad usage (an unknown tool or agent, arguments that are
not a JSON object), 1 the check failed.
`,
    overviewOptions: ['--trust', '--agent <name>', '--json'],
  },
];

export function commandHelp(name: string): CommandHelp | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** `patchbay --help`: every command with its main options. */
export function overview(): string {
  const lines = ['patchbay — one local server between your editor, the LLMs, and every source of context and tools', '', 'Usage:'];
  for (const c of COMMANDS) {
    const head = `  patchbay ${c.name}${c.synopsis ? ` ${c.synopsis}` : ''}`;
    lines.push(head.length < 34 ? `${head.padEnd(34)}${c.summary}` : `${head}\n${' '.repeat(34)}${c.summary}`);
    // Options under the summary, wrapped to 80 columns.
    let line = '';
    for (const o of c.overviewOptions ?? []) {
      if (line && 36 + line.length + 2 + o.length > 80) {
        lines.push(`${' '.repeat(36)}${line}`);
        line = '';
      }
      line = line ? `${line}  ${o}` : o;
    }
    if (line) lines.push(`${' '.repeat(36)}${line}`);
  }
  lines.push(`  patchbay --version | --help     Version and build commit (also -v, version)`, '', 'Run `patchbay <command> --help` for a command’s options.', '');
  return lines.join('\n');
}

/** Whether the arguments ask for help (`-h`/`--help` before a `--`). */
export function wantsHelp(args: string[]): boolean {
  for (const a of args) {
    if (a === '--') return false;
    if (a === '-h' || a === '--help') return true;
  }
  return false;
}

/** Bad usage: the message and where to read more, on stderr; exit code 2. */
export function usageError(command: string, message: string): void {
  process.stderr.write(`patchbay ${command}: ${message}\nRun \`patchbay ${command} --help\` for usage.\n`);
  process.exitCode = 2;
}

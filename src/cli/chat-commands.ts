/**
 * The `/commands` of interactive `patchbay chat`. The client's own (`/help`, `/model`, `/agent`,
 * `/expand`, `/new`, `/exit`, and the stored chats' `/chats`, `/resume`, `/rewind`, `/fork` of
 * chat-resume.ts) run here; the server's (`chat/queryCommands`: native commands and
 * MCP prompts) go to the server as a prompt, as an editor sends them; any other `/word` is
 * reported and sends nothing, so a typo never reaches the model as a question.
 *
 * Model and agent changes are told to the server the way the ECA plugins do
 * (`chat/selectedModelChanged`, `chat/selectedAgentChanged`), and sent with every prompt.
 */
import { ECA } from '../protocol/eca/methods.js';
import { AGENTS, agentSchema } from '../shapes/agent.js';
import type { ServerProcess } from './chat-client.js';
import type { ChatSession } from './chat-session.js';
import type { Term } from './chat-term.js';
import type { ToolOutputs } from './chat-tool-output.js';
import { matchModel } from './chat-model.js';
import { fork, listChats, resumeCommand, rewind } from './chat-resume.js';

export interface LocalCommand {
  name: string;
  args?: string;
  description: string;
}

export const LOCAL_COMMANDS: LocalCommand[] = [
  { name: 'help', description: 'This list' },
  { name: 'model', args: '[provider/model]', description: 'Show the models, or switch to one' },
  { name: 'agent', args: '[code|plan]', description: 'Show the agent, or switch (plan only reads and plans)' },
  { name: 'variant', args: '[name|-]', description: 'Show the model’s variants (e.g. reasoning effort), or pick one (- for none)' },
  { name: 'expand', args: '[n]', description: 'Show a tool call’s whole output (the last one without n)' },
  { name: 'new', description: 'Start a new chat' },
  { name: 'chats', description: 'List this folder’s chats, newest first' },
  { name: 'resume', args: '<n|id>', description: 'Go on in a chat of /chats (its number or id)' },
  { name: 'rewind', args: '[n]', description: 'Roll back the last n prompts (default 1), their answers and file changes' },
  { name: 'fork', description: 'Copy this chat into a new one and go on there' },
  { name: 'exit', description: 'Quit (also /quit or Ctrl-D)' },
];

/** Names Tab completes besides the server's. */
export const LOCAL_COMMAND_NAMES = [...LOCAL_COMMANDS.map((c) => c.name), 'quit'];

export interface CommandDeps {
  server: ServerProcess;
  session: ChatSession;
  term: Term;
  toolOutputs: ToolOutputs;
  /** The folder whose chats `/chats` lists. */
  cwd: string;
  /** `/new`: forget the chat (and what Tab completion learned). */
  newChat(): void;
}

/** What the REPL does with a line: send it as a prompt, nothing more, or quit. */
export type CommandResult = 'send' | 'done' | 'exit';

interface ServerCommand {
  name: string;
  description?: string;
  arguments?: Array<{ name: string; required?: boolean }>;
}

// `/name rest`: a name is a word (MCP prompts add `server:`); `/usr/bin …` is not a command.
const COMMAND = /^\/([A-Za-z][\w.:-]*)(?:\s+([\s\S]*))?$/;

export async function runCommand(line: string, d: CommandDeps): Promise<CommandResult> {
  const m = COMMAND.exec(line.trim());
  if (!m) return 'send';
  const [, name, rest = ''] = m;
  const arg = rest.trim();
  const t = d.term;
  switch (name) {
    case 'exit':
    case 'quit':
      return 'exit';
    case 'new':
      if (turnRunning(d, name)) return 'done';
      d.newChat();
      t.outLine(t.paint('dim', 'New chat.'));
      return 'done';
    case 'help':
      await help(d);
      return 'done';
    case 'model':
      await model(arg, d);
      return 'done';
    case 'agent':
      agent(arg, d);
      return 'done';
    case 'variant':
      variant(arg, d);
      return 'done';
    case 'expand':
      expand(arg, d);
      return 'done';
    case 'chats':
      await listChats(d);
      return 'done';
    case 'resume':
      if (turnRunning(d, name)) return 'done';
      await resumeCommand(d, arg);
      return 'done';
    case 'rewind':
      if (turnRunning(d, name)) return 'done';
      await rewind(d, arg);
      return 'done';
    case 'fork':
      if (turnRunning(d, name)) return 'done';
      await fork(d);
      return 'done';
  }
  const commands = await serverCommands(d, name);
  // The server could not say: let it decide rather than drop what was typed.
  if (!commands || commands.some((c) => c.name === name)) return 'send';
  t.errLine(t.paint('yellow', `Unknown command /${name} — /help lists commands`, 'err'));
  return 'done';
}

/**
 * A turn runs while the REPL reads (one a gateway provider's inject started): leaving its chat now
 * would leave that turn waiting for an end this session no longer hears, and every later prompt
 * behind it; a replay gathered meanwhile (`/rewind`, `/fork`) could swallow its end too, and the
 * server refuses both while a turn runs anyway.
 */
function turnRunning(d: CommandDeps, command: string): boolean {
  if (!d.session.busy) return false;
  d.term.errLine(d.term.paint('yellow', `/${command}: a turn is running in this chat; wait for it to end, or Ctrl-C to stop it`, 'err'));
  return true;
}

async function serverCommands(d: CommandDeps, query: string): Promise<ServerCommand[] | undefined> {
  try {
    const r = await d.server.request(ECA.chatQueryCommands, { chatId: d.session.chatId, query }, 5_000);
    return r.commands;
  } catch {
    return undefined;
  }
}

function row(name: string, description: string): string {
  return `  ${name.padEnd(28)} ${description}`;
}

async function help(d: CommandDeps): Promise<void> {
  const t = d.term;
  t.outLine(t.paint('bold', 'Commands of patchbay chat:'));
  for (const c of LOCAL_COMMANDS) t.outLine(row(`/${c.name}${c.args ? ` ${c.args}` : ''}`, c.description));
  const commands = await serverCommands(d, '');
  if (commands === undefined) t.outLine(t.paint('dim', '(the server did not list its commands)'));
  else if (commands.length) {
    t.outLine(t.paint('bold', 'Commands of the server:'));
    for (const c of commands) {
      const args = (c.arguments ?? []).map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ');
      t.outLine(row(`/${c.name}${args ? ` ${args}` : ''}`, c.description ?? ''));
    }
  }
  t.outLine(t.paint('dim', '@path adds a file or folder (Tab completes); a line ending in \\ continues on the next; a paste is one message.'));
}

/** How long `/model` waits for the server to say which variants the new model has. */
const MODEL_CHANGE_WAIT_MS = 2_000;

async function model(arg: string, d: CommandDeps): Promise<void> {
  const t = d.term;
  const models = d.server.config.models ?? [];
  const current = d.session.model ?? d.server.config.selectModel;
  if (!arg) {
    t.outLine(`Model: ${current ?? 'none configured'}`);
    for (const m of models) t.outLine(`  ${m === current ? '*' : ' '} ${m}`);
    if (models.length > 1) t.outLine(t.paint('dim', '/model <name> switches.'));
    return;
  }
  const chosen = models.length ? matchModel(arg, models) : arg;
  if (!chosen) {
    t.errLine(t.paint('red', `Unknown model "${arg}". Available: ${models.join(', ') || 'none'}`, 'err'));
    return;
  }
  d.session.model = chosen;
  // With the variant shown, as eca-emacs does: the server answers whether the new model keeps it.
  const shown = d.server.config.selectVariant;
  const answered = d.server.nextConfig(MODEL_CHANGE_WAIT_MS);
  d.server.notify(ECA.chatSelectedModelChanged, { chatId: d.session.chatId, model: chosen, ...(shown ? { variant: shown } : {}) });
  // The next prompt must not carry a variant the new model lacks.
  await answered;
  t.outLine(t.paint('dim', `Model: ${chosen}`));
}

function agent(arg: string, d: CommandDeps): void {
  const t = d.term;
  const agents = d.server.config.agents?.length ? d.server.config.agents : AGENTS;
  const current = d.session.agent ?? d.server.config.selectAgent ?? 'code';
  if (!arg) {
    t.outLine(`Agent: ${current}`);
    for (const a of agents) t.outLine(`  ${a === current ? '*' : ' '} ${a}`);
    return;
  }
  const picked = agentSchema.safeParse(arg);
  if (!picked.success) {
    t.errLine(t.paint('red', `Unknown agent "${arg}". Available: ${AGENTS.join(', ')}`, 'err'));
    return;
  }
  d.session.agent = picked.data;
  d.server.notify(ECA.chatSelectedAgentChanged, { chatId: d.session.chatId, agent: picked.data });
  t.outLine(t.paint('dim', `Agent: ${picked.data}`));
}

/**
 * The variant is the client's selection, as in eca-emacs (`eca-chat--selected-variant`): kept in
 * its mirror of `config/updated` (which the server updates on a model change), sent with each prompt.
 */
function variant(arg: string, d: CommandDeps): void {
  const t = d.term;
  const variants = d.server.config.variants ?? [];
  const current = d.server.config.selectVariant ?? undefined;
  if (!arg) {
    if (!variants.length) return t.outLine('The model has no variants.');
    t.outLine(`Variant: ${current ?? '-'}`);
    for (const v of variants) t.outLine(`  ${v === current ? '*' : ' '} ${v}`);
    t.outLine(t.paint('dim', '/variant <name> picks one; /variant - none.'));
    return;
  }
  if (arg === '-') {
    d.server.config.selectVariant = null;
    t.outLine(t.paint('dim', 'Variant: -'));
    return;
  }
  if (!variants.includes(arg)) {
    t.errLine(t.paint('red', `Unknown variant "${arg}". Available: ${variants.join(', ') || 'none'}`, 'err'));
    return;
  }
  d.server.config.selectVariant = arg;
  t.outLine(t.paint('dim', `Variant: ${arg}`));
}

function expand(arg: string, d: CommandDeps): void {
  const t = d.term;
  const n = arg ? Number(arg) : undefined;
  if (arg && !Number.isInteger(n)) {
    t.errLine(t.paint('red', 'Usage: /expand [n] (n from a "… more lines (/expand n)" line)', 'err'));
    return;
  }
  const out = d.toolOutputs.get(n);
  if (!out) {
    t.outLine(t.paint('dim', n === undefined ? 'No tool output yet.' : `No tool output ${n}.`));
    return;
  }
  t.outLine(t.paint('bold', `${out.name} output ${out.n}:`));
  t.outLine(out.text);
}

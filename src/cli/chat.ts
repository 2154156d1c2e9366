/**
 * `patchbay chat`: a terminal client of our own ECA server. It starts `patchbay server` as a
 * child, speaks ECA over its stdio (like any editor plugin), and either answers one prompt
 * (`patchbay chat "…"`) or runs a REPL.
 *
 * Exit codes: 0 done; 1 the turn failed, no model is configured, the server failed, or
 * `--continue`/`--resume` found nothing to open (none in this folder, the picker left with Enter
 * or Ctrl-D); 2 bad usage (an unknown `--resume` id among them); 3 a tool call needed approval and
 * no one could be asked (stdin is not a terminal and no --yes), so it was rejected; 130 stopped
 * with Ctrl-C (at the trust question and the picker too).
 */
import { askOnce, askQuestionOnce, type Question, type QuestionAnswer } from './chat-ask.js';
import { askWorkspaceTrust } from './chat-trust.js';
import { ServerProcess, type ChatConfig } from './chat-client.js';
import { mentionsToContexts } from './chat-mentions.js';
import { matchModel } from './chat-model.js';
import { Renderer } from './chat-render.js';
import { runRepl } from './chat-repl.js';
import { startIn, type StartIn } from './chat-resume.js';
import { summaryLines, UsageTotals } from './chat-summary.js';
import { watchToolServers } from './chat-servers.js';
import { ChatSession, EXIT_UNASKED, unaskedMessage, type Approver, type TurnOutcome } from './chat-session.js';
import { Term } from './chat-term.js';
import { chatJson } from './chat-json.js';
import { promptFromStdin } from './chat-stdin.js';
import { commandHelp, usageError } from './help.js';
import { withoutControlChars } from '../util/text.js';
import type { Agent } from '../shapes/agent.js';

const USAGE = commandHelp('chat')!.usage;

export interface ChatFlags {
  model?: string;
  agent?: Agent;
  yes: boolean;
  verbose: boolean;
  help: boolean;
  configFile?: string;
  logLevel?: string;
  /** `--json`: one JSON object per event on stdout (chat-json.ts); one-shot only. */
  json?: boolean;
  /** The prompt is `-`: read it from stdin. */
  stdinPrompt?: boolean;
  /** `--continue` (the newest chat of this folder) or `--resume [id]`. */
  start?: StartIn;
  prompt: string;
}

const VALUE_FLAGS = ['model', 'agent', 'config-file', 'log-level'];

export function parseChatArgs(args: string[]): ChatFlags | { error: string } {
  const f: ChatFlags = { yes: false, verbose: false, help: false, prompt: '' };
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      words.push(...args.slice(i + 1));
      break;
    }
    if (a === '-y' || a === '--yes') f.yes = true;
    else if (a === '--verbose') f.verbose = true;
    else if (a === '--json') f.json = true;
    else if (a === '-h' || a === '--help') f.help = true;
    else if (a === '-c' || a === '--continue' || a === '-r' || a === '--resume' || a.startsWith('--resume=')) {
      // --resume's id is the next word unless that is an option or a prompt (it has spaces).
      const next = args[i + 1];
      const id = a.startsWith('--resume=') ? a.slice(9) : (a === '-r' || a === '--resume') && next !== undefined && !next.startsWith('-') && !/\s/.test(next) ? args[++i] : undefined;
      if (a.startsWith('--resume=') && !id) return { error: 'Option --resume= needs a chat id' };
      if (f.start) return { error: 'Give one of --continue and --resume' };
      f.start = a === '-c' || a === '--continue' ? { continue: true } : { resume: id ?? true };
    } else if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      if (!VALUE_FLAGS.includes(name)) return { error: `Unknown option --${name}` };
      const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
      if (value === undefined || value === '') return { error: `Option --${name} needs a value` };
      if (name === 'model') f.model = value;
      else if (name === 'config-file') f.configFile = value;
      else if (name === 'log-level') {
        if (!['error', 'warn', 'info', 'debug'].includes(value)) return { error: '--log-level must be one of error, warn, info, debug' };
        f.logLevel = value;
      } else {
        const agent = value === 'agent' ? 'code' : value;
        if (agent !== 'code' && agent !== 'plan') return { error: '--agent must be code or plan' };
        f.agent = agent;
      }
    } else words.push(a);
  }
  // `-` alone: the prompt is read from stdin (a `-` among words is a word).
  if (words.length === 1 && words[0] === '-') f.stdinPrompt = true;
  else f.prompt = words.join(' ').trim();
  return f;
}

export { matchModel };

export { EXIT_UNASKED, unaskedMessage };

export async function runChat(args: string[]): Promise<void> {
  const parsed = parseChatArgs(args);
  if ('error' in parsed) {
    usageError('chat', parsed.error);
    return;
  }
  if (parsed.help) {
    process.stdout.write(USAGE);
    return;
  }
  const prompt = await promptFromStdin(parsed);
  if (prompt && 'error' in prompt) {
    usageError('chat', prompt.error);
    return;
  }
  if (prompt) parsed.prompt = prompt.text;
  process.exitCode = parsed.json ? await chatJson(parsed) : await chat(parsed);
  // Nothing should keep us alive now; if something does (a stray handle), do not hang.
  setTimeout(() => process.exit(), 1_000).unref();
}

async function chat(flags: ChatFlags): Promise<number> {
  const cwd = process.cwd();
  await askWorkspaceTrust(cwd, flags.configFile);
  const term = new Term();
  let messagesShown = 0;
  const shown = new Set<string>();
  // Questions are asked on the terminal; without one nobody could answer, so none are declared.
  let asker: (q: Question, signal: AbortSignal) => Promise<QuestionAnswer> = async () => ({ cancelled: true });
  const printQuestion = (line: string) => term.outLine(term.paint('cyan', withoutControlChars(line)));
  const server = new ServerProcess({
    // --verbose streams the server's log: its stderr keeps to errors unless a level is asked for.
    args: [...(flags.configFile ? ['--config-file', flags.configFile] : []), ...(flags.logLevel ? ['--log-level', flags.logLevel] : flags.verbose ? ['--log-level', 'info'] : [])],
    cwd,
    verbose: flags.verbose,
    logSink: (chunk) => term.err(term.paint('dim', chunk, 'err')),
    onShowMessage: (m) => {
      messagesShown++;
      shown.add(m.message);
      term.errLine(m.type === 'error' ? term.paint('red', m.message, 'err') : m.type === 'warning' ? term.paint('yellow', m.message, 'err') : m.message);
    },
    ...(process.stdin.isTTY
      ? {
          askQuestion: async (q, signal) => {
            term.clearStatus();
            const a = await asker(q, signal);
            return 'answer' in a ? { answer: a.answer, cancelled: false } : { answer: null, cancelled: true };
          },
        }
      : {}),
  });
  // The reader went away (`patchbay chat "…" | head -1`): stop quietly, not with an EPIPE stack trace.
  process.stdout.on('error', () => void server.kill().finally(() => process.exit(1)));
  const renderer = new Renderer(term, cwd, shown);
  renderer.verbose = flags.verbose;
  let approver: Approver = async () => 'no';
  const totals = new UsageTotals();
  const session = new ChatSession(server, renderer, (c, s) => approver(c, s), {
    agent: flags.agent,
    verbose: flags.verbose,
    log: (l) => term.errLine(term.paint('dim', l, 'err')),
    onUsage: (u, chatId) => totals.add(u, chatId),
  });
  watchToolServers(server, (line) => session.idle.above(() => term.errLine(term.paint('yellow', line, 'err'))));
  server.listen();

  const serverLog = () => {
    if (flags.verbose) return; // already streamed
    const lines = server.logs.trimEnd().split('\n').slice(-40).join('\n');
    if (lines) term.errLine(term.paint('dim', `--- patchbay server log (last lines) ---\n${lines}`, 'err'));
  };

  const fallbackApprover: Approver = async (call) => {
    if (flags.yes) {
      term.outLine(term.paint('dim', `approved ${call.name} (--yes)`));
      return 'yes';
    }
    term.errLine(term.paint('yellow', unaskedMessage(call.name), 'err'));
    return 'unasked';
  };

  /** Shows a turn's outcome; returns the exit code it means. */
  const outcomeCode = (o: TurnOutcome): number => {
    term.status(undefined);
    term.newline();
    if (o.kind === 'done') {
      renderer.usageLine(o.usage);
      if (o.errors.length) return 1;
      if (o.stopped) return 130;
      return o.unasked.length ? EXIT_UNASKED : 0;
    }
    if (o.kind === 'login') {
      if (!messagesShown) term.errLine(term.paint('red', 'No model is configured; see `patchbay doctor`.', 'err'));
      return 1;
    }
    term.errLine(term.paint('red', `patchbay chat: ${o.message}`, 'err'));
    if (!server.alive) serverLog();
    return 1;
  };

  try {
    let config: ChatConfig;
    try {
      config = await server.initialize();
    } catch (e) {
      term.errLine(term.paint('red', `patchbay chat: could not start the server: ${e instanceof Error ? e.message : String(e)}`, 'err'));
      serverLog();
      return 1;
    }
    let model: string | undefined;
    if (flags.model) {
      const models = config.models ?? [];
      model = models.length ? matchModel(flags.model, models) : flags.model;
      if (!model) {
        term.errLine(term.paint('red', `Unknown model "${flags.model}". Available: ${models.join(', ')}`, 'err'));
        return 2;
      }
    }
    session.model = model;
    if (flags.start) {
      const code = await startIn({ server, session, term, cwd }, flags.start);
      if (code !== undefined) return code;
    }

    if (flags.prompt) {
      let stopping = false;
      const interrupt = () => {
        if (stopping || !session.busy) {
          void server.kill().finally(() => process.exit(130));
          return;
        }
        stopping = true;
        session.stop();
        term.errLine(term.paint('yellow', 'Stopping… (Ctrl-C again to quit now)', 'err'));
      };
      approver = flags.yes || !process.stdin.isTTY ? fallbackApprover : (call, signal) => term.asking(() => askOnce(call.name, signal, interrupt));
      asker = (q, signal) => term.asking(() => askQuestionOnce(q, signal, interrupt, printQuestion));
      process.on('SIGINT', interrupt);
      try {
        return outcomeCode(await session.send(flags.prompt, mentionsToContexts(flags.prompt, cwd)));
      } finally {
        process.off('SIGINT', interrupt);
        // Only the resume hint, on a terminal (stdout stays the answer; a script's logs get nothing).
        if (session.stored && process.stderr.isTTY) term.errLine(term.paint('dim', summaryLines(new UsageTotals(), session.chatId).join('\n'), 'err'));
      }
    }

    const banner = [
      ...(config.welcomeMessage ? [term.paint('dim', withoutControlChars(config.welcomeMessage, { keepNewlines: true }))] : []),
      // The session's: a resumed chat's own model and agent when --model/--agent did not choose them.
      term.paint('dim', `model: ${session.model ?? config.selectModel ?? 'none configured'} · agent: ${session.agent ?? config.selectAgent ?? 'code'} · /help for commands · /exit to quit`),
    ];
    // Piped into the REPL, a rejection no one could answer also makes the exit code 3.
    let unasked = false;
    const code = await runRepl({
      server,
      session,
      renderer,
      term,
      cwd,
      yes: flags.yes,
      setApprover: (a) => (approver = a),
      setAsker: (a) => (asker = (q, signal) => a(q, signal, printQuestion)),
      fallbackApprover,
      report: (o) => {
        if (outcomeCode(o) === EXIT_UNASKED) unasked = true;
        return o.kind !== 'failed' || server.alive;
      },
      banner,
    });
    // The exit summary: tokens, cost and how to resume (on stderr, as the usage lines are).
    const summary = summaryLines(totals, session.resumable);
    if (summary.length) term.errLine(term.paint('dim', summary.join('\n'), 'err'));
    return code === 0 && unasked ? EXIT_UNASKED : code;
  } finally {
    term.status(undefined);
    await server.shutdown();
  }
}

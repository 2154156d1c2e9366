/**
 * Interactive `patchbay chat`: a readline REPL (`> `) over one chat. Tab completes `@mentions`
 * (chat/queryContext) and `/commands` (chat/queryCommands); `/exit` or Ctrl-D quits; Ctrl-C
 * stops a running turn, and a second Ctrl-C while idle quits. Lines arriving while a turn runs
 * (piped stdin, type-ahead) wait their turn.
 */
import { createInterface } from 'node:readline/promises';
import { askOn } from './chat-ask.js';
import type { ServerProcess } from './chat-client.js';
import { complete, mentionsToContexts, type KnownMentions, type OfferedContext } from './chat-mentions.js';
import { replIdle } from './chat-repl-idle.js';
import type { Approver, ChatSession, TurnOutcome } from './chat-session.js';
import type { Term } from './chat-term.js';

export interface ReplOptions {
  server: ServerProcess;
  session: ChatSession;
  term: Term;
  cwd: string;
  /** `--yes`: approve every tool call without asking. */
  yes: boolean;
  /** Installs how tool calls get approved (the REPL asks on its own readline). */
  setApprover(a: Approver): void;
  /** Shows the outcome of a turn; returns false when the session cannot go on (server gone). */
  report(outcome: TurnOutcome): boolean;
  /** Approver used when the REPL cannot ask (stdin is not a terminal). */
  fallbackApprover: Approver;
  banner: string[];
}

const LOCAL_COMMANDS = ['exit', 'quit', 'new'];

export async function runRepl(o: ReplOptions): Promise<number> {
  const { session, server, term, cwd } = o;
  const input = process.stdin;
  const output = process.stdout.isTTY ? process.stdout : process.stderr;
  const terminal = !!input.isTTY && !!output.isTTY;
  const known: KnownMentions = new Map();
  const rl = createInterface({
    input,
    output,
    terminal,
    historySize: 1000,
    completer: terminal
      ? (line: string) =>
          complete(
            line,
            cwd,
            {
              queryContext: async (query) =>
                (await server.request<{ contexts?: OfferedContext[] }>('chat/queryContext', { chatId: session.chatId, query, contexts: [] }, 5_000))
                  .contexts ?? [],
              queryCommands: async (query) =>
                (await server.request<{ commands?: Array<{ name: string }> }>('chat/queryCommands', { chatId: session.chatId, query }, 5_000)).commands ?? [],
              localCommands: LOCAL_COMMANDS,
            },
            known,
          ).catch((): [string[], string] => [[], line])
      : undefined,
  });
  rl.setPrompt(term.paint('bold', '> '));
  session.idle = replIdle(rl, output, terminal, session, (outcome) => void o.report(outcome));
  const prompt = () => {
    if (terminal) rl.prompt();
  };

  if (o.yes || !terminal) o.setApprover(o.fallbackApprover);
  else
    o.setApprover(async (call, signal) => {
      term.clearStatus();
      return askOn(rl, call.name, signal);
    });

  let lastInterrupt = 0;
  let exitCode = 0;
  let byCommand = false;
  const interrupt = () => {
    const now = Date.now();
    if (session.busy) {
      session.stop();
      term.errLine(term.paint('yellow', 'Stopping… (Ctrl-C again to quit)', 'err'));
      lastInterrupt = now;
      return;
    }
    if (rl.line) {
      // Like a shell: Ctrl-C drops what was typed.
      output.write('^C\n');
      Object.assign(rl, { line: '', cursor: 0 });
      lastInterrupt = now;
      prompt();
      return;
    }
    if (now - lastInterrupt < 2_000) {
      if (terminal) output.write('^C');
      rl.close();
      return;
    }
    lastInterrupt = now;
    if (terminal) output.write('^C\n'); // the cursor is after the prompt
    term.errLine(term.paint('dim', '(Ctrl-C again, Ctrl-D or /exit to quit)', 'err'));
    prompt();
  };
  rl.on('SIGINT', interrupt);
  process.on('SIGINT', interrupt); // stdin not a terminal: the signal comes to the process

  for (const line of o.banner) term.outLine(line);
  prompt();
  try {
    for await (const raw of rl) {
      const line = raw.trim();
      if (!terminal && line) term.outLine(term.paint('bold', `> ${line}`));
      if (!line) {
        prompt();
        continue;
      }
      if (line === '/exit' || line === '/quit') {
        byCommand = true;
        break;
      }
      if (line === '/new') {
        session.reset();
        known.clear();
        term.outLine(term.paint('dim', 'New chat.'));
        prompt();
        continue;
      }
      const outcome = await session.send(line, mentionsToContexts(line, cwd, known));
      if (!o.report(outcome)) {
        exitCode = 1;
        break;
      }
      if (!server.alive) {
        exitCode = 1;
        break;
      }
      prompt();
    }
  } finally {
    process.off('SIGINT', interrupt);
    rl.close();
  }
  // Ctrl-C / Ctrl-D leave the cursor after the prompt.
  if (terminal && !byCommand) output.write('\n');
  return exitCode;
}

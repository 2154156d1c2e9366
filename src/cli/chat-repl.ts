/**
 * Interactive `patchbay chat`: a readline REPL (`> `) over one chat. Tab completes `@mentions`
 * (chat/queryContext) and `/commands` (chat/queryCommands); `/exit` or Ctrl-D quits; Ctrl-C
 * stops a running turn, and a second Ctrl-C while idle quits. Lines arriving while a turn runs
 * (piped stdin, type-ahead) wait their turn. A pasted block is one message (chat-paste.ts), a
 * line ending in `\` continues on the next, and `/commands` go through chat-commands.ts.
 */
import { createInterface } from 'node:readline/promises';
import { askOn, askQuestionOn, type Question, type QuestionAnswer } from './chat-ask.js';
import type { ServerProcess } from './chat-client.js';
import { LOCAL_COMMAND_NAMES, runCommand } from './chat-commands.js';
import { normalizePaste, PASTE_MODE_OFF, PASTE_MODE_ON, PasteStore, pasteFilteredInput } from './chat-paste.js';
import type { Renderer } from './chat-render.js';
import { complete, mentionsToContexts, type KnownMentions } from './chat-mentions.js';
import { replIdle } from './chat-repl-idle.js';
import type { Approver, ChatSession, TurnOutcome } from './chat-session.js';
import type { Term } from './chat-term.js';
import { ECA } from '../protocol/eca/methods.js';

export interface ReplOptions {
  server: ServerProcess;
  session: ChatSession;
  renderer: Renderer;
  term: Term;
  cwd: string;
  /** `--yes`: approve every tool call without asking. */
  yes: boolean;
  /** Installs how tool calls get approved (the REPL asks on its own readline). */
  setApprover(a: Approver): void;
  /** Installs how the server's questions get answered (on the REPL's readline). */
  setAsker(a: (q: Question, signal: AbortSignal, print: (line: string) => void) => Promise<QuestionAnswer>): void;
  /** Shows the outcome of a turn; returns false when the session cannot go on (server gone). */
  report(outcome: TurnOutcome): boolean;
  /** Approver used when the REPL cannot ask (stdin is not a terminal). */
  fallbackApprover: Approver;
  banner: string[];
}

/** Pasted lines shown above the prompt; the rest is counted. */
const PASTE_SHOWN = 8;

export async function runRepl(o: ReplOptions): Promise<number> {
  const { session, server, term, cwd } = o;
  const output = process.stdout.isTTY ? process.stdout : process.stderr;
  const terminal = !!process.stdin.isTTY && !!output.isTTY;
  const known: KnownMentions = new Map();
  const pastes = new PasteStore();
  // Assigned below: the paste callback only runs once rl exists.
  let rl: ReturnType<typeof createInterface>;
  const onPaste = (raw: string): string => {
    const text = normalizePaste(raw);
    if (!text.includes('\n')) return text.replace(/\t/g, '  '); // a Tab would complete
    if (!o.session.busy) {
      // Shown above the prompt, which is drawn again under it; the line gets a placeholder.
      const lines = text.split('\n');
      const width = Math.max(20, (process.stdout.columns || 80) - 5);
      const shown = lines.slice(0, PASTE_SHOWN).map((l) => `  │ ${l.length > width ? `${l.slice(0, width - 1)}…` : l}`);
      if (lines.length > PASTE_SHOWN) shown.push(`  │ … ${lines.length - PASTE_SHOWN} more lines`);
      output.write(`\r\x1b[K${term.paint('dim', shown.join('\n'))}\n`);
      rl.prompt(true);
    }
    return pastes.add(text);
  };
  const tty = terminal ? pasteFilteredInput(process.stdin, onPaste) : undefined;
  const input = tty?.input ?? process.stdin;
  rl = createInterface({
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
              queryContext: async (query) => (await server.request(ECA.chatQueryContext, { chatId: session.chatId, query, contexts: [] }, 5_000)).contexts,
              queryCommands: async (query) => (await server.request(ECA.chatQueryCommands, { chatId: session.chatId, query }, 5_000)).commands,
              localCommands: LOCAL_COMMAND_NAMES,
            },
            known,
          ).catch((): [string[], string] => [[], line])
      : undefined,
  });
  const mainPrompt = term.paint('bold', '> ');
  const morePrompt = term.paint('dim', '… ');
  rl.setPrompt(mainPrompt);
  /** Lines ended with `\` so far (the message continues). */
  let continued: string[] = [];
  session.idle = replIdle(rl, output, terminal, session, (outcome) => void o.report(outcome));
  const prompt = () => {
    if (terminal) rl.prompt();
  };

  if (o.yes || !terminal) o.setApprover(o.fallbackApprover);
  else o.setApprover((call, signal) => term.asking(() => askOn(rl, call.name, signal)));

  if (terminal) o.setAsker((q, signal, print) => term.asking(() => askQuestionOn(rl, q, signal, print)));

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
    if (rl.line || continued.length) {
      // Like a shell: Ctrl-C drops what was typed.
      output.write('^C\n');
      Object.assign(rl, { line: '', cursor: 0 });
      continued = [];
      rl.setPrompt(mainPrompt);
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

  // Bracketed paste on (off again however we leave; a terminal left in it garbles pastes in the shell).
  const pasteModeOff = () => output.write(PASTE_MODE_OFF);
  if (terminal) {
    output.write(PASTE_MODE_ON);
    process.on('exit', pasteModeOff);
  }
  o.renderer.toolOutputs.expandable = true;
  const commandDeps = {
    server,
    session,
    term,
    toolOutputs: o.renderer.toolOutputs,
    cwd,
    newChat: () => {
      session.reset();
      known.clear();
    },
  };
  for (const line of o.banner) term.outLine(line);
  prompt();
  try {
    for await (const raw of rl) {
      if (!terminal && raw.trim()) term.outLine(term.paint('bold', `${continued.length ? '…' : '>'} ${raw.trim()}`));
      if (/\\\s*$/.test(raw)) {
        continued.push(raw.replace(/\\\s*$/, ''));
        rl.setPrompt(morePrompt);
        prompt();
        continue;
      }
      const line = pastes.expand([...continued, raw].join('\n')).trim();
      continued = [];
      rl.setPrompt(mainPrompt);
      if (!line) {
        prompt();
        continue;
      }
      const command = await runCommand(line, commandDeps);
      if (command === 'exit') {
        byCommand = true;
        break;
      }
      if (command === 'done') {
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
    tty?.dispose();
    if (terminal) {
      pasteModeOff();
      process.off('exit', pasteModeOff);
    }
  }
  // Ctrl-C / Ctrl-D leave the cursor after the prompt.
  if (terminal && !byCommand) output.write('\n');
  return exitCode;
}

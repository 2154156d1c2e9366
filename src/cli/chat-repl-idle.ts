/**
 * What the REPL shows while it waits for input and the server speaks on its own (a provider's
 * surfaced event, an MCP server failing, a turn an `inject` started): the prompt line is
 * cleared, the text printed, and the prompt redrawn with what the user had typed so far.
 */
import type { Interface } from 'node:readline';
import type { ChatSession, IdleHooks, TurnOutcome } from './chat-session.js';

export function replIdle(rl: Interface, output: NodeJS.WritableStream, terminal: boolean, session: ChatSession, report: (o: TurnOutcome) => void): IdleHooks {
  // Only while the prompt is showing: during a turn, output goes where the turn's output goes.
  const atPrompt = () => terminal && !session.busy;
  return {
    above(show) {
      if (!atPrompt()) return show();
      output.write('\r\x1b[K');
      show();
      rl.prompt(true);
    },
    turnStarted() {
      if (terminal) output.write('\r\x1b[K');
    },
    turnEnded(outcome) {
      report(outcome);
      if (terminal) rl.prompt(true);
    },
  };
}

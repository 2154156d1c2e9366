/** Asking the user, on the terminal, whether a tool call may run. */
import type { Interface } from 'node:readline/promises';
import { createInterface } from 'node:readline/promises';
import type { ApprovalAnswer } from './chat-session.js';

export function questionText(tool: string): string {
  return `Run ${tool}? [y]es / [n]o / [a]lways for this chat `;
}

export function parseAnswer(s: string): ApprovalAnswer | undefined {
  const a = s.trim().toLowerCase();
  if (a === 'y' || a === 'yes') return 'yes';
  if (a === 'n' || a === 'no') return 'no';
  if (a === 'a' || a === 'always') return 'always';
  return undefined;
}

/**
 * Asks on `rl` until the answer is one of y/n/a. Resolves 'no' when the input closes (Ctrl-D)
 * or `signal` aborts (the turn was stopped).
 */
export async function askOn(rl: Interface, tool: string, signal: AbortSignal): Promise<ApprovalAnswer> {
  const CLOSED = Symbol('closed');
  let onClose!: () => void;
  const closed = new Promise<typeof CLOSED>((resolve) => rl.once('close', (onClose = () => resolve(CLOSED))));
  try {
    for (;;) {
      if (signal.aborted) return 'no';
      let line: string | typeof CLOSED;
      try {
        line = await Promise.race([rl.question(questionText(tool), { signal }), closed]);
      } catch {
        return 'no'; // aborted
      }
      if (line === CLOSED) return 'no';
      const answer = parseAnswer(line);
      if (answer) return answer;
    }
  } finally {
    rl.off('close', onClose);
  }
}

/** One-shot mode: a readline just for this question, closed afterwards. */
export async function askOnce(tool: string, signal: AbortSignal, onInterrupt: () => void): Promise<ApprovalAnswer> {
  const output = process.stdout.isTTY ? process.stdout : process.stderr;
  const rl = createInterface({ input: process.stdin, output, terminal: !!process.stdin.isTTY && !!output.isTTY });
  rl.on('SIGINT', onInterrupt);
  try {
    return await askOn(rl, tool, signal);
  } finally {
    rl.close();
  }
}

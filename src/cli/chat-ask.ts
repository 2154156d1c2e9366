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

/** A question from the server (`chat/askQuestion`: the model's `ask_user`, or an MCP server's elicitation). */
export interface Question {
  question: string;
  options?: Array<{ label: string; description?: string }>;
  allowFreeform: boolean;
}

export type QuestionAnswer = { answer: string } | { cancelled: true };

/** The question and its numbered options, as printed above the answer line. */
export function questionLines(q: Question): string[] {
  const options = (q.options ?? []).map((o, i) => `  ${i + 1}. ${o.label}${o.description ? ` — ${o.description}` : ''}`);
  return [`? ${q.question}`, ...options];
}

export function questionPrompt(q: Question): string {
  const n = q.options?.length ?? 0;
  if (!n) return 'Your answer (Enter alone cancels): ';
  const pick = n === 1 ? '1' : `1-${n}`;
  return q.allowFreeform ? `Pick ${pick} or type your answer (Enter alone cancels): ` : `Pick ${pick} (Enter alone cancels): `;
}

/**
 * A number (or an option's label) picks that option; other text is the answer when the question
 * allows it, else undefined (ask again); an empty line cancels (Ctrl-D would end the REPL).
 */
export function parseQuestionAnswer(line: string, q: Question): QuestionAnswer | undefined {
  const text = line.trim();
  if (!text) return { cancelled: true };
  const options = q.options ?? [];
  if (/^\d+$/.test(text)) {
    const i = Number(text) - 1;
    if (i >= 0 && i < options.length) return { answer: options[i].label };
  }
  const byLabel = options.find((o) => o.label.toLowerCase() === text.toLowerCase());
  if (byLabel) return { answer: byLabel.label };
  return q.allowFreeform || !options.length ? { answer: text } : undefined;
}

/**
 * Prints the question, then asks on `rl` until the answer fits. An empty line, the input closing, or
 * the server withdrawing the question (`signal`: the turn was stopped) cancels it.
 */
export async function askQuestionOn(rl: Interface, q: Question, signal: AbortSignal, print: (line: string) => void): Promise<QuestionAnswer> {
  const CLOSED = Symbol('closed');
  let onClose!: () => void;
  const closed = new Promise<typeof CLOSED>((resolve) => rl.once('close', (onClose = () => resolve(CLOSED))));
  try {
    for (const line of questionLines(q)) print(line);
    for (;;) {
      if (signal.aborted) return { cancelled: true };
      let line: string | typeof CLOSED;
      try {
        line = await Promise.race([rl.question(questionPrompt(q), { signal }), closed]);
      } catch {
        return { cancelled: true };
      }
      if (line === CLOSED) return { cancelled: true };
      const answer = parseQuestionAnswer(line, q);
      if (answer) return answer;
    }
  } finally {
    rl.off('close', onClose);
  }
}

/** One-shot mode: a readline just for this question, closed afterwards. */
export async function askQuestionOnce(q: Question, signal: AbortSignal, onInterrupt: () => void, print: (line: string) => void): Promise<QuestionAnswer> {
  const output = process.stdout.isTTY ? process.stdout : process.stderr;
  const rl = createInterface({ input: process.stdin, output, terminal: !!process.stdin.isTTY && !!output.isTTY });
  rl.on('SIGINT', onInterrupt);
  try {
    return await askQuestionOn(rl, q, signal, print);
  } finally {
    rl.close();
  }
}

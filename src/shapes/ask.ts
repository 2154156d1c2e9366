/**
 * Asking the user a question mid-turn (the `ask_user` tool), protocol-free: a front end that can
 * put a question to its user (ECA editors that declared `chatCapabilities.askQuestion`) offers
 * an `AskUser`; the runtime offers the tool only then.
 */

/** One choice the user may pick; `label` is what comes back as the answer. */
export interface AskOption {
  label: string;
  description?: string;
}

export interface AskQuestion {
  question: string;
  options?: AskOption[];
  /** Whether the user may type their own answer instead of picking an option. */
  allowFreeform: boolean;
  /** The tool call that asks, so a front end can show the question in its place. */
  toolCallId?: string;
}

/** The user's answer, or that they dismissed the question. */
export type AskAnswer = { answered: true; answer: string } | { answered: false };

/** Rejects when `signal` aborts (the turn stopped) or the front end fails to ask. */
export type AskUser = (chatId: string, question: AskQuestion, signal: AbortSignal) => Promise<AskAnswer>;

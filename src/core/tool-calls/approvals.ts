/**
 * The questions a chat's tool calls wait on. One place asks, answers and settles them, so a
 * stop, delete, clear or shutdown can never leave a turn waiting on a question no one will answer.
 */
import type { RejectReason } from '../events.js';

/** `saveForSession`: the answer holds for every later call of the same tool in this chat (allow always, reject always). */
export type ApprovalAnswer = { approved: true; saveForSession?: boolean } | { approved: false; reason: RejectReason; saveForSession?: boolean };

export class Approvals {
  private readonly waiting = new Map<string, (answer: ApprovalAnswer) => void>();

  /** Waits for the user's answer about one tool call; an aborted `signal` answers "stopped" at once. */
  ask(toolCallId: string, signal?: AbortSignal): Promise<ApprovalAnswer> {
    if (signal?.aborted) return Promise.resolve(STOPPED);
    return new Promise((resolve) => this.waiting.set(toolCallId, resolve));
  }

  /** The user's answer; false when no call with that id waits (already answered, or unknown). */
  respond(toolCallId: string, answer: ApprovalAnswer): boolean {
    const resolve = this.waiting.get(toolCallId);
    if (!resolve) return false;
    this.waiting.delete(toolCallId);
    resolve(answer);
    return true;
  }

  /** Answers every waiting question "stopped" (on stop, delete, clear and shutdown), so the turn unwinds. */
  settleAll(): void {
    for (const id of [...this.waiting.keys()]) this.respond(id, STOPPED);
  }

  get size(): number {
    return this.waiting.size;
  }
}

const STOPPED: ApprovalAnswer = { approved: false, reason: 'stopped' };

/**
 * What `patchbay chat` says as it ends: the tokens this run used (summed over every model step of
 * its turns, from the server's `usage` contents: `messageInputTokens`, cache reads and writes
 * included, and `messageOutputTokens`), the cost when the model is priced (the steps'
 * `lastMessageCost`, USD), and the command that resumes the chat.
 */
import type { Usage } from './chat-render.js';
import { escapeControlChars } from '../util/text.js';

export class UsageTotals {
  input = 0;
  output = 0;
  steps = 0;
  /**
   * Per chat: its cost before this run's first step and after its last (`sessionCost`, the chat's
   * own total). Their difference is this run's cost; adding up the steps' costs instead would add
   * up the rounding of each (the server rounds to the cent above one cent).
   */
  private readonly costs = new Map<string, { before: number; after: number }>();

  add(u: Usage, chatId: string): void {
    this.steps++;
    this.input += u.messageInputTokens ?? 0;
    this.output += u.messageOutputTokens ?? 0;
    const step = Number(u.lastMessageCost);
    const chat = Number(u.sessionCost ?? u.lastMessageCost);
    if (u.lastMessageCost === undefined || !Number.isFinite(step) || !Number.isFinite(chat)) return;
    const seen = this.costs.get(chatId);
    if (seen) seen.after = chat;
    else this.costs.set(chatId, { before: Math.max(0, chat - step), after: chat });
  }

  /** USD this run; undefined while no step was priced. */
  get cost(): number | undefined {
    if (!this.costs.size) return undefined;
    let sum = 0;
    for (const c of this.costs.values()) sum += Math.max(0, c.after - c.before);
    return sum;
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** `$0.001234` below a cent (so a cheap run does not read $0.00, as the server's costs), else `$1.23`. */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(usd < 0.01 ? 6 : 2)}`;
}

/**
 * The command that resumes `chatId` (ids are UUIDs or an editor's own: quoted when not plain, and
 * control characters shown as `\uXXXX`, never sent to the terminal).
 */
export function resumeCommand(chatId: string): string {
  return `patchbay chat --resume ${/^[\w.:-]+$/.test(chatId) ? chatId : `'${escapeControlChars(chatId).replace(/'/g, `'\\''`)}'`}`;
}

/**
 * The exit summary's lines: tokens (when a model answered), cost (when priced), and how to resume
 * (when the chat is stored). Empty when nothing happened.
 */
export function summaryLines(totals: UsageTotals, chatId: string | undefined): string[] {
  const lines: string[] = [];
  if (totals.steps) {
    const cost = totals.cost !== undefined ? ` · ${formatUsd(totals.cost)}` : '';
    lines.push(`tokens: ${fmt(totals.input)} in, ${fmt(totals.output)} out${cost}`);
  }
  if (chatId) lines.push(`resume: ${resumeCommand(chatId)}`);
  return lines;
}

/**
 * Stored chats in `patchbay chat`: `--continue` / `--resume [id]` at start, and the REPL's
 * `/chats`, `/resume`, `/rewind` and `/fork`. Everything goes through the server's ECA methods:
 * `chat/list` (with patchbay's `folder`: this folder's chats, newest first), `chat/open` (its
 * replay, which arrives before the answer, is gathered rather than shown, and its last exchanges
 * are printed instead), `chat/history` (the user messages' content ids, for `/rewind`),
 * `chat/rollback` (messages and file changes) and `chat/fork` (without a content id: the whole chat).
 */
import { createInterface } from 'node:readline/promises';
import type { ChatSummary } from '../protocol/eca/chat.js';
import type { ContentReceived } from '../protocol/eca/content.js';
import { ECA } from '../protocol/eca/methods.js';
import { agentSchema } from '../shapes/agent.js';
import { escapeControlChars, withoutControlChars } from '../util/text.js';
import type { ServerProcess } from './chat-client.js';
import type { ChatSession } from './chat-session.js';
import type { Term } from './chat-term.js';

export interface ResumeDeps {
  server: ServerProcess;
  session: ChatSession;
  term: Term;
  cwd: string;
  /** Where a failure's message goes instead of the terminal (`--json`: an `error` event). */
  onError?: (message: string) => void;
}

/** How many chats `/chats` and the picker show. */
export const LISTED = 20;

/** "just now", "5 min ago", "3 h ago", "2 days ago" (from epoch milliseconds). */
export function age(at: number | undefined, now: number): string {
  if (at === undefined) return 'unknown age';
  const s = Math.max(0, Math.round((now - at) / 1000));
  if (s < 60) return 'just now';
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} days ago`;
}

/** A chat's title for one line: control characters out, bidi overrides shown as escapes (they would reverse the rest of the line), long titles cut. */
export function titleOf(c: { title?: string }, width = 60): string {
  const t = escapeControlChars(withoutControlChars((c.title ?? '').replace(/\s+/g, ' '))).trim() || 'Untitled';
  return t.length > width ? `${t.slice(0, width - 1)}…` : t;
}

/**
 * A chat id as the terminal shows it: an editor may name its chats (`chat/prompt`'s `chatId`), so
 * an id can hold escape sequences (a window title, the clipboard); they are shown as `\uXXXX`.
 */
export function shownId(id: string): string {
  return escapeControlChars(id);
}

/** The numbered list: `  1. Title · 4 messages · 5 min ago · <id>`, `*` marking the current chat. */
export function chatListLines(chats: ChatSummary[], now: number, currentId?: string): string[] {
  const digits = String(chats.length).length;
  return chats.map((c, i) => {
    const mark = c.id === currentId ? '*' : ' ';
    const messages = `${c.messageCount} message${c.messageCount === 1 ? '' : 's'}`;
    return `${mark}${String(i + 1).padStart(digits + 1)}. ${titleOf(c)} · ${messages} · ${age(c.updatedAt ?? c.createdAt, now)} · ${shownId(c.id)}`;
  });
}

export type Pick = { chat: ChatSummary } | { id: string } | { error: string };

/**
 * What `/resume <arg>` or the picker's answer names: a number of the list, a chat id of the list
 * or the unique start of one (at least 4 characters); anything else is taken as an id of another
 * folder's chat, which `chat/open` then finds or not.
 */
export function pickChat(arg: string, chats: ChatSummary[]): Pick {
  const a = arg.trim();
  if (!a) return { error: 'no chat named' };
  const starts = a.length >= 4 ? chats.filter((c) => c.id.startsWith(a)) : [];
  if (/^\d+$/.test(a) && a.length <= 4) {
    const n = Number(a);
    if (n >= 1 && n <= chats.length) return { chat: chats[n - 1] };
    // Not a number of the list: the start of an id made of digits (`1234abcd-…`) when one has it.
    if (starts.length !== 1) return { error: chats.length ? `no chat ${n}: pick 1 to ${chats.length}` : 'this folder has no chats yet' };
  }
  const exact = chats.find((c) => c.id === a);
  if (exact) return { chat: exact };
  if (starts.length === 1) return { chat: starts[0] };
  if (starts.length > 1) return { error: `"${a}" starts ${starts.length} chat ids: give more of it` };
  return { id: a };
}

/** One line of a message for the resume preview: its first line, cut to `width`. */
function previewLine(text: string, width: number): string {
  const lines = withoutControlChars(text, { keepNewlines: true }).trim().split('\n');
  const first = lines[0].trim();
  const cut = first.length > width ? `${first.slice(0, width - 1)}…` : first;
  return lines.length > 1 && cut === first ? `${cut} …` : cut;
}

/**
 * The last `n` exchanges of a replayed chat (`chat/open`'s contents), as `> question` and
 * `  answer` lines; with how many user messages it has in all.
 */
export function recentExchanges(contents: ContentReceived[], chatId: string, n = 2, width = 90): { lines: string[]; prompts: number } {
  const turns: Array<{ user: string; answer: string; tools: number }> = [];
  for (const c of contents) {
    if (c.chatId !== chatId) continue;
    const k = c.content;
    if (c.role === 'user' && k.type === 'text') turns.push({ user: k.text, answer: '', tools: 0 });
    else if (turns.length && c.role === 'assistant' && k.type === 'text') turns[turns.length - 1].answer += k.text;
    else if (turns.length && k.type === 'toolCalled') turns[turns.length - 1].tools++;
  }
  const lines: string[] = [];
  for (const t of turns.slice(-n)) {
    lines.push(`> ${previewLine(t.user, width)}`);
    const tools = t.tools ? `(${t.tools} tool call${t.tools === 1 ? '' : 's'}) ` : '';
    const answer = t.answer.trim() ? previewLine(t.answer, width - tools.length) : t.tools ? '' : '(no answer)';
    if (tools || answer) lines.push(`  ${tools}${answer}`);
  }
  return { lines, prompts: turns.length };
}

/** This folder's chats, newest first. */
export async function folderChats(server: ServerProcess, cwd: string, limit = LISTED): Promise<ChatSummary[]> {
  return (await server.request(ECA.chatList, { folder: cwd, sortBy: 'updatedAt', limit })).chats;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * Opens a stored chat and goes on in it: its replay is not shown, its title, size and last
 * exchanges are. `keep`: the session's model and agent, when set, stay (the command line's). `false` (with the reason printed) when the server has no such chat.
 */
export async function resumeChat(d: ResumeDeps, chatId: string, keep = false): Promise<boolean> {
  const { server, session, term: t } = d;
  // `--json`: the reason is its `error` event (stdout), not a line on stderr.
  const failed = (message: string): false => {
    if (d.onError) d.onError(message);
    else t.errLine(t.paint('red', message, 'err'));
    return false;
  };
  let opened;
  try {
    opened = await session.gather(() => server.request(ECA.chatOpen, { chatId }));
  } catch (e) {
    return failed(`Could not open chat ${shownId(chatId)}: ${errorText(e)}`);
  }
  const { result, contents } = opened;
  if (!result.found) return failed(`No chat ${shownId(chatId)}. /chats (or patchbay chat --resume) lists this folder's chats.`);
  const id = result.chatId ?? chatId;
  session.adopt(id);
  // The chat's own model and agent (as an editor realigns them on chat/open), unless the command
  // line chose them for this run (--model, --agent with --continue/--resume). A model no longer
  // configured: the default one.
  const sel = result.selection;
  if (sel && !(keep && session.model)) session.model = sel.model ?? undefined;
  const agent = agentSchema.safeParse(sel?.agent);
  if (agent.success && !(keep && session.agent)) session.agent = agent.data;
  const recent = recentExchanges(contents, id);
  t.outLine(t.paint('bold', `Resumed: ${titleOf(result)} · ${recent.prompts} prompt${recent.prompts === 1 ? '' : 's'} · ${shownId(id)}`));
  for (const line of recent.lines) t.outLine(t.paint('dim', line));
  return true;
}

/** `/chats`: this folder's chats, numbered for `/resume <n>`. */
export async function listChats(d: ResumeDeps): Promise<void> {
  const t = d.term;
  let chats: ChatSummary[];
  try {
    chats = await folderChats(d.server, d.cwd);
  } catch (e) {
    return t.errLine(t.paint('red', `Could not list the chats: ${errorText(e)}`, 'err'));
  }
  if (!chats.length) return t.outLine(t.paint('dim', 'No chats in this folder yet.'));
  t.outLine(t.paint('bold', `Chats of ${d.cwd} (newest first):`));
  for (const line of chatListLines(chats, Date.now(), d.session.stored ? d.session.chatId : undefined)) t.outLine(line);
  t.outLine(t.paint('dim', '/resume <n> opens one.'));
}

/** `/resume <n|id>`. */
export async function resumeCommand(d: ResumeDeps, arg: string): Promise<boolean> {
  const t = d.term;
  if (!arg) {
    t.errLine(t.paint('red', 'Usage: /resume <n|id> (/chats lists them)', 'err'));
    return false;
  }
  let chats: ChatSummary[];
  try {
    chats = await folderChats(d.server, d.cwd);
  } catch (e) {
    t.errLine(t.paint('red', `Could not list the chats: ${errorText(e)}`, 'err'));
    return false;
  }
  const pick = pickChat(arg, chats);
  if ('error' in pick) {
    t.errLine(t.paint('red', `/resume: ${pick.error}`, 'err'));
    return false;
  }
  return resumeChat(d, 'chat' in pick ? pick.chat.id : pick.id);
}

/** Parses `/rewind [n]`: a positive whole number, 1 when absent. */
export function rewindCount(arg: string): number | undefined {
  if (!arg.trim()) return 1;
  const n = Number(arg.trim());
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** `/rewind [n]`: the last n prompts, their answers and their file changes, rolled back. */
export async function rewind(d: ResumeDeps, arg: string): Promise<void> {
  const { server, session, term: t } = d;
  const n = rewindCount(arg);
  if (n === undefined) return t.errLine(t.paint('red', 'Usage: /rewind [n] (n: how many of the last prompts, default 1)', 'err'));
  if (!session.stored) return t.outLine(t.paint('dim', 'Nothing to rewind yet.'));
  try {
    const history = await server.request(ECA.chatHistory, { chatId: session.chatId });
    if (history.error) return t.errLine(t.paint('red', `/rewind: ${history.error.message}`, 'err'));
    const prompts = (history.contents ?? []).flatMap((c) =>
      c.chatId === session.chatId && c.role === 'user' && c.content.type === 'text' && c.content.contentId ? [{ id: c.content.contentId, text: c.content.text }] : [],
    );
    if (!prompts.length) return t.outLine(t.paint('dim', 'Nothing to rewind yet.'));
    if (n > prompts.length) return t.errLine(t.paint('red', `/rewind: the chat has ${prompts.length} prompt${prompts.length === 1 ? '' : 's'}`, 'err'));
    const first = prompts[prompts.length - n];
    const { result } = await session.gather(() => server.request(ECA.chatRollback, { chatId: session.chatId, contentId: first.id }));
    t.outLine(t.paint('bold', `Rewound ${n} prompt${n === 1 ? '' : 's'}, back to before: ${previewLine(first.text, 70)}`));
    if (result.notRestored?.length) {
      t.errLine(t.paint('yellow', 'Left as they are:', 'err'));
      for (const f of result.notRestored) t.errLine(t.paint('yellow', `  ${withoutControlChars(f.path)}: ${withoutControlChars(f.reason)}`, 'err'));
    }
  } catch (e) {
    t.errLine(t.paint('red', `/rewind: ${errorText(e)}`, 'err'));
  }
}

/** `/fork`: the whole chat copied into a new one, which the REPL goes on in. */
export async function fork(d: ResumeDeps): Promise<void> {
  const { server, session, term: t } = d;
  if (!session.stored) return t.outLine(t.paint('dim', 'Nothing to fork yet: send a prompt first.'));
  const from = session.chatId;
  try {
    const { result } = await session.gather(() => server.request(ECA.chatFork, { chatId: from }));
    if (!result.chatId) return t.errLine(t.paint('red', '/fork: the server made no fork', 'err'));
    session.adopt(result.chatId);
    t.outLine(t.paint('bold', `Forked: now in ${shownId(result.chatId)} (the original is ${shownId(from)})`));
  } catch (e) {
    t.errLine(t.paint('red', `/fork: ${errorText(e)}`, 'err'));
  }
}

/** How `patchbay chat` was asked to start in a stored chat. */
export type StartIn = { continue: true } | { resume: string | true };

/**
 * `--continue` / `--resume [id]` before the first prompt. Returns undefined when the chat is open,
 * else the exit code: 2 for an unknown id or no id without a terminal, 1 when there is nothing to
 * continue or the picker was left without a pick, 130 when it was left with Ctrl-C.
 */
export async function startIn(d: ResumeDeps, how: StartIn): Promise<number | undefined> {
  const t = d.term;
  const fail = (code: number, message: string) => {
    if (d.onError) d.onError(message);
    else t.errLine(t.paint('red', `patchbay chat: ${message}`, 'err'));
    return code;
  };
  let chats: ChatSummary[];
  try {
    chats = await folderChats(d.server, d.cwd);
  } catch (e) {
    return fail(1, `could not list the chats: ${errorText(e)}`);
  }
  let id: string;
  if ('continue' in how) {
    if (!chats.length) return fail(1, `no chat to continue in ${d.cwd}`);
    id = chats[0].id;
  } else if (how.resume !== true) {
    const pick = pickChat(how.resume, chats);
    if ('error' in pick) return fail(2, `--resume ${how.resume}: ${pick.error}`);
    id = 'chat' in pick ? pick.chat.id : pick.id;
  } else {
    if (!process.stdin.isTTY) return fail(2, '--resume needs a chat id when stdin is not a terminal (or use --continue)');
    if (!chats.length) return fail(1, `no chats in ${d.cwd} yet`);
    const picked = await picker(t, chats);
    // Ctrl-C quits with 130, as at the trust question and during a turn; Enter alone or Ctrl-D: 1.
    if (picked === 'interrupted') return fail(130, 'no chat picked (Ctrl-C)');
    if (!picked) return fail(1, 'no chat picked');
    id = picked.id;
  }
  if (await resumeChat(d, id, true)) return undefined;
  return 'continue' in how ? 1 : 2;
}

/** The picker: the numbered list, then a number (or id) until one fits; Enter alone or Ctrl-D leaves, Ctrl-C too ('interrupted'). */
async function picker(t: Term, chats: ChatSummary[]): Promise<ChatSummary | 'interrupted' | undefined> {
  t.errLine(t.paint('bold', 'Resume which chat? (newest first)', 'err'));
  for (const line of chatListLines(chats, Date.now())) t.errLine(line);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  // A pending question never settles when the input closes (Node 20): raced with the close.
  const closed = new Promise<undefined>((resolve) => rl.once('close', () => resolve(undefined)));
  // Ctrl-C at the picker leaves it (readline's terminal mode turns it into SIGINT on rl).
  let interrupted = false;
  rl.once('SIGINT', () => {
    interrupted = true;
    rl.close();
  });
  try {
    for (;;) {
      const answer = await Promise.race([rl.question(`Pick 1-${chats.length} (Enter alone quits): `).catch(() => undefined), closed]);
      // Ctrl-C and Ctrl-D leave the cursor after the question: what follows starts a line of its own.
      if (interrupted || answer === undefined) process.stderr.write('\n');
      if (interrupted) return 'interrupted';
      if (answer === undefined || !answer.trim()) return undefined;
      const pick = pickChat(answer, chats);
      if ('chat' in pick) return pick.chat;
      t.errLine(t.paint('yellow', 'error' in pick ? pick.error : `no chat ${answer.trim()} in this list`, 'err'));
    }
  } finally {
    rl.close();
  }
}

/**
 * How `patchbay chat` shows a turn's `chat/contentReceived` contents: assistant text streamed to
 * stdout, reasoning dimmed, progress as the spinner, tool calls as one line each (with the
 * arguments and diff when the user must approve), usage after the turn. A subagent's activity
 * label and its tool calls are indented under its `spawn_agent` line while it runs.
 */
import { relative, isAbsolute } from 'node:path';
import type { ChatContent, Role } from '../protocol/eca/content.js';
import type { Term } from './chat-term.js';
import { ToolOutputs } from './chat-tool-output.js';
import { SubagentCalls, type SubagentCall } from './chat-subagents.js';
import type { TurnView } from './chat-session.js';
import { WAITING_APPROVAL_TEXT, WAITING_SUBAGENT_TEXT } from '../server/eca/eca-events.js';

type Content<T extends ChatContent['type']> = Extract<ChatContent, { type: T }>;
export type ToolCallRun = Content<'toolCallRun'>;
export type Usage = Content<'usage'>;

/** How far a subagent's lines are indented under its `spawn_agent` line. */
const SUB_INDENT = '  ';

export class Renderer implements TurnView {
  /** Tool calls whose prepare line was shown. */
  private readonly prepared = new Map<string, { name: string; args: string }>();
  /** Tool calls whose arguments/diff were shown for approval. */
  private readonly shown = new Set<string>();
  /** Tool calls rejected because no one could be asked (stdin not a terminal, no --yes). */
  private readonly unaskedIds = new Set<string>();
  private reasoning = false;
  /** Tenths of a percentage progress last printed without a status line. */
  private lastStep: number | undefined;
  private lastWait: string | undefined;

  /** Finished calls' outputs: previewed under their line, whole through `/expand`. */
  readonly toolOutputs: ToolOutputs;
  /** `--verbose`: notes on patchbay's workings (the server marks them `internal`) are shown too. */
  verbose = false;
  /** The `spawn_agent` calls of this turn, by the subagent chat each runs. */
  private readonly subagents = new SubagentCalls();

  constructor(
    private readonly term: Term,
    private readonly cwd: string,
    /** `$/showMessage` texts already printed: the server says some (config errors) in the chat too. */
    private readonly messagesShown: ReadonlySet<string> = new Set(),
  ) {
    this.toolOutputs = new ToolOutputs(term);
  }

  /**
   * Shows one content; returns the failure text when it reports a failed turn. `stopping`: the
   * user stopped the turn, so what the server says now is about the stop (shown in yellow).
   */
  content(role: Role, c: ChatContent, stopping = false): string | undefined {
    const t = this.term;
    switch (c.type) {
      case 'text':
        if (role === 'assistant') {
          this.endReasoning();
          t.out(c.text);
        } else if (role === 'system') {
          const text = c.text.replace(/^\n+/, '').replace(/\s+$/, '');
          if (!text || text.split('\n').every((l) => this.messagesShown.has(l))) return;
          // The server marks the text that says why the turn failed (server/eca/eca-events.ts).
          if (c.error) {
            t.errLine(t.paint('red', text, 'err'));
            return text;
          }
          // …and the notes on its own workings ("prompt cache invalidated"): jargon, unless asked for.
          if (c.internal) {
            if (this.verbose) t.outLine(t.paint('dim', text));
            return;
          }
          t.outLine(stopping ? t.paint('yellow', text) : text);
        }
        return; // role 'user': the echo of what was just typed
      case 'url':
        t.outLine(`${c.title}: ${c.url}`);
        return;
      case 'progress':
        if (c.state !== 'running') {
          t.status(undefined);
          return;
        }
        if (t.live) {
          // What the subagent does (its own status) says more than that we wait for it.
          if (c.text !== WAITING_SUBAGENT_TEXT || !this.subagents.running) t.status(withBar(c.text || 'Working'));
          return;
        }
        // No status line (not a terminal): a retry is still worth a line (it explains the wait),
        // a wait the user should know of (MCP servers still starting) is said once…
        if (c.text.startsWith('Retrying in ')) {
          t.errLine(c.text);
          return;
        }
        // (The wait for an approval is a wait for this client: it asks, or answers for --yes.)
        if (c.text.startsWith('Waiting for ') && c.text !== this.lastWait && c.text !== WAITING_APPROVAL_TEXT) {
          this.lastWait = c.text;
          t.errLine(c.text);
          return;
        }
        // …and a long download still reports every tenth.
        if (percentStep(c.text) !== this.lastStep) {
          this.lastStep = percentStep(c.text);
          if (this.lastStep !== undefined) t.errLine(c.text);
        }
        return;
      case 'usage':
        return; // shown after the turn (see usageLine)
      case 'reasonStarted':
        t.newline();
        t.outLine(t.paint('dim', 'Thinking…'));
        this.reasoning = true;
        return;
      case 'reasonText':
        t.out(t.paint('dim', c.text));
        return;
      case 'reasonFinished':
        this.reasoning = false;
        t.outLine(t.paint('dim', `(thought for ${(c.totalTimeMs / 1000).toFixed(1)} s)`));
        return;
      case 'toolCallPrepare':
        this.prepare(c);
        return;
      case 'toolCallRun':
        if (c.manualApproval) this.approvalBlock(c);
        else t.status(c.summary ?? c.name);
        this.subagentCall(c);
        return;
      case 'toolCallRunning':
        t.status(c.summary ?? c.name);
        this.subagentCall(c);
        return;
      case 'toolCalled': {
        this.subagents.finished(c.id);
        this.calledLine(c);
        this.toolOutputs.add(c, !c.error); // a failure's first line is already on its ✗ line
        return;
      }
      case 'image':
        // A terminal draws no images: it names them (a tool's output, or an attachment on replay).
        t.outLine(t.paint('dim', `[image ${c.mediaType}, ${Math.round((c.base64.length * 3) / 4 / 1024)} KB]`));
        return;
      case 'hookActionStarted':
        t.status(`Running hook '${c.name}'`);
        return;
      case 'hookActionFinished': {
        // A line per run, as the editors' hook blocks; what failed says why.
        const why = c.status !== 0 && c.error ? `: ${firstLine(c.error)}` : '';
        t.outLine(t.paint(c.status === 0 ? 'dim' : 'yellow', `hook '${c.name}' exited ${c.status}${why}`));
        return;
      }
      case 'toolCallRejected':
        this.subagents.finished(c.id);
        this.rejectedLine(c);
        return;
    }
  }

  /** `✓ name (n ms)`, or `✗ name: why`. */
  private calledLine(c: Content<'toolCalled'>, indent = ''): void {
    const t = this.term;
    const ms = `(${Math.round(c.totalTimeMs)} ms)`;
    if (c.error) {
      const first = firstLine(c.outputs.map((o) => (o.type === 'text' ? o.text : '')).join('\n')) || 'failed';
      t.outLine(`${indent}${t.paint('red', '✗')} ${c.name}: ${first}`);
    } else {
      const change = c.details?.type === 'fileChange' ? ` ${this.path(c.details.path)} ${t.paint('green', `+${c.details.linesAdded}`)} ${t.paint('red', `-${c.details.linesRemoved}`)}` : '';
      t.outLine(`${indent}${t.paint('green', '✓')} ${c.name}${change} ${t.paint('dim', ms)}`);
    }
  }

  private rejectedLine(c: Content<'toolCallRejected'>, indent = ''): void {
    const t = this.term;
    t.outLine(`${indent}${t.paint('yellow', '⊘')} ${c.name} rejected (${this.unaskedIds.has(c.id) ? 'no one could be asked' : rejectReason(c.reason)})`);
  }

  /**
   * A `spawn_agent` call starts its subagent: on a terminal its line is printed now (until now it
   * was the status line), then the activity label, indented under it.
   */
  private subagentCall(c: Content<'toolCallRun' | 'toolCallRunning'>): void {
    const seen = this.subagents.note(c);
    if (!seen?.fresh) return;
    const t = this.term;
    if (t.live && !this.shown.has(c.id)) t.outLine(`${t.paint('cyan', '•')} ${c.name}`);
    t.outLine(`${SUB_INDENT}${t.paint('magenta', seen.sub.label)}`);
  }

  /**
   * A content of a subagent's chat: its tool calls, each on a line indented under the
   * `spawn_agent` call (an approval with its arguments), what it does now in the status line
   * (`explorer: exploring codebase · read_file`), and why it failed. Its text is the call's result.
   */
  subagentContent(chatId: string, role: Role, c: ChatContent): void {
    const sub = this.subagents.of(chatId);
    if (!sub) return;
    const t = this.term;
    // Two at once: each line says whose it is.
    const indent = this.subagents.running > 1 ? `${SUB_INDENT}${t.paint('dim', `[${sub.agent}]`)} ` : SUB_INDENT;
    const status = (what: string) => t.status(`${subLabel(sub)} · ${what}`);
    switch (c.type) {
      case 'toolCallPrepare':
        return status(c.name);
      case 'toolCallRun':
        if (c.manualApproval) this.approvalBlock(c, indent);
        else status(c.summary ?? c.name);
        return;
      case 'toolCallRunning':
        return status(c.summary ?? c.name);
      case 'toolCalled':
        return this.calledLine(c, indent);
      case 'toolCallRejected':
        return this.rejectedLine(c, indent);
      case 'progress':
        if (c.state === 'running') status(c.text || 'Working');
        return;
      case 'text':
        if (role === 'system' && c.error) t.outLine(`${indent}${t.paint('red', c.text.trim())}`);
        else if (role === 'system' && this.verbose && c.text.trim()) t.outLine(`${indent}${t.paint('dim', c.text.trim())}`);
        else if (role === 'assistant') status('writing');
        return;
      default:
        return;
    }
  }

  private endReasoning(): void {
    if (!this.reasoning) return;
    this.reasoning = false;
    this.term.newline();
  }

  /** One line per call: the spinner line on a TTY, else a printed line the first time. */
  private prepare(c: Content<'toolCallPrepare'>): void {
    this.endReasoning();
    const seen = this.prepared.get(c.id);
    if (!seen) {
      this.prepared.set(c.id, { name: c.name, args: c.argumentsText });
      if (!this.term.live) this.term.outLine(`${this.term.paint('cyan', '•')} ${c.name}`);
    } else seen.args += c.argumentsText;
    if (this.term.live) this.term.status(`${c.name} ${this.prepared.get(c.id)!.args}`);
  }

  /** The tool, its arguments and (for file changes) the diff, before asking. */
  private approvalBlock(c: ToolCallRun, indent = ''): void {
    const t = this.term;
    if (this.shown.has(c.id)) return;
    this.shown.add(c.id);
    t.status(undefined);
    t.outLine(
      `${indent}${t.paint('yellow', '?')} ${t.paint('bold', c.name)}${c.server && c.server !== 'eca' && c.server !== 'patchbay' ? t.paint('dim', ` (${c.server})`) : ''}${c.summary ? ` — ${c.summary}` : ''}`,
    );
    const diff = c.details?.type === 'fileChange' ? c.details.diff : '';
    const isDiff = diff !== '';
    for (const [k, v] of Object.entries(c.arguments)) {
      if (isDiff && typeof v === 'string' && v.includes('\n')) continue; // the diff shows it
      t.outLine(`${indent}  ${t.paint('dim', `${k}:`)} ${oneLine(v, 160)}`);
    }
    if (isDiff) {
      let inHunk = false;
      for (const line of diff.replace(/\n$/, '').split('\n')) {
        inHunk ||= line.startsWith('@@');
        t.outLine(`${indent}  ${this.diffLine(line, inHunk)}`);
      }
    }
  }

  private diffLine(line: string, inHunk: boolean): string {
    const t = this.term;
    if (!inHunk) {
      const header = /^(\+\+\+|---) (\S+)(.*)$/.exec(line);
      return t.paint('bold', header ? `${header[1]} ${this.path(header[2])}${header[3]}` : line);
    }
    if (line.startsWith('+')) return t.paint('green', line);
    if (line.startsWith('-')) return t.paint('red', line);
    if (line.startsWith('@@')) return t.paint('cyan', line);
    return line;
  }

  /** After the turn: one short line with tokens and costs. */
  usageLine(u: Usage | undefined): void {
    if (!u) return;
    const t = this.term;
    // `sessionTokens` is how full the context window is after the last request (as ECA reports it).
    const window = u.limit?.context ? ` of ${fmt(u.limit.context)} (${Math.round((u.sessionTokens / u.limit.context) * 100)}%)` : '';
    const parts = [`context ${fmt(u.sessionTokens)}${window} tokens`];
    if (u.messageInputTokens !== undefined || u.messageOutputTokens !== undefined) {
      parts[0] += ` (last: in ${fmt(u.messageInputTokens ?? 0)}, out ${fmt(u.messageOutputTokens ?? 0)})`;
    }
    if (u.lastMessageCost !== undefined) parts.push(`$${u.lastMessageCost}${u.sessionCost !== undefined ? ` (chat $${u.sessionCost})` : ''}`);
    t.errLine(t.paint('dim', parts.join(' · '), 'err'));
  }

  /** Short display path: relative to cwd when inside it. */
  path(p: string): string {
    if (!isAbsolute(p)) return p;
    const rel = relative(this.cwd, p);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : p;
  }

  /** A turn that ended short of a full answer says why (its `stopReason`); other ends say nothing. */
  stopNote(stopReason: string | undefined): void {
    const note = stopReason === 'max_tokens' ? 'The answer was cut off: the model reached its output token limit.' : stopReason === 'refusal' ? 'The model declined to answer.' : undefined;
    if (note) this.term.outLine(this.term.paint('yellow', note));
  }

  /** The call is about to be rejected because no one could be asked: say so, not "by you". */
  unasked(id: string): void {
    this.unaskedIds.add(id);
  }

  /** Clears per-turn state. */
  reset(): void {
    this.unaskedIds.clear();
    this.prepared.clear();
    this.shown.clear();
    this.subagents.clear();
    this.reasoning = false;
  }
}

/** `explorer: exploring codebase (step 2/5)`. */
function subLabel(sub: SubagentCall): string {
  const step = sub.step > 1 || sub.maxSteps ? ` (step ${sub.step}${sub.maxSteps ? `/${sub.maxSteps}` : ''})` : '';
  return `${sub.label}${step}`;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l) ?? ''
  );
}

function oneLine(v: unknown, max: number): string {
  let s = typeof v === 'string' ? (v.includes('\n') ? JSON.stringify(v) : v) : JSON.stringify(v);
  if (s === undefined) s = String(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function rejectReason(reason: string): string {
  switch (reason) {
    case 'user':
    case 'userChoiceDeny':
    case 'user-choice':
      return 'by you';
    case 'userConfigDeny':
    case 'user-config':
      return 'by configuration';
    case 'userPromptStop':
      return 'prompt stopped';
    case 'hookRejected':
      return 'by a hook';
    default:
      return reason;
  }
}

const PERCENT = /^(.*?: )(\d{1,3})% (.*)$/;

/** `Downloading m: 45% (…)` → `Downloading m: 45% [#########           ] (…)`; other texts as they are. */
export function withBar(text: string): string {
  const m = PERCENT.exec(text);
  if (!m) return text;
  const pct = Math.min(100, Number(m[2]));
  const filled = Math.round(pct / 5);
  return `${m[1]}${pct}% [${'#'.repeat(filled)}${' '.repeat(20 - filled)}] ${m[3]}`;
}

function percentStep(text: string): number | undefined {
  const m = PERCENT.exec(text);
  return m ? Math.floor(Number(m[2]) / 10) : undefined;
}

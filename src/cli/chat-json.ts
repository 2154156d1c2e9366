/**
 * `patchbay chat --json "prompt"`: the one-shot chat for scripts. stdout carries one JSON object
 * per line (JSONL), each with a `type`, and nothing else: no colors, no spinner, no prompts. The
 * last line is always `done`, with the turn's `stopReason` (the server's: docs/client-authors.md,
 * "How a turn ended") and the exit code the process exits with (the same as without --json). Human-facing
 * text (the server's log with --verbose, a question asked on a terminal) goes to stderr.
 *
 * The schema (version 1; new fields and new types may be added, a script skips what it does
 * not know — documented for users in docs/terminal-chat.md, "Scripts: --json"):
 *   start       { version, chatId, model?, agent, cwd }
 *   text        { text }                        a streamed chunk of the answer
 *   message     { text, parentToolCallId? }     a whole assistant message (after its last chunk)
 *   reasoning   { text }                        a streamed chunk of the model's reasoning
 *   toolCall    { id, name, server, summary?, arguments, status: run|approved|rejected, reason?, message?, parentToolCallId? }
 *   toolResult  { id, name, server, error, output, totalTimeMs, fileChange?, parentToolCallId? }
 *   subagent    { toolCallId, chatId, agent, activity?, model, step, maxSteps? }
 *   question    { question, options, answer? , cancelled? }   (only when stdin is a terminal)
 *   usage       { contextTokens, contextLimit?, inputTokens, outputTokens, cost?, chatCost? }
 *   progress    { text }                        waits worth knowing of (retries, MCP servers starting)
 *   notice      { text, level?, internal? }     patchbay speaking (a skipped context, a config problem)
 *   hook        { name, status, error? }
 *   title       { title }
 *   error       { message, parentToolCallId? }  why the turn (or the subagent) failed, or the client could not go on
 *   done        { stopReason, chatId, exitCode, usage?, answer?, unasked? }
 */
import { createInterface } from 'node:readline/promises';
import { askOn, askQuestionOn, type Question, type QuestionAnswer } from './chat-ask.js';
import { ServerProcess } from './chat-client.js';
import type { ChatFlags } from './chat.js';
import { mentionsToContexts } from './chat-mentions.js';
import { matchModel } from './chat-model.js';
import { Renderer, type ToolCallRun, type Usage } from './chat-render.js';
import { startIn } from './chat-resume.js';
import { watchToolServers } from './chat-servers.js';
import { ChatSession, EXIT_UNASKED, unaskedMessage, type ApprovalAnswer, type Approver, type TurnOutcome, type TurnView } from './chat-session.js';
import { SubagentCalls, type SubagentCall } from './chat-subagents.js';
import { Term } from './chat-term.js';
import { askWorkspaceTrust } from './chat-trust.js';
import type { ChatContent, Role } from '../protocol/eca/content.js';
import type { ShowMessage } from '../protocol/eca/lifecycle.js';
import { WAITING_APPROVAL_TEXT } from '../server/eca/eca-events.js';

/** The `version` in `start`: raised only when a field changes meaning or goes away. */
export const JSON_EVENTS_VERSION = 1;

export type JsonEvent = { type: string } & Record<string, unknown>;

type Content<T extends ChatContent['type']> = Extract<ChatContent, { type: T }>;
type ToolCallContent = Content<'toolCallRun' | 'toolCallRunning' | 'toolCalled' | 'toolCallRejected'>;

/** The turn's usage for `done`: the step counts summed, the context and the chat's cost as last reported. */
interface TurnUsage {
  contextTokens: number;
  contextLimit?: number;
  inputTokens: number;
  outputTokens: number;
  cost?: number;
  chatCost?: number;
}

/** ECA's reject reasons (`toolCallRejected.reason`) as the JSON says them. */
function rejectReason(reason: string): string {
  switch (reason) {
    case 'userConfigDeny':
    case 'user-config':
      return 'config';
    case 'hookRejected':
      return 'hook';
    case 'userPromptStop':
      return 'stopped';
    default:
      return 'user';
  }
}

/** Whether a content ends the assistant message being streamed (reports and reasoning text within it do not). */
function endsMessage(c: ChatContent): boolean {
  if (c.type === 'progress') return c.state === 'finished';
  return c.type !== 'usage' && c.type !== 'reasonText' && c.type !== 'metadata' && c.type !== 'hookActionStarted';
}

/** ECA calls patchbay's own tools the server `eca` (server/eca/eca-events.ts): here they are patchbay's. */
function serverName(server: string | undefined): string {
  return !server || server === 'eca' ? 'patchbay' : server;
}

function outputText(c: Content<'toolCalled'>): string {
  return c.outputs.map((o) => (o.type === 'text' ? o.text : `[image ${o.mimeType}]`)).join('\n');
}

function cost(s: string | undefined): number | undefined {
  const n = s === undefined ? NaN : Number(s);
  return Number.isFinite(n) ? n : undefined;
}

const PERCENT = /^.*?: (\d{1,3})% /;

/** A turn's contents as JSON events (see the header); `done` is the caller's, once it knows the exit code. */
export class JsonView implements TurnView {
  /** How the turn ended, as the server said (`stopNote`). */
  stopReason: string | undefined;
  /** The last whole assistant message of our chat. */
  answer: string | undefined;
  private usage: TurnUsage | undefined;
  private readonly subagents = new SubagentCalls();
  /** Assistant text not yet said as a `message`, by chat ('' is ours). */
  private readonly pending = new Map<string, string>();
  /** What was said of each tool call (`run`, `approved`, `rejected`), by id. */
  private readonly said = new Map<string, string>();
  /** Calls waiting for approval: the `parentToolCallId` of a subagent's. */
  private readonly asking = new Map<string, string | undefined>();
  private readonly unaskedIds = new Set<string>();
  private lastWait: string | undefined;
  private lastStep: number | undefined;

  constructor(
    private readonly emit: (e: JsonEvent) => void,
    private readonly opts: { verbose: boolean; messagesShown: ReadonlySet<string> },
  ) {}

  content(role: Role, c: ChatContent): string | undefined {
    if (c.type === 'text' && role === 'assistant') {
      this.pending.set('', (this.pending.get('') ?? '') + c.text);
      this.emit({ type: 'text', text: c.text });
      return;
    }
    // Anything else that happens in the chat ends the run of text: that message is whole.
    if (endsMessage(c)) this.flush('');
    switch (c.type) {
      case 'text': {
        if (role !== 'system') return; // 'user': the echo of the prompt
        const text = c.text.replace(/^\n+/, '').replace(/\s+$/, '');
        if (!text || text.split('\n').every((l) => this.opts.messagesShown.has(l))) return;
        if (c.error) {
          this.emit({ type: 'error', message: text });
          return text;
        }
        if (c.internal && !this.opts.verbose) return;
        this.emit({ type: 'notice', text, ...(c.internal ? { internal: true } : {}) });
        return;
      }
      case 'url':
        this.emit({ type: 'notice', text: `${c.title}: ${c.url}` });
        return;
      case 'metadata':
        if (c.title) this.emit({ type: 'title', title: c.title });
        return;
      case 'progress':
        if (c.state === 'running') this.progress(c.text);
        return;
      case 'usage':
        this.onUsage(c);
        return;
      case 'reasonText':
        this.emit({ type: 'reasoning', text: c.text });
        return;
      case 'hookActionFinished':
        this.emit({ type: 'hook', name: c.name, status: c.status, ...(c.status !== 0 && c.error ? { error: c.error } : {}) });
        return;
      case 'toolCallRun':
      case 'toolCallRunning':
      case 'toolCalled':
      case 'toolCallRejected':
        this.toolCall(c);
        return;
      default:
        return;
    }
  }

  subagentContent(chatId: string, role: Role, c: ChatContent): void {
    const sub = this.subagents.of(chatId);
    if (!sub) return;
    const parent = { parentToolCallId: sub.toolCallId };
    if (c.type === 'text' && role === 'assistant') {
      // Only whole messages: the chunks of the subagent's text would mix with our answer's.
      this.pending.set(chatId, (this.pending.get(chatId) ?? '') + c.text);
      return;
    }
    if (endsMessage(c)) this.flush(chatId, sub);
    switch (c.type) {
      case 'text':
        if (role === 'system' && c.error) this.emit({ type: 'error', message: c.text.trim(), ...parent });
        return;
      case 'toolCallRun':
      case 'toolCalled':
      case 'toolCallRejected':
        this.toolCall(c, sub);
        return;
      default:
        return;
    }
  }

  /** A tool call moved on; `sub`: the subagent whose call it is. */
  private toolCall(c: ToolCallContent, sub?: SubagentCall): void {
    const parent = sub ? { parentToolCallId: sub.toolCallId } : {};
    const head = { id: c.id, name: c.name, server: serverName(c.server), ...(c.summary ? { summary: c.summary } : {}), arguments: c.arguments };
    const say = (status: string, more: Record<string, unknown> = {}) => {
      if (this.said.get(c.id) === status) return;
      this.said.set(c.id, status);
      this.emit({ type: 'toolCall', ...head, status, ...more, ...parent });
    };
    switch (c.type) {
      case 'toolCallRun':
        // One that needs approval is said once decided (`decided`).
        if (c.manualApproval) this.asking.set(c.id, sub?.toolCallId);
        else say('run');
        if (!sub) this.subagent(c);
        return;
      case 'toolCallRunning':
        if (!sub) this.subagent(c);
        return;
      case 'toolCalled': {
        const d = c.details;
        this.emit({
          type: 'toolResult',
          id: c.id,
          name: c.name,
          server: serverName(c.server),
          error: c.error,
          output: outputText(c),
          totalTimeMs: Math.round(c.totalTimeMs),
          ...(d?.type === 'fileChange' ? { fileChange: { path: d.path, linesAdded: d.linesAdded, linesRemoved: d.linesRemoved, diff: d.diff } } : {}),
          ...parent,
        });
        if (!sub) this.subagents.finished(c.id);
        return;
      }
      case 'toolCallRejected':
        if (!sub) this.subagents.finished(c.id);
        if (this.unaskedIds.has(c.id)) say('rejected', { reason: 'unasked', message: unaskedMessage(c.name) });
        else say('rejected', { reason: rejectReason(c.reason) });
        return;
    }
  }

  /** A `spawn_agent` call of ours names its subagent, or the subagent took another step. */
  private subagent(c: ToolCallContent): void {
    if (c.type !== 'toolCallRun' && c.type !== 'toolCallRunning') return;
    const seen = this.subagents.note(c);
    if (!seen || (!seen.fresh && !seen.stepped)) return;
    const s = seen.sub;
    this.emit({
      type: 'subagent',
      toolCallId: s.toolCallId,
      chatId: s.chatId,
      agent: s.agent,
      ...(s.activity ? { activity: s.activity } : {}),
      model: s.model,
      step: s.step,
      ...(s.maxSteps !== undefined ? { maxSteps: s.maxSteps } : {}),
    });
  }

  /** This client answered a call that needed approval. */
  decided(call: ToolCallRun, answer: ApprovalAnswer): void {
    const parent = this.asking.get(call.id);
    this.asking.delete(call.id);
    const head = {
      id: call.id,
      name: call.name,
      server: serverName(call.server),
      ...(call.summary ? { summary: call.summary } : {}),
      arguments: call.arguments,
      ...(parent !== undefined ? { parentToolCallId: parent } : {}),
    };
    const status = answer === 'yes' || answer === 'always' ? 'approved' : 'rejected';
    this.said.set(call.id, status);
    if (answer === 'unasked') this.emit({ type: 'toolCall', ...head, status, reason: 'unasked', message: unaskedMessage(call.name) });
    else this.emit({ type: 'toolCall', ...head, status, ...(status === 'rejected' ? { reason: 'user' } : answer === 'always' ? { always: true } : {}) });
  }

  question(q: Question, a: QuestionAnswer): void {
    this.emit({ type: 'question', question: q.question, options: (q.options ?? []).map((o) => o.label), ...('answer' in a ? { answer: a.answer } : { cancelled: true }) });
  }

  /** `$/showMessage`, a tool server that failed: `notice` with its level. */
  notice(level: ShowMessage['type'] | 'warning', text: string): void {
    this.emit({ type: 'notice', level, text });
  }

  /** As the terminal without a status line: a retry, a wait for someone else, every tenth of a download. */
  private progress(text: string): void {
    if (text.startsWith('Retrying in ')) return this.emit({ type: 'progress', text });
    if (text.startsWith('Waiting for ') && text !== this.lastWait && text !== WAITING_APPROVAL_TEXT) {
      this.lastWait = text;
      return this.emit({ type: 'progress', text });
    }
    const m = PERCENT.exec(text);
    const step = m ? Math.floor(Number(m[1]) / 10) : undefined;
    if (step !== this.lastStep) {
      this.lastStep = step;
      if (step !== undefined) this.emit({ type: 'progress', text });
    }
  }

  private onUsage(u: Usage): void {
    const step = {
      contextTokens: u.sessionTokens,
      ...(u.limit?.context ? { contextLimit: u.limit.context } : {}),
      inputTokens: u.messageInputTokens ?? 0,
      outputTokens: u.messageOutputTokens ?? 0,
      ...(cost(u.lastMessageCost) !== undefined ? { cost: cost(u.lastMessageCost) } : {}),
      ...(cost(u.sessionCost) !== undefined ? { chatCost: cost(u.sessionCost) } : {}),
    };
    this.emit({ type: 'usage', ...step });
    const before = this.usage;
    this.usage = {
      ...step,
      inputTokens: (before?.inputTokens ?? 0) + step.inputTokens,
      outputTokens: (before?.outputTokens ?? 0) + step.outputTokens,
      ...(step.cost !== undefined || before?.cost !== undefined ? { cost: round((before?.cost ?? 0) + (step.cost ?? 0)) } : {}),
    };
  }

  /** The message whose text came so far in `chatId` ('' ours) is whole. */
  private flush(chatId: string, sub?: SubagentCall): void {
    const text = this.pending.get(chatId);
    if (text === undefined) return;
    this.pending.delete(chatId);
    if (!text.trim()) return;
    if (sub) return this.emit({ type: 'message', text, parentToolCallId: sub.toolCallId });
    this.answer = text;
    this.emit({ type: 'message', text });
  }

  stopNote(stopReason: string | undefined): void {
    this.stopReason = stopReason;
  }

  unasked(id: string): void {
    this.unaskedIds.add(id);
  }

  reset(): void {
    this.subagents.clear();
    this.pending.clear();
    this.said.clear();
    this.asking.clear();
    this.unaskedIds.clear();
    this.usage = undefined;
    this.answer = undefined;
    this.stopReason = undefined;
  }

  /** The last line. */
  done(outcome: TurnOutcome, exitCode: number, chatId: string): void {
    this.flush('');
    const stopReason = outcome.kind !== 'done' ? 'error' : (this.stopReason ?? (outcome.stopped ? 'cancelled' : outcome.errors.length ? 'error' : 'end_turn'));
    this.emit({
      type: 'done',
      stopReason,
      chatId,
      exitCode,
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.answer !== undefined ? { answer: this.answer } : {}),
      ...(outcome.kind === 'done' && outcome.unasked.length ? { unasked: outcome.unasked } : {}),
    });
  }
}

/** Costs summed in floating point: rounded to what formatCost can say (6 places). */
function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

/** The exit code of a turn's outcome (as `patchbay chat` without --json). */
export function exitCodeOf(o: TurnOutcome): number {
  if (o.kind !== 'done') return 1;
  if (o.errors.length) return 1;
  if (o.stopped) return 130;
  return o.unasked.length ? EXIT_UNASKED : 0;
}

/** A question on the terminal while stdout is the JSON's: the readline writes to stderr. */
function stderrReadline(onInterrupt: () => void) {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: !!process.stdin.isTTY && !!process.stderr.isTTY });
  rl.on('SIGINT', onInterrupt);
  return rl;
}

export async function chatJson(flags: ChatFlags): Promise<number> {
  const cwd = process.cwd();
  const emit = (e: JsonEvent) => void process.stdout.write(`${JSON.stringify(e)}\n`);
  // The reader went away (`| head -1`): nobody reads the rest; stop quietly, not with a stack trace.
  process.stdout.on('error', () => void server.kill().finally(() => process.exit(1)));
  const failed = (message: string, exitCode: number): number => {
    emit({ type: 'error', message });
    emit({ type: 'done', stopReason: 'error', chatId: session.chatId, exitCode });
    return exitCode;
  };
  await askWorkspaceTrust(cwd, flags.configFile);
  const shown = new Set<string>();
  const view = new JsonView(emit, { verbose: flags.verbose, messagesShown: shown });
  // Someone at a terminal can be asked (on stderr); a script cannot.
  const canAsk = !!process.stdin.isTTY && !!process.stderr.isTTY;
  const errTerm = new Term(process.stderr, process.stderr);
  const stderrView = new Renderer(errTerm, cwd);
  let interrupt: () => void = () => {};
  const server = new ServerProcess({
    args: [...(flags.configFile ? ['--config-file', flags.configFile] : []), ...(flags.logLevel ? ['--log-level', flags.logLevel] : flags.verbose ? ['--log-level', 'info'] : [])],
    cwd,
    verbose: flags.verbose,
    logSink: (chunk) => void process.stderr.write(chunk),
    onShowMessage: (m) => {
      shown.add(m.message);
      view.notice(m.type, m.message);
    },
    ...(canAsk
      ? {
          askQuestion: async (q, signal) => {
            const rl = stderrReadline(interrupt);
            let a: QuestionAnswer;
            try {
              a = await errTerm.asking(() => askQuestionOn(rl, q, signal, (line) => errTerm.errLine(line)));
            } finally {
              rl.close();
            }
            view.question(q, a);
            return 'answer' in a ? { answer: a.answer, cancelled: false } : { answer: null, cancelled: true };
          },
        }
      : {}),
  });
  const approver: Approver = async (call, signal) => {
    let answer: ApprovalAnswer;
    if (flags.yes) answer = 'yes';
    else if (!canAsk) answer = 'unasked';
    else {
      // The tool and its arguments (a diff) on stderr, then the question.
      stderrView.content('assistant', call);
      const rl = stderrReadline(interrupt);
      try {
        answer = await errTerm.asking(() => askOn(rl, call.name, signal));
      } finally {
        rl.close();
      }
    }
    view.decided(call, answer);
    return answer;
  };
  const session = new ChatSession(server, view, approver, { agent: flags.agent, verbose: flags.verbose, log: (l) => void process.stderr.write(`${l}\n`) });
  watchToolServers(server, (line) => view.notice('warning', line));
  server.listen();
  const serverLog = () => {
    if (flags.verbose) return; // already streamed
    const lines = server.logs.trimEnd().split('\n').slice(-40).join('\n');
    if (lines) process.stderr.write(`--- patchbay server log (last lines) ---\n${lines}\n`);
  };

  try {
    let config;
    try {
      config = await server.initialize();
    } catch (e) {
      serverLog();
      return failed(`could not start the server: ${e instanceof Error ? e.message : String(e)}`, 1);
    }
    let model: string | undefined;
    if (flags.model) {
      const models = config.models ?? [];
      model = models.length ? matchModel(flags.model, models) : flags.model;
      if (!model) return failed(`Unknown model "${flags.model}". Available: ${models.join(', ')}`, 2);
    }
    session.model = model;
    if (flags.start) {
      // The resumed chat's line goes to stderr; stdout keeps to events.
      let message = 'could not resume the chat';
      const code = await startIn({ server, session, term: errTerm, cwd, onError: (m) => (message = m) }, flags.start);
      if (code !== undefined) return failed(message, code);
    }
    // The session's: a resumed chat's own model and agent when --model/--agent did not choose them.
    const shownModel = session.model ?? config.selectModel;
    emit({ type: 'start', version: JSON_EVENTS_VERSION, chatId: session.chatId, ...(shownModel ? { model: shownModel } : {}), agent: session.agent ?? config.selectAgent ?? 'code', cwd });

    let stopping = false;
    interrupt = () => {
      if (stopping || !session.busy) {
        void server.kill().finally(() => process.exit(130));
        return;
      }
      stopping = true;
      session.stop();
      process.stderr.write('Stopping… (Ctrl-C again to quit now)\n');
    };
    process.on('SIGINT', interrupt);
    let outcome: TurnOutcome;
    try {
      outcome = await session.send(flags.prompt, mentionsToContexts(flags.prompt, cwd));
    } finally {
      process.off('SIGINT', interrupt);
    }
    if (outcome.kind === 'login')
      emit({ type: 'error', message: shown.size ? 'No model is configured (see the notice before, or `patchbay doctor`).' : 'No model is configured; see `patchbay doctor`.' });
    if (outcome.kind === 'failed') {
      if (!server.alive) serverLog();
      emit({ type: 'error', message: outcome.message });
    }
    const code = exitCodeOf(outcome);
    view.done(outcome, code, session.chatId);
    return code;
  } finally {
    await server.shutdown();
  }
}

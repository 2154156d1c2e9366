/**
 * Core's chat events as ACP `session/update`s (the ACP sibling of ../eca/eca-events.ts). One
 * translator per session: it remembers which tool calls the client has been told of, so a call
 * first seen running or done (a replay, a subagent's) is still introduced with a `tool_call`.
 */
import type { Plan, SessionUpdate, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind } from '@agentclientprotocol/sdk';
import type { ChatEvent, ToolCallEvent } from '../../core/events.js';
import type { TaskDetails, ToolOutput } from '../../shapes/tool.js';
import { diffContents } from './diff-text.js';
import { randomUUID as newId } from 'node:crypto';

/** What a tool does, for the client's icon and follow-along (ACP `ToolKind`). Unknown tools are `other`. */
const KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  grep: 'search',
  directory_tree: 'search',
  edit_file: 'edit',
  write_file: 'edit',
  move_file: 'move',
  shell_command: 'execute',
  task: 'think',
  fetch_rule: 'read',
  skill: 'read',
};

export interface TranslateOptions {
  /** A stored chat being replayed (`session/load`): user messages and errors are shown too. */
  replay: boolean;
  /** Ids of user messages the client sent itself (not echoed back live). */
  ownMessages?: ReadonlySet<string>;
  /** The client shows compactions (`clientCapabilities.session.compaction`): ACP sends them only then. */
  compaction?: boolean;
}

export class AcpTranslator {
  /** Tool calls the client knows of (their `tool_call` was sent), by the id the client sees. */
  private readonly known = new Set<string>();
  /** Calls running in a client terminal: the terminal stays in the call's content once it is done (ACP keeps its output visible). */
  private readonly terminals = new Map<string, string>();
  /**
   * ACP `messageId` for chunks whose event names no message (text stored before text had ids, a
   * user's image): the last one seen, so chunks of one message share it; a new message resets it.
   */
  private textId: string | undefined;
  private userId: string | undefined;

  /** A call started running in the client's terminal `terminalId`. */
  terminal(toolCallId: string, terminalId: string): SessionUpdate {
    this.terminals.set(toolCallId, terminalId);
    return { sessionUpdate: 'tool_call_update', toolCallId, content: [{ type: 'terminal', terminalId }] };
  }

  /**
   * The updates for one event. `childChatId`: the event is a subagent's (run for a call of the
   * session's chat): only its tool calls are shown, as calls of the session with ids prefixed by
   * the child's chat id (ACP has no nesting; the child's text comes back as the spawn call's result).
   */
  translate(e: ChatEvent, opts: TranslateOptions, childChatId?: string): SessionUpdate[] {
    if (childChatId !== undefined) return e.type === 'toolCall' ? this.toolCall(e, toolCallIdOf(e.id, childChatId)) : [];
    // Any other event ends a run of id-less text: the text after it is another message.
    if (e.type !== 'assistantText') this.textId = undefined;
    switch (e.type) {
      case 'userMessage':
        // Every chunk names its message (ACP ContentChunk `messageId`): the user message's own id, the text part's, the reasoning's.
        this.userId = e.id ?? newId();
        return opts.replay || !(e.id !== undefined && opts.ownMessages?.has(e.id)) ? [{ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: e.text }, messageId: this.userId }] : [];
      case 'userImage':
        return [{ sessionUpdate: 'user_message_chunk', content: { type: 'image', mimeType: e.mediaType, data: e.base64 }, ...(this.userId ? { messageId: this.userId } : {}) }];
      case 'assistantText':
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: e.text }, messageId: e.id ?? (this.textId ??= newId()) }];
      case 'reasoningDelta':
        return [{ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: e.text }, messageId: e.id }];
      case 'notice':
        // A command's output, a skipped context, a problem with a rule file: text for the user, in the answer's flow.
        // An internal one (the prompt cache was rebuilt) would read as part of the agent's answer: ACP has no place for it.
        if (e.internal) return [];
        return [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `${e.text}\n\n` }, messageId: newId() }];
      case 'error':
        // Live, the error is the `session/prompt` answer; a replay has no answer to carry it.
        return opts.replay ? [{ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `Error: ${e.text}\n\n` }, messageId: newId() }] : [];
      case 'compaction':
        return opts.compaction ? compactionUpdates(e) : [];
      case 'usage':
        // ACP's `size` is required: without the model's window there is nothing to show it against.
        return e.limit ? [{ sessionUpdate: 'usage_update', used: e.contextTokens, size: e.limit.context, ...(e.chatCost !== undefined ? { cost: { amount: e.chatCost, currency: 'USD' } } : {}) }] : [];
      case 'title':
        return e.title ? [{ sessionUpdate: 'session_info_update', title: e.title }] : [];
      case 'taskListCleared':
        return [planOf(e.details)];
      case 'toolCall':
        return this.toolCall(e, e.id);
      default:
        // status, flags, progress, hook actions, reasoning bounds, turnEnded: nothing ACP shows.
        return [];
    }
  }

  private toolCall(e: ToolCallEvent, id: string): SessionUpdate[] {
    if (e.state === 'preparing' || e.state === 'stopping') return [];
    const out: SessionUpdate[] = [];
    if (!this.known.has(id)) {
      this.known.add(id);
      out.push({ sessionUpdate: 'tool_call', ...toolCallFields(e, id), status: 'pending' });
      if (e.state === 'announced') return out;
    }
    switch (e.state) {
      case 'announced':
        out.push({ sessionUpdate: 'tool_call_update', ...toolCallFields(e, id), status: 'pending' });
        break;
      case 'running':
        out.push({ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'in_progress', ...(e.details ? { content: detailContents(e) } : {}) });
        break;
      case 'done': {
        const status: ToolCallStatus = e.error ? 'failed' : 'completed';
        const terminalId = this.terminals.get(id);
        const shown: ToolCallContent[] = terminalId ? [{ type: 'terminal', terminalId }] : [];
        out.push({ sessionUpdate: 'tool_call_update', toolCallId: id, status, content: [...shown, ...detailContents(e), ...e.outputs.map(outputContent)], ...locationsOf(e) });
        if (e.details?.type === 'task') out.push(planOf(e.details));
        break;
      }
      case 'rejected':
        out.push({ sessionUpdate: 'tool_call_update', toolCallId: id, status: 'failed', content: [textContent(REJECTED[e.reason])] });
        break;
    }
    return out;
  }
}

/**
 * A compaction as ACP shows it (schema v1 `CompactionUpdate`, `CompactionSummaryChunk`): in
 * progress once started; on success the summary as one chunk, then completed; else how it ended.
 */
function compactionUpdates(e: Extract<ChatEvent, { type: 'compaction' }>): SessionUpdate[] {
  const compactionId = e.id;
  switch (e.status) {
    case 'started':
      return [{ sessionUpdate: 'compaction_update', compactionId, status: 'in_progress' }];
    case 'completed':
      return [
        ...(e.summary ? [{ sessionUpdate: 'compaction_summary_chunk' as const, compactionId, content: { type: 'text' as const, text: e.summary } }] : []),
        { sessionUpdate: 'compaction_update', compactionId, status: 'completed' },
      ];
    case 'failed':
      return [{ sessionUpdate: 'compaction_update', compactionId, status: 'failed', ...(e.error ? { error: e.error } : {}) }];
    case 'cancelled':
      return [{ sessionUpdate: 'compaction_update', compactionId, status: 'cancelled' }];
  }
}

/** The id a client sees for a call: a subagent's calls are prefixed with its chat id (ids are only unique per chat). */
export function toolCallIdOf(callId: string, childChatId?: string): string {
  return childChatId === undefined ? callId : `${childChatId}/${callId}`;
}

const REJECTED: Record<Extract<ToolCallEvent, { state: 'rejected' }>['reason'], string> = {
  user: 'Rejected by the user.',
  denied: 'Not allowed by the configuration.',
  stopped: 'Stopped before it ran.',
  hook: 'Blocked by a hook.',
};

/** What a `tool_call` (or a full `tool_call_update`) says of a call: title, kind, input, where, and its diff when it has one. */
export function toolCallFields(e: ToolCallEvent, id: string): { toolCallId: string; title: string; kind: ToolKind; rawInput?: unknown; content?: ToolCallContent[]; locations?: ToolCallLocation[] } {
  const content = detailContents(e);
  return {
    toolCallId: id,
    title: e.summary ?? e.name,
    kind: e.origin === 'native' ? (KINDS[e.name] ?? 'other') : 'other',
    ...(e.arguments ? { rawInput: e.arguments } : {}),
    ...(content.length ? { content } : {}),
    ...locationsOf(e),
  };
}

function detailContents(e: ToolCallEvent): ToolCallContent[] {
  return e.details?.type === 'fileChange' ? diffContents(e.details.path, e.details.diff) : [];
}

/** The files a call touches, for the client's follow-along: its change's path, else an absolute `path` argument. */
function locationsOf(e: ToolCallEvent): { locations?: ToolCallLocation[] } {
  if (e.details?.type === 'fileChange') return { locations: [{ path: e.details.path }] };
  const path = e.arguments?.path;
  return typeof path === 'string' && path.startsWith('/') ? { locations: [{ path }] } : {};
}

function outputContent(o: ToolOutput): ToolCallContent {
  return o.type === 'text' ? textContent(o.text) : { type: 'content', content: { type: 'image', data: o.data, mimeType: o.mimeType } };
}

function textContent(text: string): ToolCallContent {
  return { type: 'content', content: { type: 'text', text } };
}

/** The chat's whole task list as ACP's plan (sent whole each time, as ACP asks). */
function planOf(d: TaskDetails): Plan & { sessionUpdate: 'plan' } {
  return {
    sessionUpdate: 'plan',
    entries: d.tasks.map((t) => ({ content: t.subject, priority: t.priority, status: t.status === 'inProgress' ? 'in_progress' : t.status === 'done' ? 'completed' : 'pending' })),
  };
}

/**
 * Core's chat events as ECA notifications (specs/eca-protocol.md "Chat Content Received",
 * "Chat Status Changed"). Pure: one event in, the notifications it becomes out, in order.
 */
import type { ChatEvent, RejectReason, ToolCallEvent } from '../../core/events.js';
import { formatCost } from '../../core/turn/turn.js';
import type { ChatContent, ContentReceived, RejectReason as RejectReasonEca, Role } from '../../protocol/eca/content.js';
import type { ChatStatus } from '../../protocol/eca/chat.js';
import { ECA } from '../../protocol/eca/methods.js';
import { toEcaToolDetails } from './eca-tool-details.js';

export type EcaNotification =
  { method: typeof ECA.chatContentReceived.method; params: ContentReceived } | { method: typeof ECA.chatStatusChanged.method; params: { chatId: string; status: ChatStatus } };

/** What ECA editors show when a turn was stopped (ECA itself sends this text). */
export const PROMPT_STOPPED_TEXT = '\nPrompt stopped';

/** Core's reject reasons under ECA's names (`toolCallRejected.reason`). */
const ECA_REJECT_REASON: Readonly<Record<RejectReason, RejectReasonEca>> = { user: 'user', denied: 'userConfigDeny', stopped: 'userPromptStop', hook: 'hookRejected' };

/**
 * ECA's colors and emoji swatches per category (shared.clj `context-category-colors`): the server
 * picks them so every client draws the same bar.
 */
const CATEGORY_LOOK: Readonly<Record<string, { color: string; emoji: string }>> = {
  'System prompt': { color: '#61afef', emoji: '🟦' },
  Rules: { color: '#c678dd', emoji: '🟪' },
  Skills: { color: '#e5c07b', emoji: '🟨' },
  'AGENTS.md': { color: '#d19a66', emoji: '🟫' },
  'Tool definitions': { color: '#e8924a', emoji: '🟧' },
  'Tool calls': { color: '#e06c75', emoji: '🟥' },
  Conversation: { color: '#98c379', emoji: '🟩' },
};

type CoreBreakdown = NonNullable<Extract<ChatEvent, { type: 'usage' }>['context']>;

function toEcaBreakdown(b: CoreBreakdown) {
  return {
    categories: b.categories.map((c) => ({ ...c, ...(CATEGORY_LOOK[c.name] ?? { color: '#abb2bf', emoji: '⬛' }) })),
    usedTokens: b.usedTokens,
    ...(b.contextLimit !== undefined ? { freeTokens: Math.max(0, b.contextLimit - b.usedTokens), contextLimit: b.contextLimit } : {}),
    freeColor: '#5c6370',
    freeEmoji: '⬜',
  };
}

export function toEcaNotifications(chatId: string, e: ChatEvent, parentChatId?: string): EcaNotification[] {
  // A subagent's contents name its parent chat (ECA lifecycle.clj `send-content!`): editors nest them under the spawn_agent call.
  const parent = parentChatId !== undefined ? { parentChatId } : {};
  const content = (role: Role, c: ChatContent): EcaNotification => ({ method: ECA.chatContentReceived.method, params: { chatId, ...parent, role, content: c } });
  const status = (s: ChatStatus): EcaNotification => ({ method: ECA.chatStatusChanged.method, params: { chatId, status: s } });
  switch (e.type) {
    case 'userMessage':
      return [content('user', { type: 'text', text: e.text, ...(e.id !== undefined ? { contentId: e.id } : {}) })];
    case 'userImage':
      return [content('user', { type: 'image', mediaType: e.mediaType, base64: e.base64 })];
    case 'assistantText':
      return [content('assistant', { type: 'text', text: e.text })];
    case 'reasoningStarted':
      return [content('assistant', { type: 'reasonStarted', id: e.id })];
    case 'reasoningDelta':
      return [content('assistant', { type: 'reasonText', id: e.id, text: e.text })];
    case 'reasoningFinished':
      return [content('assistant', { type: 'reasonFinished', id: e.id, totalTimeMs: e.totalTimeMs })];
    case 'usage':
      return [
        content('system', {
          type: 'usage',
          sessionTokens: e.contextTokens,
          messageInputTokens: e.stepInputTokens,
          messageOutputTokens: e.stepOutputTokens,
          ...(e.stepCost !== undefined ? { lastMessageCost: formatCost(e.stepCost), sessionCost: formatCost(e.chatCost ?? e.stepCost) } : {}),
          ...(e.limit ? { limit: e.limit } : {}),
          ...(e.autoCompactPercentage !== undefined ? { autoCompactPercentage: e.autoCompactPercentage } : {}),
          ...(e.context ? { contextBreakdown: toEcaBreakdown(e.context) } : {}),
        }),
      ];
    case 'status':
      return [status(e.status)];
    case 'title':
      return [content('system', { type: 'metadata', ...(e.title !== undefined ? { title: e.title } : {}) })];
    case 'notice':
      // patchbay extension: `internal` marks a note on patchbay's workings (ECA plugins ignore it; `patchbay chat` shows it with --verbose).
      return [content('system', { type: 'text', text: e.text, ...(e.internal ? { internal: true } : {}) })];
    // ECA lifecycle.clj `notify-before-hook-action!` / `notify-after-hook-action!`: system contents.
    case 'hookActionStarted':
      return [content('system', { type: 'hookActionStarted', id: e.id, name: e.name, actionType: e.actionType })];
    case 'hookActionFinished':
      return [
        content('system', {
          type: 'hookActionFinished',
          id: e.id,
          name: e.name,
          actionType: e.actionType,
          status: e.status,
          ...(e.output !== undefined ? { output: e.output } : {}),
          ...(e.error !== undefined ? { error: e.error } : {}),
          ...(e.toolCallId !== undefined ? { toolCallId: e.toolCallId } : {}),
        }),
      ];
    case 'taskListCleared':
      // ECA sends a bare `toolCalled` of its task tool here (chat.clj `prompt`); an id, empty
      // arguments and outputs make it a well-formed one (plugins key the task panel on server+name).
      return [
        content('assistant', {
          type: 'toolCalled',
          origin: 'native',
          id: `task-cleared-${Date.now().toString(36)}`,
          name: 'task',
          server: 'eca',
          arguments: {},
          error: false,
          outputs: [],
          totalTimeMs: 0,
          details: toEcaToolDetails(e.details),
        }),
      ];
    case 'flag':
      // ECA chat.clj `message-content->chat-content` sends a flag message as a `system` content.
      return [content('system', { type: 'flag', text: e.text, contentId: e.id })];
    case 'error':
      // patchbay extension: `error` marks the text that says why the turn failed (ECA plugins ignore it).
      return [content('system', { type: 'text', text: e.text, error: true })];
    case 'progress':
      return [content('system', { type: 'progress', state: 'running', text: e.text })];
    case 'turnEnded':
      return [
        // A subagent stops silently: its parent already says so (ECA agent.clj `stop-subagent-chat!`).
        ...(e.stopReason === 'cancelled' && parentChatId === undefined ? [content('system', { type: 'text', text: PROMPT_STOPPED_TEXT })] : []),
        status('idle'),
        // patchbay extension: `stopReason` says how the turn ended (ECA plugins ignore unknown
        // fields); `patchbay chat` reads it instead of matching texts.
        content('system', { type: 'progress', state: 'finished', text: '', stopReason: e.stopReason }),
      ];
    case 'compaction':
      // ECA says a compaction with the command's or the turn's own text (its compact marker on replay).
      return [];
    case 'toolCall':
      // ECA has no state for a tool that outlives its stop: said as progress until the turn ends.
      if (e.state === 'stopping') return [content('system', { type: 'progress', state: 'running', text: `Stopping ${e.name}: it has not returned yet` })];
      return [...toolCall(e).map((c) => content('assistant', c)), ...toolCallProgress(e).map((text) => content('system', { type: 'progress', state: 'running', text }))];
  }
}

/**
 * What ECA says the chat is doing as a tool call moves on (ECA chat/tool_calls.clj: the
 * `:approval-ask` and `:execution-start` transitions' `:send-progress`): eca-emacs shows it in
 * place of "Waiting model…", so it must not go stale while the user decides or the tool runs.
 */
function toolCallProgress(e: ToolCallEvent): string[] {
  // A replayed call is history: the chat is not waiting on it (ECA's replay sends no progress).
  if (e.replayed) return [];
  if (e.state === 'announced' && e.needsApproval) return [WAITING_APPROVAL_TEXT];
  if (e.state === 'running') return [e.name === 'spawn_agent' && e.server === 'patchbay' ? WAITING_SUBAGENT_TEXT : CALLING_TOOL_TEXT];
  return [];
}

/** ECA's progress texts for a tool call (tool_calls.clj). */
export const WAITING_APPROVAL_TEXT = 'Waiting for tool call approval';
const CALLING_TOOL_TEXT = 'Calling tool';
/** While a subagent works for the call (tool_calls.clj `:progress-text` of `spawn_agent`). */
export const WAITING_SUBAGENT_TEXT = 'Waiting subagent';

function toolCall(e: Exclude<ToolCallEvent, { state: 'stopping' }>): ChatContent[] {
  const known = {
    ...(e.summary !== undefined ? { summary: e.summary } : {}),
    ...(e.details ? { details: toEcaToolDetails(e.details) } : {}),
  };
  // Live, a call is prepared before its summary is known; a replayed one has it (as ECA's replay sends it).
  if (e.state === 'preparing') return [{ type: 'toolCallPrepare', origin: e.origin, id: e.id, name: e.name, server: ecaServer(e.server), argumentsText: e.argumentsDelta, ...known }];
  const base = { origin: e.origin, id: e.id, name: e.name, server: ecaServer(e.server), arguments: e.arguments ?? {}, ...known };
  switch (e.state) {
    case 'announced':
      return [{ type: 'toolCallRun', ...base, manualApproval: e.needsApproval }];
    case 'running':
      return [{ type: 'toolCallRunning', ...base }];
    case 'done': {
      // ECA's `toolCalled` outputs are text; each image follows as its own `ChatImageContent`
      // (ECA chat/tool_calls.clj `:send-toolCalled`), which the plugins render.
      const images = e.outputs.flatMap((o) => (o.type === 'image' ? [{ type: 'image' as const, mediaType: o.mimeType, base64: o.data }] : []));
      const texts = e.outputs.filter((o) => o.type === 'text');
      return [{ type: 'toolCalled', ...base, error: e.error, outputs: texts, totalTimeMs: e.totalTimeMs }, ...images];
    }
    case 'rejected':
      return [{ type: 'toolCallRejected', ...base, reason: ECA_REJECT_REASON[e.reason] }];
  }
}

/**
 * patchbay's own tools are the server `eca` in tool-call contents, as ECA's (eca `tools.clj`
 * `native-tools`); eca-emacs recognizes its task list by `server "eca"` (`eca-chat--task-tool-call-p`).
 */
function ecaServer(server: string): string {
  return server === 'patchbay' ? 'eca' : server;
}

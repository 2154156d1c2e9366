/** What core needs from storage; `store/` implements it (core does not import store). */
import type { StoredMessage } from './chat/messages.js';
import type { FileCheckpoint } from '../shapes/tool.js';

export interface ChatRecord {
  id: string;
  title?: string;
  model?: string;
  agent?: string;
  /** The model variant the chat last used or selected (e.g. reasoning effort `high`). */
  variant?: string;
  status: 'idle' | 'running';
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  /** Totals for `/costs` and usage contents. */
  usage: { inputTokens: number; outputTokens: number; cost: number; cacheReadTokens?: number; cacheWriteTokens?: number };
  /** Trust mode: tool calls that would ask run without asking (deny still denies). */
  trust: boolean;
  /** The chat whose `spawn_agent` call ran this one (a subagent's chat). */
  parentChatId?: string;
  /** The workspace folder the chat was started in (unset for chats from before it was recorded). */
  folder?: string;
  /** ECA's chat kind: `inline` for a chat made by `chat/inlinePrompt`; unset for a regular chat. */
  kind?: ChatKind;
  /** The further folders it was started or last loaded with (ACP `additionalDirectories`). */
  additionalFolders?: string[];
}

export type ChatKind = 'inline';

/** A chat's folders as stored (core/chat/chat-roots.ts): its own (`own`), or the workspace's it last ran with. */
export interface StoredRoots {
  /** Absolute, the working folder first. */
  roots: string[];
  own: boolean;
}

/** What a new chat is stored with. */
export interface NewChatRecord {
  id: string;
  title?: string;
  model?: string;
  agent?: string;
  parentChatId?: string;
  folder?: string;
  kind?: ChatKind;
  additionalFolders?: string[];
}

/** A stored message with where it sits in its chat. */
export interface StoredRow {
  seq: number;
  createdAt: number;
  message: StoredMessage;
}

export interface ToolCallRecord {
  chatId: string;
  id: string;
  name: string;
  server: string;
  args: Record<string, unknown>;
  state: 'preparing' | 'waitingApproval' | 'running' | 'called' | 'rejected';
  error?: boolean;
}

/**
 * Which tool call a checkpoint belongs to: the LLM's id and the position of the assistant message
 * that asked for it (the LLM's ids alone may repeat across steps).
 */
export interface CheckpointCall {
  id: string;
  messageSeq: number;
}

/**
 * A file change as stored: which call made it, in the order changes were made. The content
 * before is fetched apart, by `beforeHash` (`checkpointContent`), only when it is written back.
 */
export interface StoredCheckpoint extends Omit<FileCheckpoint, 'before'> {
  id: number;
  toolCallId: string;
  messageSeq: number;
  /** Null when the path did not exist before (or the content was not kept: see `skipped`). */
  beforeHash: string | null;
}

/** A rewrite of a chat (flag, fork, rollback) refused because another live server runs a turn in it. */
export class ChatRunningElsewhereError extends Error {
  constructor(
    readonly chatId: string,
    readonly pid: number,
  ) {
    super(runningElsewhereText(chatId, pid));
  }
}

export function runningElsewhereText(chatId: string, pid: number): string {
  return `Chat ${chatId} is answering a prompt in another patchbay process (pid ${pid}): let it finish there first`;
}

export interface ChatPersistence {
  createChat(rec: NewChatRecord): void;
  /** `folder` only where none is recorded; `additionalFolders` replaces the list. Does not touch `updatedAt`. */
  recordFolders?(id: string, f: { folder?: string; additionalFolders?: string[] }): void;
  getChat(id: string): ChatRecord | undefined;
  /** The chat's folders (./chat/chat-roots.ts); undefined: none recorded (a chat from before they were). */
  chatRoots?(id: string): StoredRoots | undefined;
  /** Records them, replacing what was; a chat that is not stored is left alone. */
  recordRoots?(id: string, roots: StoredRoots): void;
  /** `withEmpty: false` leaves out chats with no message yet (an ACP session never prompted). */
  listChats(opts: { limit?: number; sortBy?: 'updatedAt' | 'createdAt'; folder?: string; withEmpty?: boolean }): ChatRecord[];
  /** `variant: null` clears it. */
  updateChat(id: string, patch: Partial<Pick<ChatRecord, 'title' | 'model' | 'agent' | 'status' | 'usage' | 'trust'>> & { variant?: string | null }): void;
  deleteChat(id: string): void;
  /**
   * Commits one message (a tool message with its call's final state row, atomically); returns
   * its position in the chat (for `replaceMessage`).
   */
  appendMessage(chatId: string, message: StoredMessage, toolCall?: ToolCallRecord): number;
  /** Rewrites a message already committed (a user message gaining its rendered contexts). */
  replaceMessage(chatId: string, seq: number, message: StoredMessage): void;
  clearMessages(chatId: string): void;
  messages(chatId: string): StoredMessage[];
  /** The same messages with their position and commit time (`chat/history` cursors are made from these). */
  messageRows(chatId: string): StoredRow[];
  /**
   * A new chat holding a copy of `from`'s messages up to and including position `uptoSeq`
   * (`chat/fork`, and an inline chat's copy of its source), created atomically: a failure leaves no
   * half-copied chat. Throws ChatRunningElsewhereError, unless `whileRunning` (an inline chat copies
   * what its source has committed so far, as ECA does even while the source runs a prompt).
   */
  forkChat(from: string, to: NewChatRecord, uptoSeq: number, opts?: { whileRunning?: boolean }): void;
  /**
   * Puts a message right after position `afterSeq` (a flag, `chat/addFlag`): the later messages
   * move one position on, in one transaction. Returns the new message's position. Throws
   * ChatRunningElsewhereError.
   */
  insertMessageAfter(chatId: string, afterSeq: number, message: StoredMessage): number;
  /** Removes the message at position `seq` (a flag, `chat/removeFlag`); later positions stay as they are. */
  deleteMessage(chatId: string, seq: number): void;
  saveToolCall(rec: ToolCallRecord): void;
  /**
   * Keeps one file change a tool call made (`chat/rollback` undoes it). Its content before is kept
   * once per distinct content; past the chat's limit it is recorded as skipped, with the reason.
   */
  addFileCheckpoint(chatId: string, call: CheckpointCall, change: FileCheckpoint): void;
  /**
   * The changes of the calls asked for from position `fromSeq` on, and of `calls`, oldest first,
   * without their contents.
   */
  fileCheckpoints(chatId: string, fromSeq: number, calls?: CheckpointCall[]): StoredCheckpoint[];
  /** A checkpoint's content before (StoredCheckpoint.beforeHash); undefined when not kept. */
  checkpointContent(hash: string): Buffer | undefined;
  /** Forgets changes already undone (by their ids). Throws ChatRunningElsewhereError. */
  dropFileCheckpoints(chatId: string, ids: number[]): void;
  /**
   * `chat/rollback`: removes the messages from position `fromSeq` on, with the tool-call rows and
   * checkpoints of the calls they asked for, and the checkpoints `dropCheckpoints`, in one
   * transaction. Throws ChatRunningElsewhereError (nothing changed).
   */
  truncateMessages(chatId: string, fromSeq: number, dropCheckpoints?: number[]): void;
  /** The pid of another live server running a turn in the chat, if one is. */
  runningElsewhere(chatId: string): number | undefined;
  /** At start-up: chats left `running` by a killed process get an `interrupted` marker. */
  recoverInterrupted(): string[];
}

/**
 * `chat/rollback` (ECA `src/eca/features/chat.clj` `rollback-chat`): the chat goes back to before
 * a message, and/or the files its later tool calls changed go back to how they were before the
 * first of those changes (ECA `tools/filesystem.clj` `:rollback-changes`, applied newest first).
 * Unlike ECA, which writes the old content whatever the file holds now, a file whose content is
 * no longer what the last tool call left (the user edited it since) is left alone and reported.
 *
 * File work is synchronous on purpose: nothing else of the chat can run in between (a prompt
 * arriving meanwhile waits for the whole rollback, which is bounded by the checkpoint size limit).
 * Contents are read from the store one path at a time, and only the one each path gets back.
 */
import { resetWindow } from '../turn/compaction.js';
import { lstatSync, mkdirSync, readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { LiveChat } from './chat.js';
import type { ChatDeps } from '../deps.js';
import { replayEvents } from './messages.js';
import { runningElsewhereText, type CheckpointCall, type StoredCheckpoint, type StoredRow } from '../persistence.js';
import { contentHash } from '../tools/checkpoint.js';
import { errnoCode, fsErrorText } from '../../util/fs-util.js';
import { errorMessage } from '../../util/log.js';

export interface RollbackInclude {
  messages: boolean;
  tools: boolean;
}

/** A changed path the rollback did not restore, and why (shown to the user). */
export interface NotRestored {
  path: string;
  reason: string;
}

interface Reverted {
  notRestored: NotRestored[];
  /** Checkpoints undone (or found already undone): forgotten, so a second rollback does not redo them. */
  undone: number[];
}

/**
 * Undoes `changes` (oldest first, as stored) path by path, newest path first: each path gets the
 * bytes it had before its first change (deleted when it did not exist), but only when it still
 * holds what its last change left.
 */
export function revertChanges(changes: StoredCheckpoint[], content: (hash: string) => Buffer | undefined): Reverted {
  const byPath = new Map<string, StoredCheckpoint[]>();
  for (const c of changes) byPath.set(c.path, [...(byPath.get(c.path) ?? []), c]);
  const paths = [...byPath.keys()].sort((a, b) => lastId(byPath.get(b)!) - lastId(byPath.get(a)!));
  const out: Reverted = { notRestored: [], undone: [] };
  for (const path of paths) {
    const list = byPath.get(path)!;
    const reason = revertPath(path, list, content);
    if (reason) out.notRestored.push({ path, reason });
    else out.undone.push(...list.map((c) => c.id));
  }
  return out;
}

function lastId(list: StoredCheckpoint[]): number {
  return list[list.length - 1].id;
}

/** Restores one path; the reason when it was left as it is. */
function revertPath(path: string, list: StoredCheckpoint[], content: (hash: string) => Buffer | undefined): string | undefined {
  const skipped = list.find((c) => c.skipped);
  if (skipped) return `not checkpointed: ${skipped.skipped}`;
  const first = list[0];
  const last = list[list.length - 1];
  let now: string | null | 'other';
  try {
    now = currentHash(path);
  } catch (e) {
    return `could not be read: ${fsErrorText(e, path)}`;
  }
  if (now !== last.afterHash) {
    if (now === 'other') return 'it is no longer a regular file; left as it is';
    if (last.afterHash === null) return 'it was created again after the tool call removed it; left as it is';
    if (now === null) return 'it was deleted after the tool call changed it; left as it is';
    return 'it was changed after the tool call (by hand?); left as it is';
  }
  if (last.folder !== undefined && !sameFolder(path, last.folder)) return 'a folder on its path is not where it was (a symbolic link now?); left as it is';
  const before = first.beforeHash === null ? null : content(first.beforeHash);
  if (before === undefined) return 'its content before the change is missing from the store; left as it is';
  try {
    if (before === null) {
      if (now !== null) unlinkSync(path);
    } else {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, before);
    }
  } catch (e) {
    return `could not be restored: ${fsErrorText(e, path)}`;
  }
  return undefined;
}

/**
 * Whether `path`'s folder still resolves to `real`, as when the change was made. A missing folder
 * (a restore re-creates it) is judged by its nearest existing ancestor plus the missing names.
 */
function sameFolder(path: string, real: string): boolean {
  let dir = dirname(path);
  const missing: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(dir), ...missing) === real;
    } catch (e) {
      const parent = dirname(dir);
      if (errnoCode(e) !== 'ENOENT' || parent === dir) return false;
      missing.unshift(basename(dir));
      dir = parent;
    }
  }
}

/** The hash of the file's bytes; null when it does not exist; 'other' when it is no regular file (a symlink is never followed). */
function currentHash(path: string): string | null | 'other' {
  try {
    if (!lstatSync(path).isFile()) return 'other';
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return null;
    throw e;
  }
  return contentHash(readFileSync(path));
}

/**
 * The calls whose tool message is at or past `idx` while the assistant message that asked for
 * them is before it (a rollback to a tool call's result). Calls asked for past the cut are
 * found by position (the store's `fromSeq`), answered or not.
 */
function answersCut(rows: StoredRow[], idx: number): CheckpointCall[] {
  const out: CheckpointCall[] = [];
  rows.forEach((r, i) => {
    if (i < idx || r.message.role !== 'tool') return;
    const id = r.message.toolCallId;
    // The nearest asker before the answer: an id the LLM reuses names an older call further back.
    const at = rows.findLastIndex((a, j) => j < i && a.message.role === 'assistant' && a.message.parts.some((p) => p.type === 'toolCall' && p.id === id));
    if (at >= 0 && at < idx) out.push({ id, messageSeq: rows[at].seq });
  });
  return out;
}

/** How the user is told what was not restored: one line per path. */
export function notRestoredText(list: NotRestored[]): string {
  return ['Rollback left these files as they are:', ...list.map((n) => `- ${n.path}: ${n.reason}`)].join('\n');
}

export type RollbackResult = { ok: true; notRestored: NotRestored[] } | { ok: false; message: string };

/**
 * Rolls `chat` back to before `rows[idx]` (the caller checked the chat is idle and the index
 * exists). Files first, then messages, as ECA does; then, with 'messages', `cleared` and the kept
 * messages' replay, and a notice naming any file not restored, all before this returns. The
 * undone checkpoints are forgotten in the transaction that removes the messages: when it fails,
 * the files stay restored, the chat and its checkpoints stay, and the caller is told.
 */
export function rollbackChat(chat: LiveChat, deps: Pick<ChatDeps, 'store' | 'events'>, rows: StoredRow[], idx: number, include: RollbackInclude): RollbackResult {
  const { store, events } = deps;
  const fromSeq = rows[idx].seq;
  const elsewhere = store.runningElsewhere(chat.id);
  if (elsewhere !== undefined) return { ok: false, message: runningElsewhereText(chat.id, elsewhere) };
  const changes = include.tools || include.messages ? store.fileCheckpoints(chat.id, fromSeq, answersCut(rows, idx)) : [];
  let notRestored: NotRestored[] = [];
  let undone: number[] = [];
  const dropped = changes.map((c) => c.id);
  if (include.tools) {
    const reverted = revertChanges(changes, (hash) => store.checkpointContent(hash));
    notRestored = reverted.notRestored;
    undone = reverted.undone;
  }
  try {
    // With the messages go all their calls' checkpoints, restored or not.
    if (include.messages) store.truncateMessages(chat.id, fromSeq, dropped);
    else if (undone.length) store.dropFileCheckpoints(chat.id, undone);
  } catch (e) {
    const restored = undone.length ? 'the files were restored, but ' : '';
    return { ok: false, message: `Rollback of chat ${chat.id} failed: ${restored}the chat could not be changed (${errorMessage(e)}); its messages and checkpoints are kept` };
  }
  if (include.messages) {
    // The next prompt's LLM request is built from these: the removed turns must be gone from memory too.
    chat.stored.splice(0, chat.stored.length, ...store.messages(chat.id));
    resetWindow(chat);
  }
  const notice = notRestored.length ? { role: 'system' as const, kind: 'notice' as const, text: notRestoredText(notRestored) } : undefined;
  if (notice) {
    chat.stored.push(notice);
    store.appendMessage(chat.id, notice);
  }
  const announce = (): void => {
    if (include.messages) {
      events.cleared(chat.id);
      for (const e of replayEvents(chat.stored.slice(0, notice ? -1 : undefined))) events.event(chat.id, e);
    }
    if (notice) events.event(chat.id, { type: 'notice', text: notice.text });
  };
  if (events.together) events.together(announce);
  else announce();
  return { ok: true, notRestored };
}

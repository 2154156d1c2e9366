/**
 * Where each chat's task list lives between `task` calls. ECA keeps it with the chat (db.clj
 * `:task`, saved with the chat and dropped when the chat is cleared); patchbay keeps it in the
 * chat's own stored messages: every successful `task` result carries the whole list as details,
 * so the latest one is the list. Clearing, deleting or restarting then needs nothing more.
 */
import type { StoredMessage } from '../../chat/messages.js';
import type { TaskDetails } from '../../../shapes/tool.js';
import type { TaskList } from './task-list.js';

export interface TaskLists {
  get(chatId: string): TaskList | undefined;
  /** Called with the list a call leaves behind, before its result goes back. */
  set(chatId: string, list: TaskList): void;
}

/** Lists held for the life of the process (no store: unit tests, a tool used on its own). */
export function memoryTaskLists(): TaskLists {
  const lists = new Map<string, TaskList>();
  return { get: (id) => lists.get(id), set: (id, list) => void lists.set(id, list) };
}

/**
 * Lists read back from the chat's stored messages. Sound because a chat runs one tool call at a
 * time and commits each result before the next call starts (core/turn/turn.ts, core/tool-calls/tool-call.ts).
 */
export function storedTaskLists(messages: (chatId: string) => StoredMessage[]): TaskLists {
  return {
    get(chatId) {
      const stored = messages(chatId);
      let promptedSince = false;
      for (let i = stored.length - 1; i >= 0; i--) {
        const m = stored[i];
        if (m.role === 'user') promptedSince = true;
        if (m.role === 'tool' && m.origin === 'native' && m.name === 'task' && m.outcome === 'called' && !m.error && m.details?.type === 'task') {
          const list = fromDetails(m.details);
          // ECA clears a list whose tasks are all done when the next prompt starts
          // (chat.clj `prompt` → task.clj `auto-clear-completed!`).
          return promptedSince && allDone(list) ? undefined : list;
        }
      }
      return undefined;
    },
    // The result's details are what `get` reads back once the call's message is committed.
    set() {},
  };
}

/**
 * True when the chat's latest list has every task done and no prompt came since: the prompt
 * about to start clears it, and front ends are told so (ECA's chat.clj sends an empty task
 * `toolCalled` then, which is how eca-webview hides its task panel).
 */
export function clearsAtNextPrompt(stored: readonly StoredMessage[]): boolean {
  for (let i = stored.length - 1; i >= 0; i--) {
    const m = stored[i];
    if (m.role === 'user') return false;
    if (m.role === 'tool' && m.origin === 'native' && m.name === 'task' && m.outcome === 'called' && !m.error && m.details?.type === 'task') return allDone(fromDetails(m.details));
  }
  return false;
}

function allDone(list: TaskList): boolean {
  return list.tasks.length > 0 && list.tasks.every((t) => t.status === 'done');
}

function fromDetails(d: TaskDetails): TaskList {
  const tasks = d.tasks.map(({ isBlocked: _, ...t }) => t);
  return {
    nextId: d.nextId ?? Math.max(0, ...tasks.map((t) => t.id)) + 1,
    tasks,
    ...(d.activeSummary !== undefined ? { activeSummary: d.activeSummary } : {}),
  };
}

/**
 * A chat's folders (issue 30 item 2). A chat started with a `cwd` or `roots` (an ACP session's
 * `cwd` and `additionalDirectories`) has folders of its own: its relative paths, shell commands,
 * hooks, @-contexts and containment (the file tools' confinement, the approval's inside-workspace
 * check, protected paths) use them, and they are stored with it, so it keeps them across prompts
 * and restarts; a fork keeps its source's, a subagent its parent's. A chat without (ECA's) uses
 * the workspace's folders as they are at each use, so a folder change applies to it at once; the
 * store still records the ones it last ran with.
 */
import { isAbsolute, resolve } from 'node:path';
import type { LiveChat } from './chat.js';
import type { ChatDeps } from '../deps.js';
import type { ChatPersistence, StoredRoots } from '../persistence.js';

/** What a prompt or a new chat may say of its folders. */
export interface RootsInput {
  cwd?: string;
  roots?: string[];
}

/**
 * The folders `input` names: `cwd` first, then `roots`, each made absolute and normal (a relative
 * one is taken in the workspace's first folder, and dropped when there is none), duplicates
 * dropped. Undefined when it names none: the chat uses the workspace's.
 */
export function namedRoots(input: RootsInput, workspace: readonly string[]): string[] | undefined {
  const out: string[] = [];
  for (const p of [input.cwd, ...(input.roots ?? [])]) {
    if (typeof p !== 'string' || !p.trim()) continue;
    const abs = isAbsolute(p) ? resolve(p) : workspace[0] ? resolve(workspace[0], p) : undefined;
    if (abs !== undefined && !out.includes(abs)) out.push(abs);
  }
  return out.length ? out : undefined;
}

/** The folders the chat uses now: its own, else the workspace's as they are. */
export function rootsOf(chat: { roots?: string[] }, workspace: () => string[]): string[] {
  return chat.roots ?? workspace();
}

/**
 * The part of a turn's deps that follows the chat's folders: `roots()` (paths, shell working
 * folder, containment, hooks, the system prompt's folders, prompt images) and the @-contexts.
 */
export function chatRootsDeps(chat: Pick<LiveChat, 'roots'>, deps: ChatDeps): Pick<ChatDeps, 'roots' | 'renderContexts'> {
  const roots = () => rootsOf(chat, () => deps.roots());
  return { roots, renderContexts: (contexts, signal) => deps.renderContexts(contexts, signal, roots()) };
}

/** A new chat's recorded folder and further folders: as given, else from its own folders, else the workspace's first. */
export function chatWhere(init: { folder?: string; additionalFolders?: string[]; roots?: string[] }, workspace: readonly string[]): { folder?: string; additionalFolders?: string[] } {
  const folder = init.folder ?? init.roots?.[0] ?? workspace[0];
  const additional = init.additionalFolders ?? init.roots?.filter((r) => r !== folder);
  return { ...(folder !== undefined ? { folder } : {}), ...(additional?.length ? { additionalFolders: additional } : {}) };
}

/** The chat's own folders as stored (undefined: it has none, or the store keeps none). */
export function storedOwnRoots(store: ChatPersistence, chatId: string): string[] | undefined {
  const r = store.chatRoots?.(chatId);
  return r?.own && r.roots.length ? r.roots : undefined;
}

/** Stores the folders the chat runs with now: its own, or the workspace's `roots` (a chat that was deleted meanwhile is left alone). */
export function recordRoots(store: ChatPersistence, chat: Pick<LiveChat, 'id' | 'roots'>, roots: string[]): void {
  const rec: StoredRoots = chat.roots ? { roots: chat.roots, own: true } : { roots, own: false };
  store.recordRoots?.(chat.id, rec);
}

/** Gives the chat `roots` as its own from now on (a prompt naming other folders); a no-op when they are its own already. */
export function adoptRoots(store: ChatPersistence, chat: Pick<LiveChat, 'id' | 'roots'>, roots: string[] | undefined): void {
  if (!roots || (chat.roots && sameList(chat.roots, roots))) return;
  chat.roots = roots;
  recordRoots(store, chat, roots);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

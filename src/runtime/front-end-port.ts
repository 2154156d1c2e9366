/**
 * The one port every front end attaches to (core/chat/port.ts does the chat events, their numbers,
 * the log, replay, pending approvals and questions): this adds what a workspace tells front ends
 * outside any chat, the notices the WorkspaceOptions callbacks carried one by one before.
 *
 * A port is made on its own (`new FrontEndPort()`, logging in memory until a store is given) and
 * handed to `Workspace.create({ port })`; a workspace made without one makes its own. The process
 * Host (runtime/host.ts) owns one for all its workspaces: each notice names its workspace.
 */
import { ChatPort, NO_CAPABILITIES, type ChatPortOptions, type FrontEndCapabilities, type PortFrontEnd, type PortNotice, type SeqEvent } from '../core/chat/port.js';
import type { AskUser } from '../shapes/ask.js';
import type { ChatEvents } from '../core/events.js';
import type { ToolServerStatus } from '../shapes/peer.js';
import type { MemoryIndexReport } from './memory.js';
import type { StartupTask, Workspace } from './workspace.js';

/** What a workspace tells its front ends outside any chat. */
export type WorkspaceNotice =
  /** A tool server (MCP server, language server, gateway provider) changed status or tools. */
  | { type: 'toolServer'; workspace: Workspace; status: ToolServerStatus }
  /** A tool server is no longer configured (its entry was removed) and has stopped. */
  | { type: 'toolServerRemoved'; workspace: Workspace; name: string }
  /** Models changed after start (a trusted workspace's providers, an edited config file). */
  | { type: 'modelsChanged'; workspace: Workspace }
  /** A start-up task began or ended (each `started` gets one `finished`). */
  | { type: 'task'; workspace: Workspace; task: StartupTask }
  /** A provider's login changed; `models`: they were re-resolved. */
  | { type: 'providerChanged'; workspace: Workspace; provider: string; models: boolean }
  /** Something to tell the user outside any chat (a browser login that failed). */
  | { type: 'notice'; workspace: Workspace; level: 'info' | 'warning' | 'error'; message: string }
  /** The background jobs changed: read `workspace.jobs.list()`. */
  | { type: 'jobsChanged'; workspace: Workspace }
  /** A chat's durable-memory index changed (runtime/memory.ts). */
  | { type: 'memoryIndex'; workspace: Workspace; report: MemoryIndexReport };

export type FrontEndPortOptions = ChatPortOptions;

/** A front end of the runtime: chat events with their numbers, and the workspaces' notices. */
export type RuntimeFrontEnd = PortFrontEnd<WorkspaceNotice>;

export class FrontEndPort extends ChatPort<WorkspaceNotice> {}

/** A front end's translator in the shape of the old sink and callbacks (ChatEvents and the WorkspaceOptions `on…`). */
export interface LegacySinks {
  /** Where core's chat events go. */
  events?: ChatEvents;
  /** A tool server (MCP server, language server, gateway provider) changed status or tools. */
  onToolServer?: (status: ToolServerStatus) => void;
  /** Models changed after start (a trusted workspace's providers, an edited config file). */
  onModelsChanged?: (workspace: Workspace) => void;
  /** A tool server is no longer configured (its entry was removed) and has stopped. */
  onToolServerRemoved?: (name: string) => void;
  /** A start-up task began or ended (a front end may show them; each `started` gets one `finished`). */
  onTask?: (task: StartupTask) => void;
  /** A provider's login changed (login, logout, token refresh, a failed login); `models`: they were re-resolved. */
  onProviderChanged?: (workspace: Workspace, provider: string, models: boolean) => void;
  /** Something to tell the user outside any chat (a browser login that failed). */
  onNotice?: (type: 'info' | 'warning' | 'error', message: string) => void;
  /** The background jobs changed (one started, ended, was killed or evicted): read `jobs.list()`. */
  onJobsChanged?: () => void;
  /** A chat's durable-memory index changed (runtime/memory.ts). */
  onMemoryIndex?: (report: MemoryIndexReport) => void;
}

/** Whether any of the old sinks is given. */
export function hasLegacySinks(o: LegacySinks): boolean {
  return Boolean(o.events || o.onToolServer || o.onModelsChanged || o.onToolServerRemoved || o.onTask || o.onProviderChanged || o.onNotice || o.onJobsChanged || o.onMemoryIndex);
}

export interface SinkFrontEndOptions extends LegacySinks {
  name: string;
  capabilities: FrontEndCapabilities;
  /** The workspace whose chats and notices it takes; undefined (not made yet): any. */
  workspace: () => Workspace | undefined;
  ask?: AskUser;
  /** Another front end answered an approval or question this one may show. */
  onAnswered?: (n: Extract<PortNotice, { type: 'answered' }>) => void;
}

/**
 * A front end made of sink-shaped callbacks: each event and notice reaches the same call it
 * reached before the port, so a façade's translator (and its wire output) stays as it was.
 */
export function sinkFrontEnd(o: SinkFrontEndOptions): RuntimeFrontEnd {
  const ev = o.events;
  const mine = (w: unknown) => {
    const current = o.workspace();
    return w === undefined || current === undefined || w === current;
  };
  return {
    name: o.name,
    capabilities: o.capabilities,
    chatEvent: (x: SeqEvent) => {
      if (!ev || !mine(x.source)) return;
      const e = x.event;
      if (e.type === 'chatOpened') ev.opened(x.chatId, e.title);
      else if (e.type === 'chatCleared') ev.cleared(x.chatId);
      else if (e.type === 'chatDeleted') ev.deleted(x.chatId);
      else ev.event(x.chatId, e, x.parentChatId);
    },
    notice: (n) => {
      if (n.type === 'message') return mine(n.source) ? ev?.showMessage(n.level, n.text) : undefined;
      if (n.type === 'answered') return o.onAnswered?.(n);
      if (!mine(n.workspace)) return;
      switch (n.type) {
        case 'toolServer':
          return o.onToolServer?.(n.status);
        case 'toolServerRemoved':
          return o.onToolServerRemoved?.(n.name);
        case 'modelsChanged':
          return o.onModelsChanged?.(n.workspace);
        case 'task':
          return o.onTask?.(n.task);
        case 'providerChanged':
          return o.onProviderChanged?.(n.workspace, n.provider, n.models);
        case 'notice':
          return o.onNotice?.(n.level, n.message);
        case 'jobsChanged':
          return o.onJobsChanged?.();
        case 'memoryIndex':
          return o.onMemoryIndex?.(n.report);
      }
    },
    ...(o.ask ? { ask: o.ask } : {}),
    ...(ev?.together ? { together: (fn: () => void) => ev.together!(fn) } : {}),
  };
}

/** The old `events` and callbacks of WorkspaceOptions as one front end of the workspace's port. */
export function legacyFrontEnd(o: LegacySinks, workspace: () => Workspace | undefined): RuntimeFrontEnd {
  return sinkFrontEnd({ ...o, name: 'workspace-options', capabilities: { ...NO_CAPABILITIES, images: true }, workspace });
}

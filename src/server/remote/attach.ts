/**
 * The remote API attached to one ECA session (server.ts): off unless `remote.enabled`. While on,
 * the session's chat events are numbered and kept (./port.ts) for remote front ends, and their
 * answers go to the same ChatService the editor's do, so each sees what the other decided.
 */
import type { ChatEvent } from '../../core/events.js';
import type { Workspace } from '../../runtime/workspace.js';
import { patchbayVersion } from '../../util/version.js';
import { ChatEventLog } from './port.js';
import { RemoteServer } from './remote-server.js';

export class RemoteAttachment {
  private log: ChatEventLog | undefined;
  private server: Promise<RemoteServer | undefined> | undefined;
  private stopped = false;

  /** A chat event of the session (a no-op while the remote API is off). */
  record(chatId: string, e: ChatEvent, parentChatId?: string): void {
    this.log?.record(chatId, e, parentChatId);
  }

  forget(chatId: string): void {
    this.log?.forget(chatId);
  }

  /** Starts listening when the session's config enables it; rejects with why it could not. */
  async start(ws: Workspace): Promise<RemoteServer | undefined> {
    const config = ws.config.remote;
    if (!config?.enabled || this.stopped || this.server) return undefined;
    // Made before listening: events from now on are kept, so the first client misses none.
    const log = new ChatEventLog({ approve: (chatId, id) => ws.chats.approve(chatId, id), reject: (chatId, id) => ws.chats.reject(chatId, id) });
    this.log = log;
    this.server = RemoteServer.start({ config, home: ws.home, port: log, session: () => sessionState(ws, log) });
    const server = await this.server;
    if (this.stopped) await server?.close();
    return server;
  }

  async close(): Promise<void> {
    this.stopped = true;
    const server = await this.server?.catch(() => undefined);
    await server?.close();
    this.log = undefined;
  }
}

/** ECA handlers.clj `session-state`, the fields patchbay can fill. */
function sessionState(ws: Workspace, log: ChatEventLog): Record<string, unknown> {
  return {
    version: patchbayVersion(),
    protocolVersion: '1.0',
    workspaceFolders: ws.roots,
    models: ws.models.map((m) => ({ id: m.id, name: m.id, provider: m.provider })),
    chats: log.chatIds().flatMap((id) => {
      const c = log.chat(id);
      return c && c.parentChatId === undefined ? [{ ...c, pendingApprovalCount: log.pending(id).length }] : [];
    }),
    ...(ws.defaultModel ? { selectModel: ws.defaultModel.id } : {}),
    selectAgent: ws.config.chat.defaultAgent,
  };
}

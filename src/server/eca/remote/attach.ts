/**
 * The remote API attached to one ECA session (server.ts): off unless `remote.enabled`. Its
 * clients are front ends of the workspace's port (the Host's, once there is one): they replay and
 * follow its numbered chat events, and their answers go through the port, where the first wins.
 */
import type { Workspace } from '../../../runtime/workspace.js';
import { patchbayVersion } from '../../../util/version.js';
import type { ChatStates } from './chat-state.js';
import { RemoteServer } from './remote-server.js';

export class RemoteAttachment {
  private server: Promise<RemoteServer> | undefined;
  private stopped = false;

  /** Starts listening when the session's config enables it; rejects with why it could not. */
  async start(ws: Workspace): Promise<RemoteServer | undefined> {
    const config = ws.config.remote;
    if (!config?.enabled || this.stopped || this.server) return undefined;
    this.server = RemoteServer.start({ config, home: ws.home, port: ws.port, chat: (id) => chatOf(ws, id), session: (statuses) => sessionState(ws, statuses) });
    const server = await this.server;
    if (this.stopped) await server.close();
    return server;
  }

  async close(): Promise<void> {
    this.stopped = true;
    const server = await this.server?.catch(() => undefined);
    await server?.close();
  }
}

function chatOf(ws: Workspace, chatId: string): { title?: string } | undefined {
  const live = ws.chats.active().find((c) => c.id === chatId);
  if (live) return live.title !== undefined ? { title: live.title } : {};
  const stored = ws.store.getChat(chatId);
  return stored ? (stored.title ? { title: stored.title } : {}) : undefined;
}

/** ECA handlers.clj `session-state`, the fields patchbay can fill. */
function sessionState(ws: Workspace, statuses: ChatStates): Record<string, unknown> {
  return {
    version: patchbayVersion(),
    protocolVersion: '1.0',
    workspaceFolders: ws.roots,
    models: ws.models.map((m) => ({ id: m.id, name: m.id, provider: m.provider })),
    chats: ws.chats
      .active()
      .flatMap((c) => (ws.chats.isSubagent(c.id) ? [] : [{ ...c, status: statuses.statusOf(c.id), pendingApprovalCount: ws.port.pending(c.id).filter((p) => p.kind === 'approval').length }])),
    ...(ws.defaultModel ? { selectModel: ws.defaultModel.id } : {}),
    selectAgent: ws.config.chat.defaultAgent,
  };
}

/**
 * Which workspace each ACP session works in (issue 30, item 1). A session's folders, its `cwd`
 * and its `additionalDirectories` (session-roots.ts checks them), select a workspace: the Host
 * gives one per set of folders, shared by every session with that set and counted, so each
 * workspace has its own config layers, trust, containment and peers (MCP servers among them).
 *
 * Each open session holds one reference to the workspace of its folders:
 * - `session/new` takes it; `session/load` and `session/resume` take the workspace of the
 *   folders they give (the whole list: ACP), letting go of the one the session had;
 * - `session/close`, `session/delete` and a failed load let go of it;
 * - the last session of a workspace letting go releases it, and the Host disposes it: its MCP
 *   servers stop and its folders are no longer inside anything.
 *
 * A request that needs the store or the logins before any session is open (`session/list`,
 * `session/delete`, `logout`, `authenticate`) holds a workspace in the agent's own folder (see
 * session-roots.ts `agentFolder`) under `LOBBY`, let go of as soon as a session holds one.
 */
import type { Workspace } from '../../runtime/workspace.js';
import { workspaceFolders, type SessionRootSet } from './session-roots.js';

/** Where workspaces come from: the Host's `acquire`/`release`, with the façade's open options bound. */
export interface WorkspacePool {
  acquire(roots: string[]): Promise<Workspace>;
  /** Never rejects (a failed dispose is the pool's to report): a release need not be waited for. */
  release(ws: Workspace): Promise<void>;
}

/** The holder key of the workspace kept for requests made before any session. */
export const LOBBY = '\0lobby';

/** The workspace folders of one session: its `cwd` first (relative paths), then its other folders not inside it. */
export function sessionWorkspaceRoots(roots: SessionRootSet): string[] {
  return workspaceFolders([roots]);
}

export class SessionWorkspaces {
  /** Holder (a session id, or LOBBY) → the workspace it holds one reference to. */
  private readonly held = new Map<string, Workspace>();

  constructor(private readonly pool: WorkspacePool) {}

  /**
   * The workspace for a session's folders, held for it from now on. The one it held before is let
   * go of once the new one is held (the same workspace when the folders did not change: the count
   * goes up, then back). A session holding one lets the lobby's go. Neither release is waited for:
   * a workspace disposed meanwhile holds up no session.
   */
  async hold(sessionId: string, roots: SessionRootSet): Promise<Workspace> {
    const ws = await this.pool.acquire(sessionWorkspaceRoots(roots));
    const before = this.held.get(sessionId);
    this.held.set(sessionId, ws);
    if (before) void this.pool.release(before);
    if (sessionId !== LOBBY) void this.drop(LOBBY);
    return ws;
  }

  /** The workspace any open session holds, else the lobby's (made in `folder` when there is none yet). */
  async any(folder: () => string): Promise<Workspace> {
    for (const [holder, ws] of this.held) if (holder !== LOBBY) return ws;
    const lobby = this.held.get(LOBBY);
    if (lobby) return lobby;
    const ws = await this.pool.acquire([folder()]);
    // A session may have taken one meanwhile: the lobby is then not needed.
    if (this.held.has(LOBBY) || [...this.held.keys()].some((h) => h !== LOBBY)) {
      await this.pool.release(ws);
      return this.any(folder);
    }
    this.held.set(LOBBY, ws);
    return ws;
  }

  /** The workspace a session holds. */
  of(sessionId: string): Workspace | undefined {
    return this.held.get(sessionId);
  }

  /** Every workspace held now, each once. */
  workspaces(): Workspace[] {
    return [...new Set(this.held.values())];
  }

  /** The sessions holding `ws`. */
  holders(ws: Workspace): string[] {
    return [...this.held].flatMap(([holder, w]) => (w === ws && holder !== LOBBY ? [holder] : []));
  }

  /**
   * The session closed, was deleted or failed to load: its reference is let go of at once (the
   * workspace goes with the last); resolves once the release is done (true: it held one).
   */
  async drop(sessionId: string): Promise<boolean> {
    const ws = this.held.get(sessionId);
    if (!ws) return false;
    this.held.delete(sessionId);
    await this.pool.release(ws);
    return true;
  }
}

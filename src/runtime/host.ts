/**
 * The process-level host: what one patchbay process has once (./host-core.ts: the store with its
 * instance lease, logging, the job reaper, the environment children get, the shared listeners),
 * and the workspaces it holds. Workspaces are keyed by their set of root folders (in any order):
 * `acquire` shares one and counts its users, `release` of the last disposes it. A workspace's key
 * follows its folders when they change (`Workspace.changeRoots`).
 */
import { resolve } from 'node:path';
import { errorMessage, logger } from '../util/log.js';
import { HostCore, type HostOptions } from './host-core.js';
import { Workspace, type WorkspaceOptions } from './workspace.js';

export type { HostOptions } from './host-core.js';

const log = logger('host');

/** What a workspace is opened with beyond its folders (the host gives the environment, config file and log level). */
export type WorkspaceOpenOptions = Omit<WorkspaceOptions, 'roots' | 'env' | 'host' | 'configFile' | 'logLevel'>;

interface Entry {
  /** The roots' key while the workspace is being made; then its live roots' are used. */
  key: string;
  made: Promise<Workspace>;
  ws?: Workspace;
  refs: number;
}

/** The order-insensitive key of a set of folders (resolved, duplicates dropped). */
export function rootsKey(roots: readonly string[]): string {
  return [...new Set(roots.map((r) => resolve(r)))].sort().join('\u0000');
}

export class Host extends HostCore {
  private readonly entries: Entry[] = [];
  /** Workspaces released and still stopping: shutdown waits for them, a forced close reaches them, and the same folders reopen only once they have stopped. */
  private readonly stopping = new Map<Workspace, Promise<void>>();
  private disposing: Promise<void> | undefined;

  static open(opts: HostOptions): Host {
    return new Host(opts);
  }

  /**
   * The workspace for this set of folders (in any order): the open one, or a new one. Each call
   * is one reference, given back with `release`.
   */
  acquire(roots: string[], opts: WorkspaceOpenOptions): Promise<Workspace> {
    if (this.disposing) return Promise.reject(new Error('the host is shutting down'));
    const key = rootsKey(roots);
    const found = this.entries.find((e) => this.keyOf(e) === key);
    if (found) {
      found.refs++;
      return found.made;
    }
    const entry: Entry = { key, refs: 1, made: Promise.resolve(undefined as unknown as Workspace) };
    // The same folders released a moment ago: their MCP servers, watchers and gateway binding go first.
    const prior = [...this.stopping].find(([w]) => rootsKey(w.roots) === key)?.[1] ?? Promise.resolve();
    entry.made = prior
      .then(() => Workspace.create({ ...opts, roots, env: this.env, configFile: this.configFile, host: this }))
      .then((ws) => {
        entry.ws = ws;
        return ws;
      });
    this.entries.push(entry);
    entry.made.catch(() => this.drop(entry));
    return entry.made;
  }

  /** Gives back one reference; the last one disposes the workspace (its peers and MCP servers stop). */
  async release(ws: Workspace): Promise<void> {
    const entry = this.entries.find((e) => e.ws === ws);
    if (!entry || --entry.refs > 0) return;
    this.drop(entry);
    const stopped = ws
      .dispose()
      .catch((e: unknown) => log.error(`stopping a workspace: ${errorMessage(e)}`))
      .finally(() => this.stopping.delete(ws));
    this.stopping.set(ws, stopped);
    await stopped;
  }

  /** The open workspaces. */
  workspaces(): readonly Workspace[] {
    return this.entries.flatMap((e) => (e.ws ? [e.ws] : []));
  }

  /** The workspace open for exactly this set of folders (in any order), if one is. */
  find(roots: readonly string[]): Workspace | undefined {
    const key = rootsKey(roots);
    return this.entries.find((e) => e.ws && this.keyOf(e) === key)?.ws;
  }

  override forget(ws: object): void {
    const entry = this.entries.find((e) => e.ws === ws);
    if (entry) this.drop(entry);
  }

  /** Every workspace stops, then the shared listeners, the reaper and the store. Safe to call more than once. */
  override dispose(): Promise<void> {
    this.disposing ??= (async () => {
      // Each entry stays until its workspace has stopped (Workspace.dispose → forget): a forced close meanwhile still reaches it.
      const entries = [...this.entries];
      await Promise.all([...entries.map((e) => e.made.then((ws) => ws.dispose()).catch((err: unknown) => log.error(`stopping a workspace: ${errorMessage(err)}`))), ...this.stopping.values()]);
      await super.dispose();
    })();
    return this.disposing;
  }

  /**
   * Shutdown ran past its deadline (the front end is gone and the process is about to end): every
   * workspace stops by force, then every process patchbay started is killed and the store closed.
   */
  override forceClose(): void {
    for (const ws of [...this.workspaces(), ...this.stopping.keys()]) {
      try {
        ws.forceClose();
      } catch (e) {
        log.warn(errorMessage(e));
      }
    }
    super.forceClose();
  }

  private keyOf(e: Entry): string {
    return e.ws ? rootsKey(e.ws.roots) : e.key;
  }

  private drop(entry: Entry): void {
    const i = this.entries.indexOf(entry);
    if (i >= 0) this.entries.splice(i, 1);
  }
}

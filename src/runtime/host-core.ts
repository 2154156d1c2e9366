/**
 * What a process has once, whatever workspaces it opens (./host.ts adds the workspaces): the
 * store (opened once, crash recovery once, chats owned by this instance's lease:
 * store/instances.ts), logging, the job reaper, the environment children get (a copy: nothing
 * writes `process.env`), and the listeners peers share (the provider gateway, the OpenCtx host:
 * ./host-shared.ts). A workspace made without a host (tests, `patchbay doctor`) gets one of these
 * of its own.
 */
import { join } from 'node:path';
import type { LogLevel } from '../util/log.js';
import { errorMessage, logToFile, logger, setLogLevel } from '../util/log.js';
import { patchbayHome } from '../util/locations.js';
import { ensurePrivateDir } from '../util/private-dir.js';
import { SqliteStore } from '../store/sqlite.js';
import { JobReaper } from '../core/jobs/reaper.js';
import { killDescendantsNow } from '../util/process-tree.js';
import { ReaperShare } from './host-reaper.js';
import { SharedResources } from './host-shared.js';

const log = logger('host');

export interface HostOptions {
  /** The environment the host starts from (copied: the host's own changes never reach it). */
  env: NodeJS.ProcessEnv;
  /** `--config-file`: every workspace's user config file. */
  configFile?: string;
  /** `--log-level`: wins over every workspace config's `logLevel`. */
  logLevel?: LogLevel;
}

/** What a workspace asks of its host (the Workspace calls nothing else on it). */
export class HostCore {
  readonly home: string;
  /** The environment every process patchbay starts gets (MCP servers, shell commands, hooks): a copy of the options' env. */
  readonly env: NodeJS.ProcessEnv;
  readonly store: SqliteStore;
  readonly configFile: string | undefined;
  /** Listeners and other things the workspaces of this host share (the gateway, the OpenCtx host). */
  readonly shared = new SharedResources();
  private readonly reaper: JobReaper;
  private readonly logLevel: LogLevel | undefined;
  private reaperViews = 0;
  private closed = false;

  static openCore(opts: HostOptions): HostCore {
    return new HostCore(opts);
  }

  protected constructor(opts: HostOptions) {
    this.env = { ...opts.env };
    this.configFile = opts.configFile;
    this.logLevel = opts.logLevel;
    if (opts.logLevel) setLogLevel(opts.logLevel);
    this.home = patchbayHome(this.env);
    ensurePrivateDir(this.home);
    logToFile(join(this.home, 'logs', 'server.log'));
    this.store = SqliteStore.open(this.home);
    const recovered = this.store.recoverInterrupted();
    if (recovered.length) log.info(`marked ${recovered.length} interrupted chat(s): ${recovered.join(', ')}`);
    // Jobs run detached: if this process is SIGKILLed, the reaper still stops them.
    this.reaper = new JobReaper(join(this.home, 'jobs'));
  }

  /** This process's lease id in the store (the owner its running chats name). */
  get instanceId(): string {
    return this.store.lease.id;
  }

  /** A workspace config's `logLevel` applies unless the host was given one (`--log-level`). */
  configLogLevel(level: LogLevel): void {
    if (!this.logLevel) setLogLevel(level);
  }

  /** Sets variables in the environment children get from now on (the gateway's address and token). */
  setEnv(vars: Record<string, string | undefined>): void {
    for (const [k, v] of Object.entries(vars)) {
      if (v === undefined) delete this.env[k];
      else this.env[k] = v;
    }
  }

  /** The job reaper as one workspace's job registry sees it: its own job ids, its own close. */
  reaperFor(): ReaperShare {
    return new ReaperShare(this.reaper, `w${++this.reaperViews}:`);
  }

  /** A workspace that stopped on its own (its dispose) is no longer one of the host's. */
  forget(_ws: object): void {}

  /** The shared listeners, the reaper and the store stop. */
  async dispose(): Promise<void> {
    await this.shared.dispose();
    this.close();
  }

  /** The process is about to end: every process patchbay started is killed and the store closed. */
  forceClose(): void {
    this.shared.forceClose();
    // The reaper has just been sent its EOF: killed now, it could not stop what escaped us.
    killDescendantsNow([this.reaper.pid]);
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.reaper.close();
    try {
      this.store.close();
    } catch (e) {
      log.debug(`closing the store: ${errorMessage(e)}`);
    }
  }
}

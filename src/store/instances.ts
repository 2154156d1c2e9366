/**
 * Instance leases: which running patchbay owns a chat's turn. Every store connection (one per
 * Host, so one per process in production; more in tests) registers an instance with its pid and
 * renews it on a heartbeat. A chat marked `running` names its owner instance; it is left alone
 * while that lease is live (its row is there, its pid alive, its heartbeat recent) and counts as
 * interrupted once the lease is gone or expired. Two instances in one process (two hosts, or a
 * test's two workspaces) each have their own lease, so neither takes the other's running chats
 * for its own leftovers, as a pid could not tell them apart.
 */
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { isAlive } from '../util/pid.js';
import { errorMessage, logger } from '../util/log.js';

const log = logger('store');

export const INSTANCES_SCHEMA = `
CREATE TABLE IF NOT EXISTS instances (
  id TEXT PRIMARY KEY,
  pid INTEGER NOT NULL,
  started INTEGER NOT NULL,
  -- renewed every HEARTBEAT_MS; a lease older than LEASE_EXPIRY_MS is gone
  heartbeat INTEGER NOT NULL
);
`;

/** How often a live instance renews its lease. */
export const HEARTBEAT_MS = 10_000;
/**
 * A lease not renewed for this long is gone even if a process with its pid runs (the pid was
 * reused, or the process hangs). Generous: a laptop waking from sleep renews within a tick, and
 * a busy event loop must not lose its chats to a second patchbay.
 */
export const LEASE_EXPIRY_MS = 6 * HEARTBEAT_MS;

export interface LeaseOptions {
  heartbeatMs?: number;
  expiryMs?: number;
}

export class InstanceLease {
  readonly id = randomUUID();
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  private readonly heartbeatMs: number;
  private readonly expiryMs: number;

  constructor(
    private readonly db: Database.Database,
    opts: LeaseOptions = {},
  ) {
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.expiryMs = opts.expiryMs ?? LEASE_EXPIRY_MS;
  }

  /** Takes the lease (and forgets leases that are gone), then renews it on a timer that keeps no process alive. */
  start(): void {
    const now = Date.now();
    const stale = this.db.prepare('SELECT id, pid, heartbeat FROM instances').all() as LeaseRow[];
    const gone = stale.filter((r) => !this.live(r, now)).map((r) => r.id);
    this.db
      .transaction(() => {
        for (const id of gone) this.db.prepare('DELETE FROM instances WHERE id = ?').run(id);
        this.db.prepare('INSERT INTO instances (id, pid, started, heartbeat) VALUES (?, ?, ?, ?)').run(this.id, process.pid, now, now);
      })
      .immediate();
    this.timer = setInterval(() => this.beat(), this.heartbeatMs);
    this.timer.unref();
  }

  /** Renews the lease (a write that fails is retried at the next beat). */
  beat(): void {
    if (this.released) return;
    try {
      // A lease another instance removed (it found ours expired after a long sleep) is taken again.
      this.db
        .prepare('INSERT INTO instances (id, pid, started, heartbeat) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET heartbeat = excluded.heartbeat')
        .run(this.id, process.pid, Date.now(), Date.now());
    } catch (e) {
      log.warn(`renewing the instance lease: ${errorMessage(e)}`);
    }
  }

  /** Gives the lease up (on close): a chat still marked running under it is interrupted for the next one. */
  release(): void {
    if (this.released) return;
    this.released = true;
    clearInterval(this.timer);
    try {
      this.db.prepare('DELETE FROM instances WHERE id = ?').run(this.id);
    } catch {
      /* the database is closing: the lease expires on its own */
    }
  }

  /** The pid of a live instance by its id; undefined when its lease is gone or expired. */
  livePid(id: string): number | undefined {
    const row = this.db.prepare('SELECT id, pid, heartbeat FROM instances WHERE id = ?').get(id) as LeaseRow | undefined;
    return row && this.live(row, Date.now()) ? row.pid : undefined;
  }

  private live(r: LeaseRow, now: number): boolean {
    if (r.id === this.id) return !this.released;
    return now - r.heartbeat <= this.expiryMs && isAlive(r.pid);
  }
}

interface LeaseRow {
  id: string;
  pid: number;
  heartbeat: number;
}

/** A `running` chat's owner as stored: the instance (this patchbay's) or, from an older patchbay, only a pid. */
export interface ChatOwner {
  owner_instance: string | null;
  owner_pid: number | null;
}

/**
 * The pid of the live patchbay (not `lease`'s own instance) running a turn in the chat; undefined
 * when none does. A chat an older patchbay marked has only a pid: live while that process is
 * (and not ours: our pid under an old row is a reused one).
 */
export function ownerElsewhere(lease: InstanceLease, row: ChatOwner): number | undefined {
  if (row.owner_instance !== null) return row.owner_instance === lease.id ? undefined : lease.livePid(row.owner_instance);
  if (row.owner_pid === null || row.owner_pid === process.pid || !isAlive(row.owner_pid)) return undefined;
  return row.owner_pid;
}

/**
 * The LSP peer's `xcache` table: the cache language servers keep through Sourcegraph's
 * `xcache/*` requests, persisted beside the chats. The runtime makes one per database
 * (`xcacheFor`) and hands it to the peer as `PeerHost.xcache` (peers do not import the store).
 */
import type Database from 'better-sqlite3';
import type { XCache } from '../shapes/xcache.js';

/** `XCache` persisted in SQLite; values are stored as JSON. */
export class SqliteXCache implements XCache {
  private readonly getStmt: Database.Statement<[string, string], { value: string | number }>;
  private readonly setStmt: Database.Statement<[string, string, string, number]>;
  private readonly clearNs: Database.Statement<[string]>;
  private readonly clearAll: Database.Statement<[]>;

  constructor(db: Database.Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS xcache (
      ns TEXT NOT NULL,
      key TEXT NOT NULL,
      value JSON NOT NULL,
      updated_at INTEGER NOT NULL,
      PRIMARY KEY (ns, key)
    )`);
    this.getStmt = db.prepare('SELECT value FROM xcache WHERE ns = ? AND key = ?');
    this.setStmt = db.prepare('INSERT INTO xcache (ns, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT(ns, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at');
    this.clearNs = db.prepare('DELETE FROM xcache WHERE ns = ?');
    this.clearAll = db.prepare('DELETE FROM xcache');
  }

  /** The stored value, or undefined when absent. */
  get(ns: string, key: string): unknown {
    const row = this.getStmt.get(ns, key);
    // A JSON column has NUMERIC affinity in SQLite: '42' comes back as the number 42.
    return row === undefined ? undefined : (JSON.parse(String(row.value)) as unknown);
  }

  set(ns: string, key: string, value: unknown): void {
    const json = JSON.stringify(value === undefined ? null : value);
    this.setStmt.run(ns, key, json, Date.now());
  }

  /** Drops one namespace, or everything (the spec lets the client clear items at any time). */
  clear(ns?: string): void {
    if (ns === undefined) this.clearAll.run();
    else this.clearNs.run(ns);
  }
}

const caches = new WeakMap<Database.Database, SqliteXCache>();

/** The one `SqliteXCache` of a database, made (and its table created) on first use. */
export function xcacheFor(db: Database.Database): SqliteXCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new SqliteXCache(db)));
  return cache;
}

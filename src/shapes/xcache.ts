/**
 * The key-value cache a language server may keep in patchbay (Sourcegraph's `xcache/get`,
 * `xcache/set`, answered by the LSP peer). The store persists it (store/xcache.ts) and the
 * runtime hands it to the peer as `PeerHost.xcache`, so the peer never touches the database.
 */
export interface XCache {
  get(ns: string, key: string): unknown;
  set(ns: string, key: string, value: unknown): void;
}

/**
 * Who may open a gateway WebSocket at all, decided on the HTTP upgrade request before any
 * WebSocket exists. Providers are local processes: browsers (which always send `Origin`) and
 * DNS-rebound pages (whose `Host` is not loopback) are refused with 403.
 */
import type { IncomingMessage } from 'node:http';

export type UpgradeVerdict = { ok: true } | { ok: false; status: 403 | 503; reason: string };

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `Host` is one of 127.0.0.1, localhost, [::1], with no port or the gateway's own port. */
export function isLoopbackHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const m = /^(\[[^\]]*\]|[^:]+)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (!m) return false;
  if (!loopbackHosts.has(m[1])) return false;
  return m[2] === undefined || Number(m[2]) === port;
}

export function checkUpgrade(req: IncomingMessage, port: number, connections: number, maxConnections: number): UpgradeVerdict {
  if (req.headers.origin !== undefined) return { ok: false, status: 403, reason: 'browser origins are not allowed' };
  if (!isLoopbackHost(req.headers.host, port)) return { ok: false, status: 403, reason: 'Host must be a loopback address' };
  if (connections >= maxConnections) return { ok: false, status: 503, reason: 'too many provider connections' };
  return { ok: true };
}

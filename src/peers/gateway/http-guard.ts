/**
 * Who may open a gateway WebSocket at all, decided on the HTTP upgrade request before any
 * WebSocket exists. Providers are local processes: browsers (which always send `Origin`) and
 * DNS-rebound pages (whose `Host` is not loopback) are refused with 403.
 */
import type { IncomingMessage } from 'node:http';
import { isLoopbackHostHeader } from '../../util/loopback.js';

export type UpgradeVerdict = { ok: true } | { ok: false; status: 403 | 503; reason: string };

export { isLoopbackHostHeader as isLoopbackHost };

export function checkUpgrade(req: IncomingMessage, port: number, connections: number, maxConnections: number): UpgradeVerdict {
  if (req.headers.origin !== undefined) return { ok: false, status: 403, reason: 'browser origins are not allowed' };
  if (!isLoopbackHostHeader(req.headers.host, port)) return { ok: false, status: 403, reason: 'Host must be a loopback address' };
  if (connections >= maxConnections) return { ok: false, status: 503, reason: 'too many provider connections' };
  return { ok: true };
}

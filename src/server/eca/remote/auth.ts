/**
 * The remote API's gate (ECA src/eca/remote/auth.clj): `Authorization: Bearer <token>`, compared in
 * constant time, and a Host header that names this machine's loopback, so a page on another site
 * whose name was pointed at 127.0.0.1 (DNS rebinding) cannot reach the API through the browser.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A token of 256 random bits (ECA generates 5 characters; patchbay's is not guessable). */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/**
 * Whether the `Authorization` header carries `token`. Both sides are hashed first, so the
 * comparison takes as long whatever the lengths and wherever they differ.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined || !header.startsWith('Bearer ')) return false;
  return timingSafeEqual(digest(header.slice('Bearer '.length)), digest(token));
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** A Host header naming loopback (with this port, or none): `127.0.0.1`, `localhost` or `[::1]`. */
export function loopbackHost(host: string | undefined, port: number): boolean {
  if (host === undefined) return false;
  const m = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (!m) return false;
  if (m[2] !== undefined && Number(m[2]) !== port) return false;
  return LOOPBACK_NAMES.has(m[1]);
}

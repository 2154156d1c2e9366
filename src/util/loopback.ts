/**
 * Shared checks for patchbay's local servers (the provider gateway, the OpenCtx host): only
 * loopback `Host` headers (DNS-rebinding defence) and constant-time secret comparison.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** Loopback host names as URL.hostname spells them. */
export const loopbackHostnames: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** `Host` is 127.0.0.1, localhost or [::1], with no port or the server's own port. */
export function isLoopbackHostHeader(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const m = /^(\[[^\]]*\]|[^:]+)(?::(\d+))?$/.exec(host.trim().toLowerCase());
  if (!m || !loopbackHostnames.has(m[1])) return false;
  return m[2] === undefined || Number(m[2]) === port;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Compares fixed-length digests, so neither the content nor the length of the secret leaks. */
export function secretsEqual(expected: string, given: unknown): boolean {
  const ok = timingSafeEqual(digest(expected), digest(typeof given === 'string' ? given : ''));
  return ok && typeof given === 'string';
}

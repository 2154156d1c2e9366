/**
 * Where a provider finds the gateway and its token, read afresh before every connection
 * attempt so a restarted gateway (new port file, new token) is picked up on reconnect.
 *
 * Token: `PATCHBAY_PROVIDER_TOKEN`, then `TAP_PROVIDER_TOKEN` (the spec's name, "Authentication"),
 * then the token file the gateway writes: `<PATCHBAY_HOME or ~/.cache/patchbay>/gateway/provider-token`.
 * URL: the `url` option, then `PATCHBAY_GATEWAY_URL`, then `ws://127.0.0.1:9400`.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const DEFAULT_GATEWAY_URL = 'ws://127.0.0.1:9400';

export type TokenSource = 'option' | 'PATCHBAY_PROVIDER_TOKEN' | 'TAP_PROVIDER_TOKEN' | 'file';

export interface DiscoveredToken {
  token: string;
  source: TokenSource;
  /** The file it came from, when `source` is `file`. */
  file?: string;
}

/** Same rule as the server's data directory (src/config/load.ts `patchbayHome`). */
export function tokenFilePath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
  const base = env.PATCHBAY_HOME ? resolve(env.PATCHBAY_HOME) : join(home, '.cache', 'patchbay');
  return join(base, 'gateway', 'provider-token');
}

export function readTokenFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined; // absent (no gateway running) or unreadable: same answer, "none yet"
  }
}

export function discoverToken(env: NodeJS.ProcessEnv = process.env, home?: string): DiscoveredToken | undefined {
  for (const name of ['PATCHBAY_PROVIDER_TOKEN', 'TAP_PROVIDER_TOKEN'] as const) {
    const v = env[name]?.trim();
    if (v) return { token: v, source: name };
  }
  const file = tokenFilePath(env, home);
  const token = readTokenFile(file);
  return token ? { token, source: 'file', file } : undefined;
}

export function discoverUrl(option: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return option || env.PATCHBAY_GATEWAY_URL?.trim() || DEFAULT_GATEWAY_URL;
}

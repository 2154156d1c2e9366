/**
 * Where a provider finds the gateway and its token, read afresh before every connection
 * attempt so a restarted gateway (new port file, new token) is picked up on reconnect.
 *
 * Token: `PATCHBAY_PROVIDER_TOKEN`, then `TAP_PROVIDER_TOKEN` (the spec's name, "Authentication"),
 * then the token file the gateway writes: `<PATCHBAY_HOME or ~/.cache/patchbay>/gateway/provider-token`.
 * URL: the `url` option, then `PATCHBAY_GATEWAY_URL`, then the address file `patchbay server`
 * writes beside the token (`<home>/gateway/address`, so a gateway on `port: 0` is found too),
 * then `ws://127.0.0.1:9400`.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ProviderEnv } from './types.js';

export const DEFAULT_GATEWAY_URL = 'ws://127.0.0.1:9400';

export type TokenSource = 'option' | 'PATCHBAY_PROVIDER_TOKEN' | 'TAP_PROVIDER_TOKEN' | 'file';

export interface DiscoveredToken {
  token: string;
  source: TokenSource;
  /** The file it came from, when `source` is `file`. */
  file?: string;
}

/** `<PATCHBAY_HOME or ~/.cache/patchbay>/gateway`: same rule as the server's data directory (src/config/load.ts `patchbayHome`). */
function gatewayDir(env: ProviderEnv, home: string = homedir()): string {
  const base = env.PATCHBAY_HOME ? resolve(env.PATCHBAY_HOME) : join(home, '.cache', 'patchbay');
  return join(base, 'gateway');
}

export function tokenFilePath(env: ProviderEnv = process.env, home?: string): string {
  return join(gatewayDir(env, home), 'provider-token');
}

export function addressFilePath(env: ProviderEnv = process.env, home?: string): string {
  return join(gatewayDir(env, home), 'address');
}

/** A one-line file's content; undefined when absent, unreadable or empty ("none yet"). */
export function readTokenFile(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function discoverToken(env: ProviderEnv = process.env, home?: string): DiscoveredToken | undefined {
  for (const name of ['PATCHBAY_PROVIDER_TOKEN', 'TAP_PROVIDER_TOKEN'] as const) {
    const v = env[name]?.trim();
    if (v) return { token: v, source: name };
  }
  const file = tokenFilePath(env, home);
  const token = readTokenFile(file);
  return token ? { token, source: 'file', file } : undefined;
}

export function discoverUrl(option: string | undefined, env: ProviderEnv = process.env, home?: string): string {
  return option || env.PATCHBAY_GATEWAY_URL?.trim() || readTokenFile(addressFilePath(env, home)) || DEFAULT_GATEWAY_URL;
}

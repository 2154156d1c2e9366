/**
 * Where a provider finds the gateway and its token, read afresh before every connection
 * attempt so a restarted gateway (new port, new token) is picked up on reconnect.
 *
 * Every running patchbay writes its own run file, `<PATCHBAY_HOME or ~/.cache/patchbay>/gateway/run/<pid>.json`
 * (address, token, workspace folders; src/protocol/gateway/run-file.ts); files of processes that
 * are gone are skipped. The gateway chosen (discoverGateway):
 *
 * - URL: the `url` option, then `PATCHBAY_GATEWAY_URL`; else the running gateway serving the
 *   `workspace` option or `PATCHBAY_WORKSPACE` (a folder it has open, or one inside it), else the
 *   newest running gateway; else (a patchbay older than run files) the address file
 *   `<home>/gateway/address`; else `ws://127.0.0.1:9400`.
 * - Token: the `token` option, then `PATCHBAY_PROVIDER_TOKEN`, then `TAP_PROVIDER_TOKEN` (the
 *   spec's name, "Authentication"); else the chosen gateway's own (its run file); else the older
 *   shared file `<home>/gateway/provider-token`.
 *
 * A token given without a URL picks the running gateway it belongs to.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { readOwnFile, readRunFile, runningGateways, type RunningGateway } from '../protocol/gateway/index.js';
import type { ProviderEnv } from './types.js';

export const DEFAULT_GATEWAY_URL = 'ws://127.0.0.1:9400';

/** `run-file`: the chosen gateway's own file; `file`: the older shared `provider-token`. */
export type TokenSource = 'option' | 'PATCHBAY_PROVIDER_TOKEN' | 'TAP_PROVIDER_TOKEN' | 'run-file' | 'file';

export interface DiscoveredToken {
  token: string;
  source: TokenSource;
  /** The file it came from, when `source` is `run-file` or `file`. */
  file?: string;
}

export type { RunningGateway };

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

/** `<home>/gateway/run`: one file per running gateway. */
export function runDirPath(env: ProviderEnv = process.env, home?: string): string {
  return join(gatewayDir(env, home), 'run');
}

/** The gateways running for this home (their process alive), newest first. */
export function listGateways(env: ProviderEnv = process.env, home?: string): RunningGateway[] {
  return runningGateways(gatewayDir(env, home));
}

/** A one-line file's content; undefined when absent, unreadable, empty ("none yet") or not this user's regular file (readOwnFile). */
export function readTokenFile(file: string): string | undefined {
  return readOwnFile(file)?.trim() || undefined;
}

/** The token discoverGateway would use with no options: the environment's, the newest running gateway's, the shared file's. */
export function discoverToken(env: ProviderEnv = process.env, home?: string): DiscoveredToken | undefined {
  const found = discoverGateway({}, env, home);
  return found.ok ? found.token : envToken(env);
}

export function discoverUrl(option: string | undefined, env: ProviderEnv = process.env, home?: string): string {
  return discoverGateway({ url: option }, env, home).url;
}

export interface DiscoverOptions {
  url?: string;
  token?: string;
  /** A folder: choose the gateway serving it (default `PATCHBAY_WORKSPACE`). */
  workspace?: string;
}

export type DiscoveredGateway =
  | { ok: true; url: string; token?: DiscoveredToken; gateway?: RunningGateway }
  /** A workspace was asked for and no running gateway serves it (yet). */
  | { ok: false; url: string; message: string };

/** A folder as compared: absolute, and through symlinks where it exists (macOS /tmp → /private/tmp). */
function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/** Whether the gateway has `folder` open, or a folder that contains it. */
export function servesWorkspace(g: Pick<RunningGateway, 'roots'>, folder: string): boolean {
  const want = canonical(folder);
  return g.roots.some((root) => {
    const r = canonical(root);
    return want === r || want.startsWith(r.endsWith(sep) ? r : r + sep);
  });
}

/** The gateway and token to use now (see the top of this file for the order). */
export function discoverGateway(opts: DiscoverOptions, env: ProviderEnv = process.env, home?: string): DiscoveredGateway {
  const explicitToken = opts.token ? { token: opts.token, source: 'option' as const } : envToken(env);
  const explicitUrl = opts.url || env.PATCHBAY_GATEWAY_URL?.trim() || undefined;
  const workspace = opts.workspace || env.PATCHBAY_WORKSPACE?.trim() || undefined;
  const running = listGateways(env, home);
  const withToken = (g: RunningGateway | undefined): DiscoveredToken | undefined => explicitToken ?? (g ? { token: g.token, source: 'run-file', file: g.file } : legacyToken(env, home));
  if (explicitUrl) {
    const g = running.find((r) => r.url === explicitUrl);
    return { ok: true, url: explicitUrl, token: withToken(g), ...(g ? { gateway: g } : {}) };
  }
  const owner = explicitToken && running.find((r) => r.token === explicitToken.token);
  if (owner) return { ok: true, url: owner.url, token: explicitToken, gateway: owner };
  if (workspace && running.length) {
    const g = running.find((r) => servesWorkspace(r, workspace));
    if (!g) {
      const list = running.map((r) => `${r.url} (${r.roots.join(', ') || 'no folders'})`).join('; ');
      return { ok: false, url: running[0].url, message: `no running patchbay gateway serves ${workspace}; running: ${list}` };
    }
    return { ok: true, url: g.url, token: withToken(g), gateway: g };
  }
  const newest = running[0];
  if (newest) return { ok: true, url: newest.url, token: withToken(newest), gateway: newest };
  return { ok: true, url: readTokenFile(addressFilePath(env, home)) || DEFAULT_GATEWAY_URL, token: withToken(undefined) };
}

function envToken(env: ProviderEnv): DiscoveredToken | undefined {
  for (const name of ['PATCHBAY_PROVIDER_TOKEN', 'TAP_PROVIDER_TOKEN'] as const) {
    const v = env[name]?.trim();
    if (v) return { token: v, source: name };
  }
  return undefined;
}

function legacyToken(env: ProviderEnv, home?: string): DiscoveredToken | undefined {
  const file = tokenFilePath(env, home);
  const token = readTokenFile(file);
  return token ? { token, source: 'file', file } : undefined;
}

/** Whether a token read from a file is still what that file holds (a gateway restarted since: not a real refusal). */
export function tokenStillPublished(t: DiscoveredToken): boolean {
  if (!t.file) return true;
  if (t.source === 'run-file') return readRunFile(t.file)?.token === t.token;
  if (t.source === 'file') return readTokenFile(t.file) === t.token;
  return true;
}

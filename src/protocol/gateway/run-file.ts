/**
 * How a provider finds the gateways running for one PATCHBAY_HOME: each gateway process writes
 * its own file, `<home>/gateway/run/<pid>.json` (directory 0700, file 0600: it holds that
 * gateway's token), and removes only its own. Several patchbays may share a home (an editor and
 * a terminal): none hides another's gateway, and a provider picks the newest or the one serving
 * its workspace. A file whose pid is gone is stale and skipped.
 *
 * The older single pair, `<home>/gateway/address` and `provider-token`, is still written (newest
 * gateway wins, handed on to the next newest when it stops) for providers that read only those.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { readRunFileAs, scanRunFiles } from '../../util/run-files.js';

export const RUN_FILE_VERSION = 1;

export const gatewayRunFileSchema = z.object({
  version: z.literal(RUN_FILE_VERSION),
  /** The patchbay process listening. */
  pid: z.number().int().positive(),
  /** When it started listening, ms since the epoch: "newest" is the largest. */
  startedAt: z.number(),
  /** `ws://127.0.0.1:<port>` */
  url: z.string().min(1),
  port: z.number().int().nonnegative(),
  /** This gateway's provider token (spec "Authentication"). */
  token: z.string().min(1),
  /** The workspace folders it serves, absolute paths. */
  roots: z.array(z.string()),
});

export type GatewayRunFile = z.infer<typeof gatewayRunFileSchema>;

/** `<gatewayDir>/run`, where `gatewayDir` is `<PATCHBAY_HOME>/gateway`. */
export function runDir(gatewayDir: string): string {
  return join(gatewayDir, 'run');
}

export { readOwnFile } from '../../util/run-files.js';

/** One file's content, or undefined when it is gone, unreadable, not this user's (readOwnFile) or not a run file. */
export function readRunFile(file: string): GatewayRunFile | undefined {
  return readRunFileAs(file, gatewayRunFileSchema);
}

export interface RunningGateway extends GatewayRunFile {
  /** The run file it was read from. */
  file: string;
}

/**
 * The gateways whose process is alive, newest first. `stale` (if given) receives the files whose
 * pid is gone (a crashed patchbay's): skipped here, removed only by a gateway starting.
 */
export function runningGateways(gatewayDir: string, stale?: (file: string) => void): RunningGateway[] {
  const found = scanRunFiles(runDir(gatewayDir), gatewayRunFileSchema);
  if (stale) for (const file of found.stale) stale(file);
  return found.live.sort((a, b) => b.startedAt - a.startedAt);
}

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
import { closeSync, constants, fstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { isAlive } from '../../util/pid.js';

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

/** A run file is a few hundred bytes: anything much bigger is not one. */
const MAX_OWN_FILE_BYTES = 64 * 1024;

/**
 * A small file's text, only when it is a regular file (not a symlink, a FIFO or a device) owned
 * by this user: what a gateway of this user wrote. Anything else is skipped (undefined): a file
 * another user put in a shared home could point a provider at their gateway (which would then
 * drive its tools, and receive a token from the environment), and a FIFO would block the read.
 */
export function readOwnFile(file: string): string | undefined {
  let fd: number;
  try {
    // No follow: a symlink fails here (ELOOP). Non-blocking: opening a FIFO does not wait for a writer.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_OWN_FILE_BYTES) return undefined;
    const uid = process.geteuid?.();
    if (uid !== undefined && st.uid !== uid) return undefined;
    return readFileSync(fd, 'utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** One file's content, or undefined when it is gone, unreadable, not this user's (readOwnFile) or not a run file. */
export function readRunFile(file: string): GatewayRunFile | undefined {
  try {
    const text = readOwnFile(file);
    if (text === undefined) return undefined;
    const parsed = gatewayRunFileSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
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
  const dir = runDir(gatewayDir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: RunningGateway[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    const run = readRunFile(file);
    if (!run) continue;
    if (!isAlive(run.pid)) {
      stale?.(file);
      continue;
    }
    out.push({ ...run, file });
  }
  return out.sort((a, b) => b.startedAt - a.startedAt);
}

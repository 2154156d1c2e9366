/**
 * Where a running gateway tells providers it is (src/protocol/gateway/run-file.ts): its own run
 * file, `<home>/gateway/run/<pid>.json`, written when it listens and removed when it stops, so a
 * second patchbay on the same home neither hides nor removes the first one's. The older shared
 * pair (`address`, `provider-token`) is written too, for providers that read only those: the
 * newest gateway's, and when that one stops, the next newest running gateway's (or none).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FILE_VERSION, runDir, runningGateways, type GatewayRunFile } from '../../protocol/gateway/index.js';
import { writePrivateFile } from '../../util/run-files.js';

/** Gateways made in this process: a second one (tests, one per home) gets its own file name. */
let instances = 0;

function readTrimmed(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export class GatewayPublication {
  readonly runFile: string;
  readonly tokenFile: string;
  readonly addressFile: string;
  private current: GatewayRunFile | undefined;

  constructor(private readonly gatewayDir: string) {
    const n = ++instances;
    this.runFile = join(runDir(gatewayDir), n === 1 ? `${process.pid}.json` : `${process.pid}-${n}.json`);
    this.tokenFile = join(gatewayDir, 'provider-token');
    this.addressFile = join(gatewayDir, 'address');
  }

  /** Listening now: the run file, then the shared pair. Files of gateways whose process is gone are removed. */
  publish(info: { url: string; port: number; token: string; roots: string[] }): void {
    // Only dead processes' files: a live gateway's file is never touched by another.
    runningGateways(this.gatewayDir, (stale) => {
      try {
        rmSync(stale, { force: true });
      } catch {
        // not ours to remove (another user's home?): providers skip it anyway
      }
    });
    this.current = { version: RUN_FILE_VERSION, pid: process.pid, startedAt: Date.now(), ...info };
    writePrivateFile(this.runFile, `${JSON.stringify(this.current, null, 2)}\n`);
    writePrivateFile(this.tokenFile, info.token);
    writePrivateFile(this.addressFile, `${info.url}\n`);
  }

  /** The workspace folders changed: providers choosing by workspace see the new ones. */
  setRoots(roots: string[]): void {
    if (!this.current) return;
    this.current = { ...this.current, roots };
    writePrivateFile(this.runFile, `${JSON.stringify(this.current, null, 2)}\n`);
  }

  /**
   * Stopped (or exiting): our run file goes; the shared pair, where it is still ours, is handed
   * to the newest gateway still running, or removed. Synchronous, so it also runs on exit.
   */
  withdraw(): void {
    const mine = this.current;
    if (!mine) return;
    this.current = undefined;
    rmSync(this.runFile, { force: true });
    const next = runningGateways(this.gatewayDir).find((g) => g.file !== this.runFile);
    if (readTrimmed(this.tokenFile) === mine.token) {
      if (next) writePrivateFile(this.tokenFile, next.token);
      else rmSync(this.tokenFile, { force: true });
    }
    if (readTrimmed(this.addressFile) === mine.url) {
      if (next) writePrivateFile(this.addressFile, `${next.url}\n`);
      else rmSync(this.addressFile, { force: true });
    }
  }
}
